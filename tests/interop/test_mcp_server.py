"""A swarm served over MCP, called by the mcp SDK's own client: in process, on stdio (the
command) and over streamable HTTP on loopback."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext, ElicitationFnT
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from swarmkit import Agent, ConfigurationError, Swarm, tool
from swarmkit.journal import InMemoryJournal, Journal, SQLiteJournal
from swarmkit.mcp_server import DECIDE_TOOL, McpServer, mcp_server
from swarmkit.testing import ScriptedModel, text, tool_call, transfer
from tests.interop.leases import assert_no_session_leased
from tests.interop.mcp_app import refunds

TOKEN = "run-token-0123456789abcdef"
DECISION_TOKEN = "decision-token-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]
ENTRY = "from swarmkit.cli import main; raise SystemExit(main())"


def _answering(*content: dict[str, Any] | None) -> tuple[ElicitationFnT, list[str]]:
    """An elicitation callback that answers with ``content`` in turn (None declines), and the
    questions it was asked."""
    asked: list[str] = []
    answers = list(content)

    async def elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        asked.append(params.message)
        answer = answers.pop(0)
        if answer is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=answer)

    return elicit, asked


def _refund_model() -> ScriptedModel:
    return ScriptedModel(transfer("billing", amount=50), text("Refunded 50."))


async def _resumed(journal: Journal, session_id: str) -> dict[str, Any]:
    (resumed,) = [r.data for r in await journal.read(session_id) if r.kind == "resumed"]
    return dict(resumed)


class Ticket(BaseModel):
    """The context of a support swarm."""

    customer: str
    priority: int = 1


class Answer(BaseModel):
    """A typed answer."""

    status: str


async def test_each_entry_is_a_tool_typed_by_the_prompt_and_the_context() -> None:
    """A tool per entry agent, whose arguments are the prompt and the context model's fields;
    a typed answer comes back as structured content, and the call is a journaled session."""
    journal = InMemoryJournal()
    model = ScriptedModel(text('{"status": "open"}'))
    desk = Agent(name="desk", description="Answers tickets.", output_type=Answer)
    swarm = Swarm([desk, Agent(name="notes")], "desk", model=model, context_type=Ticket)
    async with Client(mcp_server(swarm, journal, entries=["desk", "notes"])) as client:
        listed = await client.list_tools()
        result = await client.call_tool("desk", {"prompt": "status?", "customer": "ada"})

    desk_tool, notes_tool = listed.tools
    assert (desk_tool.name, notes_tool.name) == ("desk", "notes")
    assert desk_tool.description == "Answers tickets."
    assert desk_tool.input_schema["required"] == ["prompt", "customer"]
    assert set(desk_tool.input_schema["properties"]) == {"prompt", "customer", "priority"}
    assert result.structured_content == {"status": "open"}
    assert not result.is_error
    (info,) = await journal.sessions()
    assert info.session_id.startswith("mcp-local-")
    assert info.stop_reason == "final_output"
    (started,) = [r.data for r in await journal.read(info.session_id) if r.kind == "run_started"]
    assert started["context"] == {"customer": "ada", "priority": 1}


async def test_a_pause_answers_input_required_and_the_retry_with_the_decision_resumes() -> None:
    """On a 2026-07-28 connection the pause is an input_required answer with an elicitation
    form; the call retried with the answer and the echoed state resumes the run, and the
    journal names who decided."""
    journal = InMemoryJournal()
    server = mcp_server(refunds(_refund_model()), journal, allow_decisions=True)
    elicit, asked = _answering()
    async with Client(server, elicitation_callback=elicit) as client:
        first = await client.session.call_tool(
            "triage", {"prompt": "refund 50"}, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        assert first.input_requests is not None
        form = first.input_requests["decision"]
        approved = types.ElicitResult(action="accept", content={"decision": "approve"})
        result = await client.call_tool(
            "triage",
            {"prompt": "refund 50"},
            input_responses={"decision": approved},
            request_state=first.request_state,
        )

    assert isinstance(form, types.ElicitRequest)
    assert "waits for a decision on handoff billing" in form.params.message
    assert asked == []
    assert result.content == [types.TextContent(text="Refunded 50.")]
    (info,) = await journal.sessions()
    assert info.stop_reason == "final_output"
    resumed = await _resumed(journal, info.session_id)
    assert (resumed["kind"], resumed["decided_by"]) == ("approve", "mcp:local")


async def test_a_forged_or_moved_request_state_is_the_protocols_error() -> None:
    """The echoed state is sealed and bound to the call: a made-up one, or one sent with other
    arguments, is refused and the run stays waiting."""
    journal = InMemoryJournal()
    server = mcp_server(refunds(_refund_model()), journal, allow_decisions=True)
    elicit, _ = _answering()
    approved = types.ElicitResult(action="accept", content={"decision": "approve"})
    async with Client(server, elicitation_callback=elicit) as client:
        first = await client.session.call_tool(
            "triage", {"prompt": "refund 50"}, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        for prompt, state in (("refund 50", "v1.forged"), ("refund 5000", first.request_state)):
            with pytest.raises(MCPError, match="Invalid or expired requestState"):
                await client.call_tool(
                    "triage",
                    {"prompt": prompt},
                    input_responses={"decision": approved},
                    request_state=state,
                )
        await assert_no_session_leased(journal)

    (info,) = await journal.sessions()
    assert info.stop_reason == "interrupted"


async def test_the_client_answers_the_form_and_retries_within_one_call() -> None:
    """The mcp client's own loop: call_tool shows the form, retries with the answer and
    returns the paid refund."""
    journal = InMemoryJournal()
    server = mcp_server(refunds(_refund_model()), journal, allow_decisions=True)
    elicit, asked = _answering({"decision": "reject", "reason": "too much"})
    async with Client(server, elicitation_callback=elicit) as client:
        result = await client.call_tool("triage", {"prompt": "refund 50"})

    assert result.content == [types.TextContent(text="Refunded 50.")]
    assert len(asked) == 1
    (info,) = await journal.sessions()
    resumed = await _resumed(journal, info.session_id)
    assert (resumed["kind"], resumed["reason"]) == ("reject", "too much")


async def test_an_older_connection_is_asked_during_the_call() -> None:
    """A client on the initialize handshake that can elicit is asked in the call; a declined
    form rejects the handoff."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("billing", amount=50), text("No refund, sorry."))
    server = mcp_server(refunds(model), journal, allow_decisions=True)
    elicit, asked = _answering(None)
    async with Client(server, mode="legacy", elicitation_callback=elicit) as client:
        result = await client.call_tool("triage", {"prompt": "refund 50"})

    assert result.content == [types.TextContent(text="No refund, sorry.")]
    assert len(asked) == 1
    (info,) = await journal.sessions()
    assert (await _resumed(journal, info.session_id))["kind"] == "reject"


async def test_a_client_that_cannot_elicit_decides_with_the_decide_tool() -> None:
    """Without elicitation the call answers with the waiting session; decide_paused_run with
    that session id resumes it."""
    journal = InMemoryJournal()
    server = mcp_server(refunds(_refund_model()), journal, allow_decisions=True)
    async with Client(server) as client:
        waiting = await client.call_tool("triage", {"prompt": "refund 50"})
        assert isinstance(waiting.structured_content, dict)
        session_id = waiting.structured_content["session_id"]
        again = {"session_id": session_id, "decision": "approve"}
        done = await client.call_tool(DECIDE_TOOL, again)
        late = await client.call_tool(DECIDE_TOOL, again)

    assert waiting.structured_content["status"] == "input_required"
    assert waiting.structured_content["pending"]["target"] == "billing"
    assert not waiting.is_error
    assert done.content == [types.TextContent(text="Refunded 50.")]
    assert late.is_error
    assert "the decision was not taken" in late.content[0].text  # type: ignore[union-attr]
    assert (await _resumed(journal, session_id))["decided_by"] == "mcp:local"


async def test_an_edit_that_does_not_validate_leaves_the_run_waiting() -> None:
    """decide_paused_run with an edit whose payload does not fit is refused and the run still
    waits; a payload that fits replaces the handoff's and the run goes on with it."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("billing", amount=50), text("Refunded 20."))
    async with Client(mcp_server(refunds(model), journal, allow_decisions=True)) as client:
        waiting = await client.call_tool("triage", {"prompt": "refund 50"})
        assert isinstance(waiting.structured_content, dict)
        session_id = waiting.structured_content["session_id"]
        edit = {"session_id": session_id, "decision": "edit"}
        wrong = await client.call_tool(DECIDE_TOOL, {**edit, "payload": {"amount": "lots"}})
        still = [info.stop_reason for info in await journal.sessions()]
        await assert_no_session_leased(journal)
        done = await client.call_tool(DECIDE_TOOL, {**edit, "payload": {"amount": 20}})

    assert wrong.is_error and "amount" in wrong.content[0].text  # type: ignore[union-attr]
    assert still == ["interrupted"]
    assert done.content == [types.TextContent(text="Refunded 20.")]
    resumed = await _resumed(journal, session_id)
    assert (resumed["kind"], resumed["payload"]) == ("edit", {"amount": 20})


async def test_racing_decisions_resume_the_run_once() -> None:
    """Four approvals of one paused run at once: one resumes it, the others are told the
    decision was not taken, and the model is called once more only."""
    journal = InMemoryJournal()
    model = _refund_model()
    server = mcp_server(refunds(model), journal, allow_decisions=True)
    async with Client(server) as client:
        waiting = await client.call_tool("triage", {"prompt": "refund 50"})
        assert isinstance(waiting.structured_content, dict)
        approve = {"session_id": waiting.structured_content["session_id"], "decision": "approve"}
        outcomes = await asyncio.gather(*(client.call_tool(DECIDE_TOOL, approve) for _ in range(4)))
        await assert_no_session_leased(journal)

    done = [o for o in outcomes if not o.is_error]
    assert [o.content for o in done] == [[types.TextContent(text="Refunded 50.")]]
    assert all("not taken" in o.content[0].text for o in outcomes if o.is_error)  # type: ignore[union-attr]
    assert len(model.requests) == 2
    (info,) = await journal.sessions()
    assert info.stop_reason == "final_output"


async def test_without_the_permission_nobody_decides_and_is_told_how() -> None:
    """By default no caller may decide: the pause is a waiting result that says how to allow
    decisions, there is no decide tool, and the session stays waiting."""
    journal = InMemoryJournal()
    server = mcp_server(refunds(ScriptedModel(transfer("billing", amount=50))), journal)
    elicit, asked = _answering({"decision": "approve"})
    async with Client(server, elicitation_callback=elicit) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        waiting = await client.call_tool("triage", {"prompt": "refund 50"})
        with pytest.raises(MCPError, match="unknown tool"):
            await client.call_tool(DECIDE_TOOL, {"session_id": "x", "decision": "approve"})
        await assert_no_session_leased(journal, "x")

    assert names == ["triage"]
    assert asked == []
    assert "allow_decisions=True" in waiting.content[0].text  # type: ignore[union-attr]
    (info,) = await journal.sessions()
    assert info.stop_reason == "interrupted"


async def test_a_waiting_result_hides_secret_arguments() -> None:
    """A tool waiting for approval shows its arguments, with a secret key's value hidden."""

    @tool(needs_approval=True)
    def connect(host: str, api_key: str) -> str:
        """Connect to a host."""
        return "connected"

    model = ScriptedModel(tool_call("connect", host="db", api_key="sk-live-123"))
    swarm = Swarm([Agent(name="ops", tools=[connect])], "ops", model=model)
    async with Client(mcp_server(swarm, InMemoryJournal())) as client:
        waiting = await client.call_tool("ops", {"prompt": "connect"})

    assert isinstance(waiting.structured_content, dict)
    pending = waiting.structured_content["pending"]
    assert pending["payload"] == {"host": "db", "api_key": "[redacted]"}
    assert "sk-live-123" not in waiting.content[0].text  # type: ignore[union-attr]


async def test_arguments_that_do_not_validate_are_refused_and_nothing_is_journaled() -> None:
    """A wrong argument is an error result naming the field; an unknown tool is the protocol's
    error; neither starts a session."""
    journal = InMemoryJournal()
    swarm = Swarm([Agent(name="desk")], "desk", model=ScriptedModel(), context_type=Ticket)
    async with Client(mcp_server(swarm, journal, allow_decisions=True)) as client:
        missing = await client.call_tool("desk", {"prompt": "hi"})
        wrong = await client.call_tool("desk", {"prompt": 3, "customer": "ada"})
        decide = await client.call_tool(DECIDE_TOOL, {"session_id": "mcp-local-1"})
        with pytest.raises(MCPError, match="unknown tool 'billing'; tools: desk"):
            await client.call_tool("billing", {"prompt": "hi"})
        await assert_no_session_leased(journal, "mcp-local-1")

    assert missing.is_error and "customer: Field required" in missing.content[0].text  # type: ignore[union-attr]
    assert wrong.is_error and "prompt: Input should be a valid string" in wrong.content[0].text  # type: ignore[union-attr]
    assert decide.is_error and "decision: Field required" in decide.content[0].text  # type: ignore[union-attr]
    assert await journal.sessions() == ()


def test_bad_settings_are_refused_when_the_server_is_built() -> None:
    """An entry that is not an agent, and a server without a journal, say what to fix."""
    swarm = refunds(ScriptedModel())
    with pytest.raises(ConfigurationError, match="entry 'nobody' is not an agent"):
        mcp_server(swarm, InMemoryJournal(), entries=["nobody"])
    with pytest.raises(ConfigurationError, match="needs a Journal"):
        mcp_server(swarm, None)  # type: ignore[arg-type]


def _http(url: str, token: str | None, elicit: ElicitationFnT | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = streamable_http_client(
        url, http_client=httpx2.AsyncClient(headers=headers, timeout=300)
    )
    return Client(transport, elicitation_callback=elicit)


async def test_over_http_a_token_is_required_and_only_the_decision_token_decides() -> None:
    """Streamable HTTP on loopback: no token gets 401, another Host header 421; the run token's
    call pauses and cannot decide; the decision token decides it, and the journal names the
    decider."""
    journal = InMemoryJournal()
    swarm = refunds(_refund_model())
    async with McpServer(swarm, journal, token=TOKEN, decision_token=DECISION_TOKEN) as server:
        async with httpx.AsyncClient() as http:
            refused = await http.post(server.mcp_url, json={})
            rebound = await http.post(
                server.mcp_url,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                headers={"Authorization": f"Bearer {TOKEN}", "Host": "attacker.example"},
            )
        async with _http(server.mcp_url, TOKEN) as caller:
            waiting = await caller.call_tool("triage", {"prompt": "refund 50"})
            assert isinstance(waiting.structured_content, dict)
            decision = {"session_id": waiting.structured_content["session_id"]}
            decision["decision"] = "approve"
            not_allowed = await caller.call_tool(DECIDE_TOOL, decision)
            await assert_no_session_leased(journal)
        async with _http(server.mcp_url, DECISION_TOKEN) as decider:
            done = await decider.call_tool(DECIDE_TOOL, decision)

    assert server.mcp_url.startswith("http://127.0.0.1:")
    assert refused.status_code == 401
    assert rebound.status_code == 421  # a page on another host reaching loopback is refused
    assert "decision token" in waiting.content[0].text  # type: ignore[union-attr]
    assert not_allowed.is_error and "decision_token=" in not_allowed.content[0].text  # type: ignore[union-attr]
    assert done.content == [types.TextContent(text="Refunded 50.")]
    resumed = await _resumed(journal, decision["session_id"])
    assert resumed["decided_by"] == "mcp:decider"


async def test_over_http_the_decider_answers_the_form_within_the_call() -> None:
    """A client holding the decision token that can elicit gets the input_required answer and
    its retry resumes the run, all in one call_tool."""
    journal = InMemoryJournal()
    swarm = refunds(_refund_model())
    elicit, asked = _answering({"decision": "approve"})
    async with (
        McpServer(swarm, journal, token=TOKEN, decision_token=DECISION_TOKEN) as server,
        _http(server.mcp_url, DECISION_TOKEN, elicit) as decider,
    ):
        done = await decider.call_tool("triage", {"prompt": "refund 50"})

    assert done.content == [types.TextContent(text="Refunded 50.")]
    assert len(asked) == 1
    (info,) = await journal.sessions()
    assert (await _resumed(journal, info.session_id))["decided_by"] == "mcp:decider"


def _command(journal: Path) -> list[str]:
    """`swarmkit serve mcp` for the paused refund swarm, as arguments to python."""
    target = "tests.interop.mcp_app:paused_refund"
    return ["-c", ENTRY, "serve", "mcp", target, "--journal", str(journal)]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWARMKIT_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


async def test_the_command_serves_a_swarm_on_stdio_through_a_pause(tmp_path: Path) -> None:
    """`swarmkit serve mcp --allow-decisions` spawned by an MCP client: the call pauses, the
    client approves in the form, the answer comes back and the journal file holds it all."""
    path = tmp_path / "journal.sqlite"
    spawn = StdioServerParameters(
        command=sys.executable,
        args=[*_command(path), "--allow-decisions"],
        env=_env(),
        cwd=ROOT,
    )
    elicit, asked = _answering({"decision": "approve"})
    async with Client(spawn, elicitation_callback=elicit) as client:
        result = await client.call_tool("triage", {"prompt": "refund 50"})

    assert result.content == [types.TextContent(text="Refunded 50.")]
    assert len(asked) == 1
    journal = SQLiteJournal(path)
    (info,) = await journal.sessions()
    assert (await _resumed(journal, info.session_id))["decided_by"] == "mcp:local"


async def test_the_command_serves_over_http_with_the_printed_token(tmp_path: Path) -> None:
    """`swarmkit serve mcp --transport http` prints its /mcp URL and a token, which an MCP
    client uses; the token never reaches stderr."""
    command = [sys.executable, *_command(tmp_path / "journal.sqlite"), "--transport", "http"]
    process = subprocess.Popen(
        [*command, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=_env(),
    )
    try:
        assert process.stdout is not None
        url_line, token_line = process.stdout.readline(), process.stdout.readline()
        url = re.search(r"http://\S+/mcp", url_line)
        token = re.search(r"token: (\S+)", token_line)
        assert url is not None and token is not None
        async with _http(url.group(0), token.group(1)) as client:
            waiting = await client.call_tool("triage", {"prompt": "refund 50"})
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)

    assert url.group(0).startswith("http://127.0.0.1:")
    assert isinstance(waiting.structured_content, dict)
    assert waiting.structured_content["status"] == "input_required"
    assert token.group(1) not in errors
