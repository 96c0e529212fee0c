"""MCP tool sources against real servers: ours over stdio and HTTP, and mcp-server-time."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmkit import (
    Agent,
    ConfigurationError,
    ReplayDivergenceError,
    RunContext,
    RunResult,
    Swarm,
    tool,
)
from swarmkit.exceptions import ToolServerError
from swarmkit.journal import InMemoryJournal
from swarmkit.mcp import MCPToolSource
from swarmkit.messages import ToolMessage
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call, transfer

ROOT = Path(__file__).resolve().parent.parent


def _stdio(**options: object) -> MCPToolSource:
    env = options.pop("env", None)
    return MCPToolSource.stdio(
        sys.executable,
        ["-m", "tests.mcp_server", "stdio"],
        cwd=ROOT,
        env=env,  # type: ignore[arg-type]
        name="test-server",
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture
def http_url() -> Iterator[str]:
    """Our MCP server over streamable HTTP on a free loopback port, stopped by pid afterwards."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    fd = listener.fileno()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp_server", "http", str(fd)], cwd=ROOT, pass_fds=[fd]
    )
    listener.close()
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


def _tool_messages(result: RunResult) -> list[ToolMessage]:
    return [m for m in result.messages if isinstance(m, ToolMessage)]


async def test_stdio_source_lists_the_servers_tools_with_strict_schemas() -> None:
    """Each server tool becomes a FunctionTool; an optional field with a default turns nullable."""
    async with _stdio() as source:
        tools = {t.name: t for t in await source.tools()}

    assert set(tools) == {"add", "greet", "fail", "read_env", "header", "pid"}
    greet = tools["greet"]
    assert greet.strict and greet.description == "Greet someone by name."
    assert greet.parameters["required"] == ["name", "punctuation"]
    assert greet.parameters["additionalProperties"] is False
    assert {"type": "null"} in greet.parameters["properties"]["punctuation"]["anyOf"]


async def test_an_agent_calls_an_mcp_tool_with_arguments() -> None:
    """The model's call goes to the server; its answer is the tool result the model reads."""
    model = ScriptedModel(tool_call("add", a=2, b=40), text("42"))
    async with _stdio() as source:
        agent = Agent(name="calc", tools=[*await source.tools()])
        result = await Swarm([agent], "calc", model=model).run("2 + 40?")

    assert [(m.content, m.is_error) for m in _tool_messages(result)] == [("42", False)]
    assert result.final_output == "42"
    model.assert_exhausted()


async def test_a_null_optional_argument_gets_the_servers_default() -> None:
    """Strict mode makes the model send null for an omitted option; the server's default applies."""
    model = ScriptedModel(tool_call("greet", name="Ada", punctuation=None), text("done"))
    async with _stdio() as source:
        agent = Agent(name="host", tools=[*await source.tools()])
        result = await Swarm([agent], "host", model=model).run("greet Ada")

    assert _tool_messages(result)[0].content == "Hello, Ada!"


async def test_a_tool_that_raises_becomes_an_error_result_the_run_survives() -> None:
    """A result flagged isError reaches the model as an error; the run ends normally."""
    model = ScriptedModel(tool_call("fail", reason="disk full"), text("sorry"))
    async with _stdio() as source:
        agent = Agent(name="ops", tools=[*await source.tools()])
        result = await Swarm([agent], "ops", model=model).run("try it")

    message = _tool_messages(result)[0]
    assert message.is_error
    assert "MCP server 'test-server' failed tool 'fail'" in message.content
    assert "Error executing tool fail" in message.content
    assert result.stop_reason == "final_output"


async def test_a_server_killed_mid_run_becomes_an_error_result() -> None:
    """After the server process dies, its tool's next call is an error the model can read."""
    async with _stdio() as source:
        tools = await source.tools()
        server_pid = int(await source.call("pid", {}))

        @tool
        def stop_server() -> str:
            """Kill the MCP server."""
            os.kill(server_pid, signal.SIGKILL)
            return "stopped"

        model = ScriptedModel(
            tool_call("add", a=1, b=1),
            tool_call("stop_server"),
            tool_call("add", a=2, b=2),
            text("the calculator went away"),
        )
        agent = Agent(name="calc", tools=[*tools, stop_server])
        result = await Swarm([agent], "calc", model=model).run("add twice")

    messages = _tool_messages(result)
    assert [(m.name, m.is_error) for m in messages] == [
        ("add", False),
        ("stop_server", False),
        ("add", True),
    ]
    assert "MCP server 'test-server' failed tool 'add'" in messages[2].content
    assert result.stop_reason == "final_output"


async def test_a_replay_makes_no_calls_to_the_server_even_when_it_is_stopped(
    tmp_path: Path,
) -> None:
    """The journal serves the MCP results: the stopped server is never asked."""
    calls = tmp_path / "calls.log"
    journal = InMemoryJournal()
    source = _stdio(env={"MCP_TEST_CALL_LOG": str(calls)})
    async with source:
        tools = await source.tools()
        model = ScriptedModel(tool_call("add", a=3, b=4), text("7"))
        swarm = Swarm([Agent(name="calc", tools=tools)], "calc", model=model, journal=journal)
        recorded = await swarm.run("3 + 4?")
    assert calls.read_text() == "add\n"
    assert not source.connected

    replayed = await swarm.with_model(NeverCalledModel()).replay(recorded.session_id)

    assert replayed.final_output == recorded.final_output == "7"
    assert _tool_messages(replayed)[0].content == "7"
    assert calls.read_text() == "add\n"


async def test_a_replay_diverges_when_the_servers_tool_schema_changed() -> None:
    """A server whose tool now takes another argument no longer matches the journaled request."""
    journal = InMemoryJournal()
    async with _stdio() as source:
        model = ScriptedModel(tool_call("add", a=3, b=4), text("7"))
        agent = Agent(name="calc", tools=[*await source.tools()])
        recorded = await Swarm([agent], "calc", model=model, journal=journal).run("3 + 4?")

    async with _stdio(env={"MCP_TEST_VARIANT": "2"}) as changed:
        agent = Agent(name="calc", tools=[*await changed.tools()])
        swarm = Swarm([agent], "calc", model=NeverCalledModel(), journal=journal)
        with pytest.raises(ReplayDivergenceError) as caught:
            await swarm.replay(recorded.session_id)

    assert "differs from the journaled one" in str(caught.value)


async def test_two_agents_share_one_server_over_http(http_url: str) -> None:
    """Triage and billing both use the same connection; each call reaches the server."""
    async with MCPToolSource.http(http_url, name="shared") as source:
        tools = await source.tools()
        triage = Agent(name="triage", tools=tools)
        billing = Agent(name="billing", tools=tools)
        model = ScriptedModel(
            tool_call("add", a=20, b=10),
            transfer("billing"),
            tool_call("greet", name="Bo", punctuation="?"),
            text("Refund of 30 sent, Bo."),
        )
        result = await Swarm([triage, billing], "triage", model=model).run("refund me")

    contents = [m.content for m in _tool_messages(result) if m.name in ("add", "greet")]
    assert contents == ["30", "Hello, Bo?"]
    assert result.trail == ("triage", "billing")


async def test_http_source_sends_headers_and_reports_failures(http_url: str) -> None:
    """Headers configure the HTTP client; a failing tool is an error result over HTTP too."""
    async with MCPToolSource.http(http_url, headers={"X-Api-Tenant": "acme"}) as source:
        tools = {t.name: t for t in await source.tools()}
        tenant = await tools["header"].invoke('{"name": "X-Api-Tenant"}', _context())
        outcome = await tools["fail"].invoke('{"reason": "nope"}', _context())

    assert tenant.content == "acme"
    assert outcome.is_error and "Error executing tool fail" in outcome.content


async def test_env_reaches_the_stdio_server() -> None:
    """Variables given with env= are set in the server process; others are not inherited."""
    os.environ["SWARMKIT_TEST_NOT_PASSED"] = "x"
    try:
        async with _stdio(env={"SWARMKIT_TEST_VALUE": "hello"}) as source:
            given = await source.call("read_env", {"name": "SWARMKIT_TEST_VALUE"})
            other = await source.call("read_env", {"name": "SWARMKIT_TEST_NOT_PASSED"})
    finally:
        del os.environ["SWARMKIT_TEST_NOT_PASSED"]

    assert (given, other) == ("hello", "<unset>")


async def test_tools_are_filtered_by_name_prefixed_and_cached_until_refresh() -> None:
    """include= keeps the named tools, prefix= renames them; the list is cached until refresh."""
    async with _stdio(include=["add", "greet"], prefix="calc_") as source:
        first = await source.tools()
        again = await source.tools()
        refreshed = await source.tools(refresh=True)
        result = await first[0].invoke('{"a": 1, "b": 2}', _context())

    assert [t.name for t in first] == ["calc_add", "calc_greet"]
    assert again is first and refreshed is not first
    assert [t.name for t in refreshed] == ["calc_add", "calc_greet"]
    assert result.content == "3"


async def test_a_closed_source_gives_error_results_and_refuses_to_list() -> None:
    """Tools kept after the source closed answer with an error; refreshing tells how to fix it."""
    source = _stdio()
    async with source:
        tools = await source.tools()
    outcome = await tools[0].invoke('{"a": 1, "b": 2}', _context())

    assert outcome.is_error and "is not connected" in outcome.content
    with pytest.raises(ToolServerError, match="inside `async with source:`"):
        await source.tools(refresh=True)


async def test_a_server_that_cannot_start_is_a_tool_server_error_saying_what_to_check() -> None:
    """A missing command fails at connection with a message that names the server."""
    source = MCPToolSource.stdio("swarmkit-no-such-mcp-server", name="ghost")

    with pytest.raises(ToolServerError, match="could not connect to MCP server 'ghost'"):
        await source.__aenter__()
    with pytest.raises(ConfigurationError, match="build a new one"):
        await source.__aenter__()


async def test_mcp_server_time_from_the_package_index_over_stdio() -> None:
    """A server nobody here wrote: its tools list, convert to schemas, and answer a run."""
    source = MCPToolSource.stdio(
        sys.executable, ["-m", "mcp_server_time", "--local-timezone", "UTC"], name="time"
    )
    model = ScriptedModel(tool_call("get_current_time", timezone="Europe/Paris"), text("noon"))
    async with source:
        tools = await source.tools()
        agent = Agent(name="clock", tools=tools)
        result = await Swarm([agent], "clock", model=model).run("time in Paris?")

    assert {"get_current_time", "convert_time"} <= {t.name for t in tools}
    message = _tool_messages(result)[0]
    assert not message.is_error
    assert '"timezone": "Europe/Paris"' in message.content


def _context() -> RunContext:
    return RunContext(context={}, agent="test", session_id="s")


def test_the_mcp_sdks_own_span_nests_under_the_tool_span() -> None:
    """With a global tracer provider, the SDK's tools/call span is a child of execute_tool."""
    output = subprocess.run(
        [sys.executable, "-m", "tests.mcp_tracing_app"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    pairs = {tuple(pair) for pair in json.loads(output)}

    assert ("MCP send tools/call add", "execute_tool add") in pairs
    assert ("execute_tool add", "invoke_agent calc") in pairs
