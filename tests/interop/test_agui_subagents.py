"""AG-UI's sub-agent and reasoning events: a delegated sub-run as a subagent whose events carry
its id, and a provider's reasoning as reasoning messages, validated by ag-ui-protocol."""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import BaseEvent

from swarmkit import Agent, ModelError, Swarm, tool
from swarmkit.agui import ag_ui_events
from swarmkit.journal import InMemoryJournal
from swarmkit.models import Model, ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, text, tool_call
from tests.interop.agui_helpers import check_sequence, wire_events
from tests.models.state_server import call, say, state_server
from tests.models.test_provider_state import anthropic


class _Down:
    """A model whose server is down."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("503 from the server", model="down", attempts=1)


def _data(event: BaseEvent) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(event.model_dump_json(by_alias=True, exclude_none=True))
    return data


async def _converted(swarm: Swarm, prompt: str) -> list[dict[str, Any]]:
    stream = swarm.stream(prompt, session_id="s", journal=InMemoryJournal())
    events = wire_events([e async for e in ag_ui_events(stream, thread_id="t", run_id="r")])
    check_sequence(events)
    return [_data(e) for e in events]


def _supervisor(helper_model: Model, boss_model: Model) -> Swarm:
    helper = Agent(name="helper", description="Looks orders up.", handoffs=[], model=helper_model)
    boss = Agent(name="boss", tools=[helper.as_tool()], handoffs=[], model=boss_model)
    return Swarm([boss, helper], "boss")


async def test_a_delegated_sub_run_is_a_subagent_whose_events_carry_its_id() -> None:
    """SUBAGENT_STARTED names the sub-run's session and the delegating call; the sub-run's
    step and message carry its id; SUBAGENT_FINISHED has its output; usage counts it."""
    boss_model = ScriptedModel(tool_call("ask_helper", input="A1?"), text("A1 shipped."))
    swarm = _supervisor(ScriptedModel(text("Order A1: shipped")), boss_model)
    events = await _converted(swarm, "where is A1?")

    (started,) = [e for e in events if e["type"] == "SUBAGENT_STARTED"]
    (delegation,) = [e for e in events if e["type"] == "TOOL_CALL_START"]
    sub = started["subagentRunId"]
    assert sub == f"s__swarm_helper_0_{delegation['toolCallId']}"
    assert (started["name"], started["parentToolCallId"]) == ("helper", delegation["toolCallId"])
    first, last = events.index(started), events.index({"type": "SUBAGENT_FINISHED",
                                                       "subagentRunId": sub,
                                                       "result": "Order A1: shipped"})  # fmt: skip
    inside = events[first + 1 : last]
    assert [e["type"] for e in inside] == [
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
    ]
    assert all(e["subagentRunId"] == sub for e in inside)
    outside = events[:first] + events[last + 1 :]
    assert all("subagentRunId" not in e for e in outside)
    (result,) = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert events.index(result) > last and result["content"] == "Order A1: shipped"
    (usage,) = events[-1]["usage"]
    assert usage["inputTokens"] == 30  # the boss's two calls and the helper's one


async def test_a_failed_sub_run_is_a_subagent_error_and_the_run_goes_on() -> None:
    """A sub-run that fails ends with SUBAGENT_ERROR; its caller answers regardless."""
    boss_model = ScriptedModel(tool_call("ask_helper", input="A1?"), text("Try later."))
    events = await _converted(_supervisor(_Down(), boss_model), "where is A1?")

    (error,) = [e for e in events if e["type"] == "SUBAGENT_ERROR"]
    assert error["code"] == "error"
    assert "ModelError: 503 from the server" in error["message"]
    assert (events[-1]["type"], events[-1]["result"]) == ("RUN_FINISHED", "Try later.")


async def test_a_sub_run_of_a_sub_run_names_its_parent_subagent() -> None:
    """Nested delegation: the inner SUBAGENT_STARTED carries parentSubagentRunId."""
    clerk = Agent(name="clerk", handoffs=[], model=ScriptedModel(text("filed")))
    helper = Agent(
        name="helper",
        tools=[clerk.as_tool()],
        handoffs=[],
        model=ScriptedModel(tool_call("ask_clerk", input="file it"), text("done")),
    )
    boss_model = ScriptedModel(tool_call("ask_helper", input="go"), text("all done"))
    boss = Agent(name="boss", tools=[helper.as_tool()], handoffs=[], model=boss_model)
    events = await _converted(Swarm([boss, helper, clerk], "boss"), "go")

    outer, inner = [e for e in events if e["type"] == "SUBAGENT_STARTED"]
    assert "parentSubagentRunId" not in outer
    assert inner["parentSubagentRunId"] == outer["subagentRunId"]
    (clerk_call,) = [
        e for e in events if e["type"] == "TOOL_CALL_START" and e["toolCallName"] == "ask_clerk"
    ]
    assert clerk_call["subagentRunId"] == outer["subagentRunId"]
    assert inner["parentToolCallId"] == clerk_call["toolCallId"]
    finished = [e["subagentRunId"] for e in events if e["type"] == "SUBAGENT_FINISHED"]
    assert finished == [inner["subagentRunId"], outer["subagentRunId"]]


async def test_a_providers_reasoning_is_a_reasoning_span_its_signature_encrypted() -> None:
    """Claude's thinking, streamed: a reasoning span with the thinking as a reasoning message
    and its signature as an encrypted value on it, before the answer's message."""
    async with state_server(
        call("ask_helper", input="A1?"), say("sub"), say("A1 shipped.")
    ) as server:
        model = anthropic(server)
        events = await _converted(_supervisor(model, model), "where is A1?")

    spans = [e for e in events if e["type"].startswith("REASONING")]
    assert [e["type"] for e in spans[:6]] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_ENCRYPTED_VALUE",
        "REASONING_END",
    ]
    thoughts = [(e.get("subagentRunId"), e["delta"]) for e in spans if "delta" in e]
    (sub,) = {e["subagentRunId"] for e in events if e["type"] == "SUBAGENT_STARTED"}
    assert thoughts == [(None, "plan 1"), (sub, "plan 2"), (None, "plan 3")]
    sealed = [e for e in spans if e["type"] == "REASONING_ENCRYPTED_VALUE"]
    assert [e["encryptedValue"] for e in sealed] == ["sig-1", "sig-2", "sig-3"]
    assert sealed[0]["entityId"] == spans[1]["messageId"] and sealed[0]["subtype"] == "message"
    # Streamed, the answer's text arrives first; its reasoning comes with the finished call.
    tail = [e["type"] for e in events if e["type"] != "STATE_SNAPSHOT"][-11:]
    assert tail == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_ENCRYPTED_VALUE",
        "REASONING_END",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]


@tool(needs_approval=True)
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


async def test_a_sub_run_that_pauses_is_a_suspended_subagent() -> None:
    """A sub-run waiting for an approval ends its segment as suspended, not as a success."""
    helper_model = ScriptedModel(tool_call("refund", order="A1"))
    helper = Agent(name="helper", tools=[refund], handoffs=[], model=helper_model)
    boss_model = ScriptedModel(tool_call("ask_helper", input="refund A1"), text("Waiting."))
    boss = Agent(name="boss", tools=[helper.as_tool()], handoffs=[], model=boss_model)
    events = await _converted(Swarm([boss, helper], "boss"), "refund A1")

    (started,) = [e for e in events if e["type"] == "SUBAGENT_STARTED"]
    (finished,) = [e for e in events if e["type"] == "SUBAGENT_FINISHED"]
    assert finished == {
        "type": "SUBAGENT_FINISHED",
        "subagentRunId": started["subagentRunId"],
        "outcome": {"type": "suspended"},
    }
