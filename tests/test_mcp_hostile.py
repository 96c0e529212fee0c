"""MCP servers that misbehave: every way they fail is a ToolServerError, never a hang, a raw
SDK error or an ExceptionGroup (issue 33, finding 3).

The timeouts run on a FixedRuntime's clock: each test waits until the server holds the
request, then moves the clock past the limit, so no test waits real seconds for one.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from swarmkit import Agent, ConfigurationError, Swarm
from swarmkit.exceptions import ToolServerError
from swarmkit.mcp import MCPLimits, MCPToolSource
from swarmkit.messages import ToolMessage
from swarmkit.testing import FixedRuntime, ScriptedModel, text, tool_call

ROOT = Path(__file__).resolve().parent.parent


class Reports:
    """The methods of the requests the hostile server is done with (answered or held)."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.changed = asyncio.Condition()
        self.port = 0

    async def held(self, method: str | None = None) -> None:
        """Return once the server has had a ``method`` request (any request if None), and
        answered it or holds it."""
        async with self.changed:
            await self.changed.wait_for(
                lambda: bool(self.methods) and method in (None, *self.methods)
            )

    async def read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async for line in reader:
            async with self.changed:
                self.methods.append(line.decode().strip())
                self.changed.notify_all()
        writer.close()


@asynccontextmanager
async def _reports() -> AsyncIterator[Reports]:
    reports = Reports()
    server = await asyncio.start_server(reports.read, "127.0.0.1", 0)
    reports.port = server.sockets[0].getsockname()[1]
    async with server:
        yield reports


def _hostile(
    mode: str, limits: MCPLimits | None = None, *, reports: Reports | None = None, **options: object
) -> MCPToolSource:
    env = {"HOSTILE_REPORT_PORT": str(reports.port)} if reports is not None else None
    return MCPToolSource.stdio(
        sys.executable,
        ["-m", "tests.mcp_hostile", mode],
        cwd=ROOT,
        env=env,
        name="hostile",
        limits=limits,
        **options,  # type: ignore[arg-type]
    )


async def _enter(source: MCPToolSource) -> None:
    async with source:
        pass


async def test_a_server_that_never_completes_the_handshake_times_out() -> None:
    """Entering a source whose server never answers raises once connect_timeout has passed."""
    fixed = FixedRuntime()
    async with _reports() as reports:
        entering = asyncio.ensure_future(
            _enter(_hostile("silent", reports=reports, runtime=fixed.runtime()))
        )
        await reports.held()  # the handshake's first request (a silent server holds them all)
        fixed.now += 30
        with pytest.raises(ToolServerError, match=r"did not complete the handshake within 30 s"):
            await entering


async def test_an_http_server_that_never_answers_times_out_on_the_clock() -> None:
    """Over HTTP too, the handshake's limit runs on the runtime's clock, not the HTTP client's."""
    asked = asyncio.Event()

    async def never_answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")  # a request's head has arrived
        asked.set()
        await reader.read()  # say nothing until the client hangs up
        writer.close()

    fixed = FixedRuntime()
    server = await asyncio.start_server(never_answers, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        source = MCPToolSource.http(f"http://127.0.0.1:{port}/mcp", runtime=fixed.runtime())
        entering = asyncio.ensure_future(_enter(source))
        await asked.wait()
        fixed.now += 30
        with pytest.raises(ToolServerError, match=r"did not complete the handshake within 30 s"):
            await entering


async def test_a_call_that_never_answers_is_a_tool_error_the_model_reads() -> None:
    """A call with no answer ends when call_timeout has passed, not before, as a tool error
    result, and the run goes on."""
    fixed = FixedRuntime()
    async with (
        _reports() as reports,
        _hostile("mute-call", reports=reports, runtime=fixed.runtime()) as source,
    ):
        agent = Agent(name="a", tools=[*await source.tools()])
        model = ScriptedModel(tool_call("wait"), text("gave up"))
        run = asyncio.ensure_future(Swarm([agent], "a", model=model).run("go"))
        await reports.held("tools/call")
        fixed.now += 299
        for _ in range(20):
            await asyncio.sleep(0)  # passes of the event loop: the deadline has its chance
        assert not run.done()
        fixed.now += 1
        result = await run

    assert result.final_output == "gave up"
    (answer,) = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert "no answer within 300 s (MCPLimits.call_timeout)" in answer.content


async def test_a_garbled_reply_is_a_tool_server_error() -> None:
    """A reply that is not JSON-RPC leaves the call unanswered: a ToolServerError, no hang."""
    fixed = FixedRuntime()
    async with (
        _reports() as reports,
        _hostile("garbled-call", reports=reports, runtime=fixed.runtime()) as source,
    ):
        await source.tools()
        call = asyncio.ensure_future(source.call("wait", {}))
        await reports.held("tools/call")
        fixed.now += 300
        with pytest.raises(ToolServerError, match="failed tool 'wait': no answer within 300 s"):
            await call


async def test_a_schema_too_deep_to_parse_is_a_listing_error() -> None:
    """A tool list the SDK cannot parse (a schema 100,000 deep) fails once list_timeout has
    passed."""
    fixed = FixedRuntime()
    async with (
        _reports() as reports,
        _hostile("deep-schema", reports=reports, runtime=fixed.runtime()) as source,
    ):
        listing = asyncio.ensure_future(source.tools())
        await reports.held("tools/list")
        fixed.now += 30
        with pytest.raises(ToolServerError, match=r"did not list its tools within 30 s"):
            await listing


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


@pytest.mark.parametrize("build", ["stdio", "http"])
def test_a_runtime_that_is_not_a_runtime_is_refused(build: str) -> None:
    """runtime= takes a Runtime; a FixedRuntime itself is refused with the call to make."""
    with pytest.raises(ConfigurationError) as caught:
        if build == "stdio":
            MCPToolSource.stdio(sys.executable, runtime=FixedRuntime())  # type: ignore[arg-type]
        else:
            MCPToolSource.http("http://127.0.0.1:1/mcp", runtime=FixedRuntime())  # type: ignore[arg-type]

    assert str(caught.value) == (
        "runtime= must be a swarmkit.runtime.Runtime, got FixedRuntime; "
        "e.g. runtime=FixedRuntime().runtime() in a test"
    )
