"""A swarm's run as AG-UI events, validated by ag-ui-protocol's models, and served over SSE."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from ag_ui.core import BaseEvent, EventType
from pydantic import BaseModel

from swarmkit import Agent, Handoff, ModelError, Swarm, UsageLimits, tool
from swarmkit.agui import HANDOFF, AgUiServer, ag_ui_events
from swarmkit.journal import InMemoryJournal, session_status
from swarmkit.models import Model, ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, text, tool_call, transfer
from tests.interop.agui_helpers import check_sequence, sse_events, wire_events
from tests.interop.hanging import HangsOnce

TOKEN = "agui-token-0123456789abcdef"


class Refund(BaseModel):
    """A refund."""

    amount: int


@tool(needs_approval=True)
def pay(amount: int) -> str:
    """Pay a refund."""
    return f"paid {amount}"


@tool
def pay_now(amount: int) -> str:
    """Pay a refund without asking."""
    return f"paid {amount}"


def _swarm(model: Model) -> Swarm:
    billing = Agent(name="billing", tools=[pay])
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    return Swarm([triage, billing], "triage", model=model)


def _wire(events: list[dict[str, Any]]) -> list[BaseEvent]:
    """The events as a front end gets them: JSON over the wire, read back by the models."""
    return wire_events(events)


def _data(event: BaseEvent) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(event.model_dump_json(by_alias=True))
    return data


async def test_a_streamed_run_becomes_valid_ag_ui_events() -> None:
    """Steps per agent, text deltas as one message, tool calls, the handoff as a custom event."""
    model = ScriptedModel(
        transfer("billing", amount=5),
        tool_call("pay_now", amount=5),
        text("Refunded five."),
    )
    billing = Agent(name="billing", tools=[pay_now])
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    swarm = Swarm([triage, billing], "triage", model=model)
    converted = [e async for e in ag_ui_events(swarm.stream("refund 5"), thread_id="t", run_id="r")]

    events = _wire(converted)
    check_sequence(events)
    kinds = [e.type for e in events]
    steps = [_data(e)["stepName"] for e in events if e.type == EventType.STEP_STARTED]
    assert steps == ["triage", "billing"]
    (handoff,) = [_data(e) for e in events if e.type == EventType.CUSTOM]
    assert handoff["name"] == HANDOFF
    assert (handoff["value"]["source"], handoff["value"]["target"]) == ("triage", "billing")
    assert kinds.index(EventType.TOOL_CALL_START) < kinds.index(EventType.TOOL_CALL_RESULT)
    (result,) = [_data(e) for e in events if e.type == EventType.TOOL_CALL_RESULT]
    assert result["content"] == "paid 5"
    deltas = [_data(e)["delta"] for e in events if e.type == EventType.TEXT_MESSAGE_CONTENT]
    assert "".join(deltas) == "Refunded five."
    assert _data(events[0])["protocolVersion"] == "1.0"
    finished = _data(events[-1])
    assert finished["type"] == "RUN_FINISHED"
    assert (finished["result"], finished["outcome"]) == ("Refunded five.", {"type": "success"})
    assert finished["usage"] == [_usage(calls=3)]


def _usage(*, calls: int) -> dict[str, Any]:
    """The usage entry of ``calls`` scripted model calls (10 tokens in, 5 out each)."""
    return {
        "provider": "swarmkit.scripted",
        "model": "scripted",
        "inputTokens": 10 * calls,
        "outputTokens": 5 * calls,
        "totalTokens": 15 * calls,
        "cachedInputTokens": 0,
        "cacheWriteInputTokens": 0,
    }


class _FailingModel:
    """A model whose API fails for good."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("the API said 401", model="gpt-x", attempts=1, status_code=401)


async def test_a_failed_run_ends_with_run_error() -> None:
    """A run that stops on an error ends with RUN_ERROR naming the stop reason and the error."""
    swarm = Swarm([Agent(name="triage")], "triage", model=_FailingModel())
    converted = [e async for e in ag_ui_events(swarm.stream("go"), thread_id="t", run_id="r")]

    events = _wire(converted)
    check_sequence(events)
    last = _data(events[-1])
    assert (last["type"], last["code"]) == ("RUN_ERROR", "error")
    assert last["message"] == "the run stopped (error): ModelError: the API said 401"


async def test_a_run_stopped_by_a_limit_reports_the_usage_it_spent() -> None:
    """RUN_ERROR of a run a usage limit stopped carries the usage of the calls it made."""
    model = ScriptedModel(tool_call("pay_now", amount=1), tool_call("pay_now", amount=2))
    swarm = Swarm([Agent(name="billing", tools=[pay_now])], "billing", model=model)
    stream = swarm.stream("pay", limits=UsageLimits(max_model_calls=2))
    events = _wire([e async for e in ag_ui_events(stream, thread_id="t", run_id="r")])

    check_sequence(events)
    last = _data(events[-1])
    assert (last["type"], last["code"]) == ("RUN_ERROR", "usage_limit")
    assert last["usage"] == [_usage(calls=2)]


def _run_input(thread: str, run: str, prompt: str, **more: Any) -> dict[str, Any]:
    message = {"id": f"m-{run}", "role": "user", "content": prompt}
    return {
        "threadId": thread,
        "runId": run,
        "messages": [message],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
        **more,
    }


async def _post(http: httpx.AsyncClient, url: str, body: dict[str, Any]) -> list[BaseEvent]:
    async with http.stream("POST", url, json=body) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        text_body = "".join([chunk async for chunk in reply.aiter_text()])
    return sse_events(text_body)


async def test_the_endpoint_streams_a_run_with_a_handoff_a_tool_and_an_approval() -> None:
    """An AG-UI client reads the SSE stream, answers the interrupt and reads the resumed run."""
    model = ScriptedModel(
        transfer("billing", amount=5), tool_call("pay", amount=5), text("Refunded five.")
    )
    journal = InMemoryJournal()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        AgUiServer(_swarm(model), journal, token=TOKEN) as server,
        httpx.AsyncClient(headers=headers) as http,
    ):
        paused = await _post(http, server.url, _run_input("t1", "r1", "refund 5"))
        interrupt = _data(paused[-1])["outcome"]["interrupts"][0]
        resume = [
            {
                "interruptId": interrupt["id"],
                "status": "resolved",
                "payload": {"decision": "approve"},
            }
        ]
        resumed = await _post(http, server.url, _run_input("t1", "r2", "", resume=resume))

    check_sequence(paused)
    assert interrupt["reason"] == "tool"
    (pay_call,) = [_data(e) for e in paused if e.type == EventType.TOOL_CALL_START]
    assert interrupt["toolCallId"] == pay_call["toolCallId"]
    assert _data(paused[-1])["usage"] == [_usage(calls=2)]
    assert interrupt["metadata"]["pending"]["tool_name"] == "pay"
    assert any(e.type == EventType.CUSTOM for e in paused)
    check_sequence(resumed)
    results = [_data(e)["content"] for e in resumed if e.type == EventType.TOOL_CALL_RESULT]
    assert results == ["paid 5"]
    finished = _data(resumed[-1])
    assert (finished["type"], finished["result"]) == ("RUN_FINISHED", "Refunded five.")
    assert finished["usage"] == [_usage(calls=1)]  # the resumed run's own call only
    assert "Refunded five." in [
        _data(e)["delta"] for e in resumed if e.type == EventType.TEXT_MESSAGE_CONTENT
    ]


async def test_a_thread_continues_its_conversation() -> None:
    """A second run on the same thread sees the first run's messages."""
    model = ScriptedModel(text("Hi Ada."), text("You are Ada."))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        AgUiServer(_swarm(model), InMemoryJournal(), token=TOKEN) as server,
        httpx.AsyncClient(headers=headers) as http,
    ):
        await _post(http, server.url, _run_input("t2", "r1", "I am Ada"))
        second = await _post(http, server.url, _run_input("t2", "r2", "who am I?"))

    assert _data(second[-1])["result"] == "You are Ada."
    assert [m.content for m in model.requests[-1].messages][-3:] == [
        "I am Ada",
        "Hi Ada.",
        "who am I?",
    ]


async def test_a_thread_whose_client_went_away_mid_run_goes_on() -> None:
    """A client that disconnects mid-stream (its first events read, the model call under
    way) ends the run as cancelled; the thread's next run completes and its model sees the
    message of the run that was cut short."""
    script = ScriptedModel(text("Back."))
    model = HangsOnce(script)
    journal = InMemoryJournal()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        AgUiServer(_swarm(model), journal, token=TOKEN) as server,
        httpx.AsyncClient(headers=headers) as http,
    ):
        async with http.stream("POST", server.url, json=_run_input("t3", "r1", "slow")) as reply:
            read = await _first_events(reply, until=EventType.STATE_SNAPSHOT)
            await model.called.wait()
        status = None
        for _ in range(100_000):  # the server notices the disconnect and journals the end
            sessions = await journal.sessions()
            if sessions and sessions[0].stop_reason is not None:
                status = session_status(await journal.read(sessions[0].session_id))
                break
            await asyncio.sleep(0)
        second = await _post(http, server.url, _run_input("t3", "r2", "still there?"))

    assert [e.type for e in read][:2] == [EventType.RUN_STARTED, EventType.STEP_STARTED]
    assert status == "cancelled"
    assert _data(second[-1])["result"] == "Back."
    sent = [m.content for m in script.requests[0].messages if m.kind == "user"]
    assert sent == ["slow", "still there?"]


async def _first_events(reply: httpx.Response, *, until: EventType) -> list[BaseEvent]:
    """The events of a stream up to the first ``until``, the rest left unread."""
    events: list[BaseEvent] = []
    async for line in reply.aiter_lines():
        events.extend(sse_events(line))
        if events and events[-1].type == until:
            return events
    raise AssertionError(f"the stream ended before {until}")


async def test_the_endpoint_refuses_requests_without_the_token_and_bad_input() -> None:
    """No token gets 401; a body that is not a run input gets 422 saying why."""
    async with (
        AgUiServer(_swarm(ScriptedModel()), InMemoryJournal(), token=TOKEN) as server,
        httpx.AsyncClient() as http,
    ):
        refused = await http.post(server.url, json=_run_input("t", "r", "hi"))
        bad = await http.post(
            server.url, json={"threadId": "t"}, headers={"Authorization": f"Bearer {TOKEN}"}
        )

    assert refused.status_code == 401
    assert bad.status_code == 422
    assert "runId: Field required" in bad.json()["error"]


def _snapshot(events: list[BaseEvent]) -> dict[str, Any]:
    """The last state a run sent, as a front end keeps it."""
    (*_, last) = [_data(e) for e in events if e.type == EventType.STATE_SNAPSHOT]
    snapshot: dict[str, Any] = last["snapshot"]
    return snapshot


async def test_the_state_a_run_sends_back_is_the_state_the_next_run_takes() -> None:
    """A client that returns each run's last state snapshot as the next run's state keeps the
    context as it was, turn after turn."""
    model = ScriptedModel(text("One."), text("Two."), text("Three."))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        AgUiServer(_swarm(model), InMemoryJournal(), token=TOKEN) as server,
        httpx.AsyncClient(headers=headers) as http,
    ):
        state: dict[str, Any] = {"tier": "gold"}
        for run in ("r1", "r2", "r3"):
            events = await _post(http, server.url, _run_input("t4", run, "hi", state=state))
            state = _snapshot(events)
            assert state["context"] == {"tier": "gold"}

    assert state == {"agent": "triage", "trail": ["triage"], "context": {"tier": "gold"}}


def _unanswered(events: list[BaseEvent]) -> set[str]:
    """The tool calls a client's history holds without a result."""
    called = {_data(e)["toolCallId"] for e in events if e.type == EventType.TOOL_CALL_START}
    answered = {_data(e)["toolCallId"] for e in events if e.type == EventType.TOOL_CALL_RESULT}
    return called - answered


async def test_a_resumed_run_streams_the_edited_tools_result() -> None:
    """Resumed with an edit, the run streams the paused call's result with the tool's real
    output, once, so the client's history has no unanswered call."""
    model = ScriptedModel(
        transfer("billing", amount=5), tool_call("pay", amount=5), text("Refunded seven.")
    )
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        AgUiServer(_swarm(model), InMemoryJournal(), token=TOKEN) as server,
        httpx.AsyncClient(headers=headers) as http,
    ):
        paused = await _post(http, server.url, _run_input("t5", "r1", "refund 5"))
        interrupt = _data(paused[-1])["outcome"]["interrupts"][0]
        decision = {"decision": "edit", "payload": {"amount": 7}}
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": decision}]
        resumed = await _post(http, server.url, _run_input("t5", "r2", "", resume=resume))

    check_sequence(resumed)
    (pending,) = _unanswered(paused)
    results = [_data(e) for e in resumed if e.type == EventType.TOOL_CALL_RESULT]
    assert [(r["toolCallId"], r["content"]) for r in results] == [(pending, "paid 7")]
    assert not _unanswered([*paused, *resumed])
    assert [e.type for e in resumed].count(EventType.STEP_STARTED) == 0
    assert _data(resumed[-1])["result"] == "Refunded seven."


async def test_a_thread_resumes_only_its_own_interrupts() -> None:
    """Thread ``victim`` cannot answer the interrupt of thread ``victim-thread``, whose id
    starts the same: the run is refused and the paused session stays waiting."""
    model = ScriptedModel(transfer("billing", amount=5), tool_call("pay", amount=5))
    journal = InMemoryJournal()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        AgUiServer(_swarm(model), journal, token=TOKEN) as server,
        httpx.AsyncClient(headers=headers) as http,
    ):
        paused = await _post(http, server.url, _run_input("victim-thread", "r1", "refund 5"))
        interrupt = _data(paused[-1])["outcome"]["interrupts"][0]
        approval = {"decision": "approve"}
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": approval}]
        refused = await http.post(server.url, json=_run_input("victim", "r2", "", resume=resume))

    assert refused.status_code == 422
    assert "is not a run of thread 'victim'" in refused.json()["error"]
    assert [s.state for s in await journal.sessions()] == ["waiting"]


async def test_a_deeply_nested_run_input_gets_400() -> None:
    """A body nesting far deeper than any run input is refused with 400 before it is parsed."""
    nested = '{"threadId": "t", "state": ' + "[" * 100_000 + "]" * 100_000 + "}"
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    async with (
        AgUiServer(_swarm(ScriptedModel()), InMemoryJournal(), token=TOKEN) as server,
        httpx.AsyncClient(headers=headers) as http,
    ):
        reply = await http.post(server.url, content=nested)

    assert reply.status_code == 400
    assert "nests 100001 levels deep" in reply.json()["error"]


async def test_a_resumed_handoff_streams_the_handoff_and_the_new_agents_step_once() -> None:
    """Approving entry to an agent, the resumed run streams the handoff, the agent's step and
    answer, each once, and only its own model call's usage."""
    model = ScriptedModel(transfer("billing", amount=5), text("Billing here."))
    billing = Agent(name="billing")
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    swarm = Swarm([triage, billing], "triage", model=model, interrupt_before=["billing"])
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        AgUiServer(swarm, InMemoryJournal(), token=TOKEN) as server,
        httpx.AsyncClient(headers=headers) as http,
    ):
        paused = await _post(http, server.url, _run_input("t6", "r1", "refund 5"))
        interrupt = _data(paused[-1])["outcome"]["interrupts"][0]
        approval = {"decision": "approve"}
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": approval}]
        resumed = await _post(http, server.url, _run_input("t6", "r2", "", resume=resume))

    check_sequence(resumed)
    customs = [_data(e)["name"] for e in [*paused, *resumed] if e.type == EventType.CUSTOM]
    assert customs == [HANDOFF]
    steps = [_data(e)["stepName"] for e in resumed if e.type == EventType.STEP_STARTED]
    assert steps == ["billing"]
    finished = _data(resumed[-1])
    assert (finished["result"], finished["usage"]) == ("Billing here.", [_usage(calls=1)])


@tool(needs_approval=True)
def connect(host: str, api_key: str, pin: int) -> str:
    """Connect to a host."""
    return json.dumps({"host": host, "session_token": "TOK-7", "pin": pin})


@tool
def lookup(pin: int) -> str:
    """Look a customer up."""
    return json.dumps({"name": "Ada", "pin": pin})


async def test_the_stream_never_carries_a_secret_keys_value() -> None:
    """Tool arguments, a tool's JSON result and a pause's arguments reach the client with
    secret keys' values as [redacted], by the swarm's own ``redact_keys``. Approving the
    paused call is refused (the journal withheld its secret arguments) and the client's
    edit giving them runs it; the values never come back down the stream."""
    model = ScriptedModel(
        tool_call("lookup", pin=907_351_628),
        tool_call("connect", host="db", api_key="KEY-7", pin=907_351_628),
        text("Connected."),
    )
    swarm = Swarm(
        [Agent(name="a", tools=[lookup, connect])],
        "a",
        model=model,
        redact_keys=["key", "token", "pin"],
    )
    journal = InMemoryJournal()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        AgUiServer(swarm, journal, token=TOKEN) as server,
        httpx.AsyncClient(headers=headers) as http,
    ):
        paused = await _post(http, server.url, _run_input("t9", "r1", "connect"))
        interrupt = _data(paused[-1])["outcome"]["interrupts"][0]

        def resume(decision: dict[str, Any]) -> list[dict[str, Any]]:
            entry = {"interruptId": interrupt["id"], "status": "resolved", "payload": decision}
            return [entry]

        refused = await _post(
            http, server.url, _run_input("t9", "r2", "", resume=resume({"decision": "approve"}))
        )
        values = {"host": "db", "api_key": "KEY-7", "pin": 907_351_628}
        edited = {"decision": "edit", "payload": values}
        resumed = await _post(http, server.url, _run_input("t9", "r3", "", resume=resume(edited)))

    streamed = json.dumps([_data(e) for e in paused + refused + resumed])
    assert "KEY-7" not in streamed and "TOK-7" not in streamed and "907351628" not in streamed
    arguments = [_data(e)["delta"] for e in paused if e.type == EventType.TOOL_CALL_ARGS]
    shown = {"host": "db", "api_key": "[redacted]", "pin": "[redacted]"}
    assert json.loads(arguments[1]) == shown
    assert interrupt["metadata"]["pending"]["payload"] == shown
    assert _data(refused[-1])["type"] == "RUN_ERROR"
    assert "keeps api_key, pin as '[redacted]'" in _data(refused[-1])["message"]
    results = [
        json.loads(_data(e)["content"])
        for e in paused + resumed
        if e.type == EventType.TOOL_CALL_RESULT
    ]
    assert results == [
        {"name": "Ada", "pin": "[redacted]"},
        {"host": "db", "session_token": "[redacted]", "pin": "[redacted]"},
    ]
    assert _data(resumed[-1])["result"] == "Connected."


async def test_ag_ui_events_hide_the_default_secret_words() -> None:
    """Without a redactor, the default words apply (``api_key``, ``session_token``)."""

    @tool
    def login(api_key: str) -> str:
        """Log in."""
        return json.dumps({"session_token": "TOK-9"})

    swarm = Swarm(
        [Agent(name="a", tools=[login])],
        "a",
        model=ScriptedModel(tool_call("login", api_key="KEY-9"), text("in")),
    )
    wires = [w async for w in ag_ui_events(swarm.stream("go"), thread_id="t", run_id="r")]
    assert "KEY-9" not in json.dumps(wires) and "TOK-9" not in json.dumps(wires)
