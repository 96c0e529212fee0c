"""Every kind of AG-UI event swarmkit emits, in both its forms: each JSON object of
``ag_ui_events`` is what ag-ui-protocol's models read back unchanged, and each SSE message of
``ag_ui_sse`` (what the endpoint sends) is that object's JSON, byte for byte."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from swarmkit import Agent, Handoff, ModelError, Swarm, UsageLimits, tool
from swarmkit.agui import ag_ui_events, ag_ui_sse
from swarmkit.agui._sse import SseStream
from swarmkit.events import Event, TextDelta
from swarmkit.lowlevel import stream_written
from swarmkit.messages import AssistantMessage, ProviderState
from swarmkit.models import AttemptDiscarded, ModelRequest, ModelResponse, Usage
from swarmkit.models import TextDelta as ModelTextDelta
from swarmkit.testing import ScriptedModel, text, tool_call, transfer
from tests.interop.agui_helpers import check_sequence, sse_events, wire_events


class Refund(BaseModel):
    """A refund."""

    amount: int


class Verdict(BaseModel):
    """A structured answer."""

    approved: bool
    note: str


@tool(needs_approval=True)
def pay(amount: int) -> str:
    """Pay a refund."""
    return f"paid {amount}"


@tool
def look_up(order: str) -> str:
    """Look an order up."""
    return f'{order}: "shipped"\nno refund yet'


class _Thinking:
    """A provider that thinks before it answers (Claude's signed thinking), not streaming."""

    def __init__(self, *answers: str) -> None:
        self._answers = list(answers)

    async def respond(self, request: ModelRequest) -> ModelResponse:
        thinking = {"blocks": [{"thinking": "plan é", "signature": "sig-1"}, {"data": "sealed"}]}
        state = ProviderState(provider="anthropic", data=thinking)
        message = AssistantMessage(content=self._answers.pop(0), provider_state=state)
        return ModelResponse(message=message, usage=Usage(prompt_tokens=7, completion_tokens=3))


class _Down:
    """A model whose API fails for good."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("the API said 401", model="gpt-x", attempts=1, status_code=401)


def _handoff_tool_text() -> AsyncIterator[Event]:
    """A handoff, one refused (back to the agent before: a cycle), a tool's call and result,
    streamed text."""
    model = ScriptedModel(
        transfer("billing", amount=5),
        transfer("triage"),
        tool_call("look_up", order="A1"),
        text('Refunded "A1" — five.\n'),
    )
    billing = Agent(name="billing", tools=[look_up])
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    swarm = Swarm([triage, billing], "triage", model=model)
    return swarm.stream("refund A1", session_id="s", context={"tier": "gold", "n": [1, None]})


def _approval() -> AsyncIterator[Event]:
    """A run that pauses for a tool's approval: RUN_FINISHED with an interrupt."""
    model = ScriptedModel(tool_call("pay", amount=5))
    return Swarm([Agent(name="billing", tools=[pay])], "billing", model=model).stream("pay 5")


def _sub_runs() -> AsyncIterator[Event]:
    """A sub-run that delegates in turn, one that fails, one that pauses."""
    clerk = Agent(name="clerk", handoffs=[], model=ScriptedModel(text("filed")))
    helper = Agent(
        name="helper",
        tools=[clerk.as_tool(), pay],
        handoffs=[],
        model=ScriptedModel(tool_call("ask_clerk", input="file it"), text("done")),
    )
    broken = Agent(name="broken", handoffs=[], model=_Down())
    payer = Agent(
        name="payer", tools=[pay], handoffs=[], model=ScriptedModel(tool_call("pay", amount=1))
    )
    boss_model = ScriptedModel(
        tool_call("ask_helper", input="go"),
        tool_call("ask_broken", input="go"),
        tool_call("ask_payer", input="pay"),
        text("all done"),
    )
    tools = [helper.as_tool(), broken.as_tool(), payer.as_tool()]
    boss = Agent(name="boss", tools=tools, handoffs=[], model=boss_model)
    return Swarm([boss, helper, clerk, broken, payer], "boss").stream("go", session_id="b")


def _reasoning_structured() -> AsyncIterator[Event]:
    """Reasoning (readable and sealed) with an answer that did not stream, then a
    structured output."""
    verdict = '{"approved": true, "note": "ok \\u00e9"}'
    agent = Agent(name="judge", output_type=Verdict, model=_Thinking(verdict))
    return Swarm([agent], "judge").stream("judge it")


def _limit() -> AsyncIterator[Event]:
    """A run a usage limit stops: RUN_ERROR with the usage it spent."""
    model = ScriptedModel(tool_call("look_up", order="A"), tool_call("look_up", order="B"))
    swarm = Swarm([Agent(name="clerk", tools=[look_up])], "clerk", model=model)
    return swarm.stream("look", limits=UsageLimits(max_model_calls=1))


def _failure() -> AsyncIterator[Event]:
    """A run whose model fails: RUN_ERROR without usage."""
    return Swarm([Agent(name="triage")], "triage", model=_Down()).stream("go")


RUNS: dict[str, Callable[[], AsyncIterator[Event]]] = {
    "handoff, tool and text": _handoff_tool_text,
    "approval": _approval,
    "sub-runs": _sub_runs,
    "reasoning and structured output": _reasoning_structured,
    "usage limit": _limit,
    "failure": _failure,
}

KINDS = {
    "RUN_STARTED",
    "STEP_STARTED",
    "STEP_FINISHED",
    "STATE_SNAPSHOT",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "TOOL_CALL_RESULT",
    "CUSTOM",
    "SUBAGENT_STARTED",
    "SUBAGENT_FINISHED",
    "SUBAGENT_ERROR",
    "REASONING_START",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_ENCRYPTED_VALUE",
    "REASONING_END",
    "RUN_FINISHED",
    "RUN_ERROR",
}
"""Every event type swarmkit emits (it sends whole state snapshots, never STATE_DELTA)."""


async def _both_forms(run: Callable[[], AsyncIterator[Event]]) -> tuple[list[Any], list[str]]:
    """The run's events as objects and as SSE messages, ids alike in both."""
    events = [event async for event in run()]

    async def replay() -> AsyncIterator[Event]:
        for event in events:
            yield event

    def ids() -> Callable[[], str]:
        counter = itertools.count()
        return lambda: f"id-{next(counter)}"

    objects = [o async for o in ag_ui_events(replay(), thread_id="t", run_id="r", new_id=ids())]
    messages = [m async for m in ag_ui_sse(replay(), thread_id="t", run_id="r", new_id=ids())]
    return objects, messages


def _sse(objects: Sequence[Any]) -> list[str]:
    """The objects as SSE messages, each encoded on its own."""
    return [
        f"data: {json.dumps(o, ensure_ascii=False, separators=(',', ':'))}\n\n" for o in objects
    ]


@pytest.mark.parametrize("name", RUNS)
async def test_each_event_parses_with_the_protocols_models_in_both_forms(name: str) -> None:
    """Objects and SSE messages alike are valid AG-UI events in a valid order, and the SSE
    messages are the objects' JSON exactly."""
    objects, messages = await _both_forms(RUNS[name])

    check_sequence(wire_events(objects))
    check_sequence(sse_events("".join(messages)))
    assert messages == _sse(objects)


async def test_the_runs_cover_every_kind_of_event_swarmkit_emits() -> None:
    """The runs above between them emit every event type, each outcome and both handoff
    names, so the test above checks all of them."""
    objects: list[Any] = []
    for run in RUNS.values():
        objects.extend((await _both_forms(run))[0])

    assert {o["type"] for o in objects} == KINDS
    customs = {o["name"] for o in objects if o["type"] == "CUSTOM"}
    assert customs == {"swarmkit.handoff", "swarmkit.handoff_refused"}
    outcomes = {o["outcome"]["type"] for o in objects if "outcome" in o}
    assert outcomes == {"success", "interrupt", "suspended"}
    assert {"usage" in o for o in objects if o["type"] == "RUN_ERROR"} == {True, False}


async def _raising() -> AsyncIterator[Event]:
    async for event in _failure():
        yield event
        raise ModelError("the connection dropped", model="gpt-x", attempts=1)


async def test_a_swarmkit_error_mid_stream_ends_the_sse_stream_with_run_error() -> None:
    """An error raised once the stream has begun is told as the last event, RUN_ERROR."""
    messages = [m async for m in ag_ui_sse(_raising(), thread_id="t", run_id="r")]

    events = sse_events("".join(messages))
    last = json.loads(messages[-1].removeprefix("data: "))
    assert [e.type.value for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert last == {"type": "RUN_ERROR", "message": "the connection dropped", "code": "ModelError"}


class _Retried:
    """A streaming model whose first attempt breaks off after a word and is retried."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(message=AssistantMessage(content="Hello there"), usage=Usage())

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        yield ModelTextDelta(text="Hel")
        yield AttemptDiscarded(attempt=1, reason="http_503")
        for piece in ("Hello", " there"):
            yield ModelTextDelta(text=piece)
        yield await self.respond(request)


def _tool_and_text() -> Swarm:
    model = ScriptedModel(tool_call("look_up", order="A1"), text('Found "A1" — shipped.\n'))
    return Swarm([Agent(name="clerk", tools=[look_up])], "clerk", model=model)


def _delegated() -> Swarm:
    aide = Agent(name="aide", handoffs=[], model=ScriptedModel(text("on it")))
    model = ScriptedModel(tool_call("ask_aide", input="go"), text("all done"))
    boss = Agent(name="boss", tools=[aide.as_tool()], handoffs=[], model=model)
    return Swarm([boss, aide], "boss")


def _observed() -> Swarm:
    async def watch(events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        async for event in events:
            yield event

    return _tool_and_text().with_observers(watch)


WRITTEN: dict[str, Callable[[], Swarm]] = {
    "tool and text": _tool_and_text,
    "a retried stream": lambda: Swarm([Agent(name="clerk")], "clerk", model=_Retried()),
    "delegated": _delegated,
    "observed": _observed,
}
"""Swarms whose streamed runs the endpoint writes (an observed one streams TextDelta events)."""


def _ids() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"id-{next(counter)}"


@pytest.mark.parametrize("name", WRITTEN)
async def test_the_endpoint_writes_the_runs_text_as_the_sse_of_its_events(name: str) -> None:
    """The endpoint's stream, each piece of text written where the run makes it, is byte for
    byte the SSE of the same run's events."""
    told = WRITTEN[name]().stream("go", session_id="s")
    expected = [m async for m in ag_ui_sse(told, thread_id="t", run_id="r", new_id=_ids())]
    stream = SseStream(thread_id="t", run_id="r", new_id=_ids(), redactor=None)
    kinds: set[type] = set()

    async def seen(items: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in items:
            kinds.add(type(item))
            yield item

    written = stream_written(WRITTEN[name](), "go", text=stream.text, session_id="s")
    messages = [m async for m in stream.messages(seen(written))]

    assert "".join(messages) == "".join(expected)
    check_sequence(sse_events("".join(messages)))
    assert (str in kinds, TextDelta in kinds) == (
        (False, True) if name == "observed" else (True, False)
    )
