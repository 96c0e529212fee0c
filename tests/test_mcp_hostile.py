"""MCP servers that misbehave: every way they fail is a ToolServerError, never a hang, a raw
SDK error or an ExceptionGroup (issue 33, finding 3)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from swarmkit import Agent, ConfigurationError, Swarm
from swarmkit.exceptions import ToolServerError
from swarmkit.mcp import MCPLimits, MCPToolSource
from swarmkit.messages import ToolMessage
from swarmkit.testing import ScriptedModel, text, tool_call

ROOT = Path(__file__).resolve().parent.parent
QUICK = MCPLimits(connect_timeout=0.5, list_timeout=0.5, call_timeout=0.5)


def _hostile(mode: str, limits: MCPLimits = QUICK, **options: object) -> MCPToolSource:
    return MCPToolSource.stdio(
        sys.executable,
        ["-m", "tests.mcp_hostile", mode],
        cwd=ROOT,
        name="hostile",
        limits=limits,
        **options,  # type: ignore[arg-type]
    )


async def test_a_server_that_never_completes_the_handshake_times_out() -> None:
    """Entering a source whose server never answers raises after connect_timeout."""
    with pytest.raises(ToolServerError, match=r"did not complete the handshake within 0\.5 s"):
        async with _hostile("silent"):
            pass


async def test_a_call_that_never_answers_is_a_tool_error_the_model_reads() -> None:
    """A call with no answer ends after call_timeout as a tool error result, and the run goes on."""
    async with _hostile("mute-call") as source:
        agent = Agent(name="a", tools=[*await source.tools()])
        model = ScriptedModel(tool_call("wait"), text("gave up"))
        result = await Swarm([agent], "a", model=model).run("go")

    assert result.final_output == "gave up"
    (answer,) = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert "no answer within 0.5 s (MCPLimits.call_timeout)" in answer.content


async def test_a_garbled_reply_is_a_tool_server_error() -> None:
    """A reply that is not JSON-RPC leaves the call unanswered: a ToolServerError, no hang."""
    async with _hostile("garbled-call") as source:
        await source.tools()
        with pytest.raises(ToolServerError, match="failed tool 'wait'"):
            await source.call("wait", {})


async def test_a_schema_too_deep_to_parse_is_a_listing_error() -> None:
    """A tool list the SDK cannot parse (a schema 100,000 deep) fails after list_timeout."""
    async with _hostile("deep-schema") as source:
        with pytest.raises(ToolServerError, match=r"did not list its tools within 0\.5 s"):
            await source.tools()


async def test_a_deep_schema_names_the_tool_and_can_be_excluded() -> None:
    """A schema nested past max_schema_depth is refused by name; exclude= leaves it out."""
    async with _hostile("deepish-schema") as source:
        with pytest.raises(ToolServerError, match=r"tool 'deep'.*max_schema_depth") as refused:
            await source.tools()
    async with _hostile("deepish-schema", exclude=["deep"]) as source:
        names = [t.name for t in await source.tools()]

    assert refused.value.tool_name == "deep"
    assert names == ["wait"]


async def test_endless_paging_stops_at_max_pages() -> None:
    """A server that always names a next page is refused after max_pages pages."""
    limits = MCPLimits(max_pages=5)
    async with _hostile("endless-pages", limits) as source:
        with pytest.raises(ToolServerError, match="more than 5 pages of tools"):
            await source.tools()


async def test_a_failed_tool_list_is_a_tool_server_error_unwrapped() -> None:
    """A JSON-RPC error for tools/list is a ToolServerError, not the SDK's MCPError, and it
    leaves `async with` as itself, not inside an ExceptionGroup."""
    with pytest.raises(ToolServerError, match="refused to list its tools: the tool index is down"):
        async with _hostile("failed-list") as source:
            await source.tools()


async def test_an_error_raised_in_the_block_leaves_it_unwrapped() -> None:
    """The caller's own exception comes out of `async with` as itself."""
    with pytest.raises(KeyError):
        async with _hostile("mute-call"):
            raise KeyError("mine")


async def test_a_huge_result_is_refused() -> None:
    """A result longer than max_result_chars is a ToolServerError, not 5 MB in the history."""
    async with _hostile("huge-result", MCPLimits(max_result_chars=1000)) as source:
        with pytest.raises(ToolServerError, match="5,000,000 characters, more than the 1,000"):
            await source.call("wait", {})


async def test_a_server_writing_bytes_that_are_not_utf8_leaves_cleanly() -> None:
    """A reply with a byte that is not UTF-8 reads as U+FFFD: the call answers, and leaving
    the source raises nothing (no UnicodeDecodeError from the connection's reader)."""
    async with _hostile("bad-utf8") as source:
        await source.tools()
        answer = await source.call("wait", {})

    assert answer == "caf\ufffd"
    assert not source.connected


def test_limits_must_be_positive() -> None:
    """A zero timeout or page cap is refused at construction."""
    with pytest.raises(ConfigurationError, match="call_timeout"):
        MCPLimits(call_timeout=0)
    with pytest.raises(ConfigurationError, match="max_pages"):
        MCPLimits(max_pages=0)
