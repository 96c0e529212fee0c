"""swarmkit.testing: the scripted model users write their own tests with."""

from __future__ import annotations

from typing import Any

import pytest

from swarmkit import Agent, ConfigurationError, Swarm
from swarmkit.events import TextDelta as TextDeltaEvent
from swarmkit.messages import SystemMessage, UserMessage
from swarmkit.models import ModelRequest, ModelResponse, TextDelta, ToolCallDelta
from swarmkit.testing import (
    NeverCalledModel,
    RecordingModel,
    ScriptedModel,
    ScriptExhaustedError,
    raw_tool_call,
    text,
    tool_call,
    transfer,
    turn,
)


def _request(agent: str = "triage") -> ModelRequest:
    return ModelRequest(
        messages=(SystemMessage(content="Route."), UserMessage(content="hi")), agent=agent
    )


async def test_turns_are_served_in_order_and_requests_recorded() -> None:
    """Each request gets the next scripted turn; every request is kept for assertions."""
    model = ScriptedModel(tool_call("lookup", invoice_id="A-1"), text("done"))

    first = await model.respond(_request())
    second = await model.respond(_request())

    assert first.message.tool_calls[0].name == "lookup"
    assert first.message.tool_calls[0].arguments == '{"invoice_id": "A-1"}'
    assert first.finish_reason == "tool_calls"
    assert second.message.content == "done" and second.finish_reason == "stop"
    assert len(model.requests) == 2
    model.assert_exhausted()


async def test_transfer_calls_the_normalised_transfer_tool() -> None:
    """transfer("billing team") calls transfer_to_billing_team with the payload fields."""
    model = ScriptedModel(transfer("billing team", invoice_id="A-1"))

    response = await model.respond(_request())

    call = response.message.tool_calls[0]
    assert call.name == "transfer_to_billing_team"
    assert call.arguments == '{"invoice_id": "A-1"}'


async def test_turn_combines_several_calls_with_unique_ids() -> None:
    """turn(...) makes one answer of several calls, each with its own id."""
    model = ScriptedModel(turn(tool_call("a"), raw_tool_call("b", "{bad"), content="two"))

    response = await model.respond(_request())

    assert [c.name for c in response.message.tool_calls] == ["a", "b"]
    assert response.message.tool_calls[1].arguments == "{bad"
    assert len({c.id for c in response.message.tool_calls}) == 2
    assert response.message.content == "two"


async def test_running_out_of_script_fails_loudly_with_the_request() -> None:
    """A request beyond the script raises, naming the agent and the last message."""
    model = ScriptedModel()

    with pytest.raises(ScriptExhaustedError, match=r"'triage'.*hi"):
        await model.respond(_request())


def test_unused_turns_fail_assert_exhausted() -> None:
    """assert_exhausted fails while scripted turns are left."""
    model = ScriptedModel(text("never asked"))

    with pytest.raises(ScriptExhaustedError, match="1 scripted turn"):
        model.assert_exhausted()


async def test_per_agent_scripts_serve_each_agent_its_own_turns() -> None:
    """per_agent scripts are picked by the request's agent."""
    model = ScriptedModel(per_agent={"a": [text("from a")], "b": [text("from b")]})

    b = await model.respond(_request("b"))
    a = await model.respond(_request("a"))

    assert (a.message.content, b.message.content) == ("from a", "from b")


async def test_turn_pinned_to_an_agent_refuses_another() -> None:
    """A turn scripted for one agent fails when another agent asks for it."""
    model = ScriptedModel(text("x", for_agent="billing"))

    with pytest.raises(ScriptExhaustedError, match="billing"):
        await model.respond(_request("triage"))


async def test_stream_yields_deltas_then_the_response() -> None:
    """Streaming gives text and tool-call pieces, then the complete response last."""
    model = ScriptedModel(turn(tool_call("lookup", invoice_id="A-1"), content="one two"))

    items = [item async for item in model.stream(_request())]

    text_pieces = [i.text for i in items if isinstance(i, TextDelta)]
    call_pieces = [i.arguments for i in items if isinstance(i, ToolCallDelta)]
    assert "".join(text_pieces) == "one two"
    assert "".join(call_pieces) == '{"invoice_id": "A-1"}'
    assert isinstance(items[-1], ModelResponse)


async def test_tool_arguments_may_be_named_agent() -> None:
    """A tool argument called `agent` is an argument, not the turn's agent pin."""
    model = ScriptedModel(tool_call("assign", agent="ann"))

    response = await model.respond(_request())

    assert response.message.tool_calls[0].arguments == '{"agent": "ann"}'


async def test_recording_model_counts_and_keeps_requests() -> None:
    """RecordingModel passes requests on and keeps them."""
    model = RecordingModel(ScriptedModel(text("hi")))

    response = await model.respond(_request())

    assert response.message.content == "hi"
    assert model.calls == 1 and model.requests[0].agent == "triage"


async def test_never_called_model_fails_when_called() -> None:
    """NeverCalledModel proves a replay made no model call."""
    with pytest.raises(ScriptExhaustedError, match="no model call was expected"):
        await NeverCalledModel().respond(_request())


async def test_recording_model_keeps_a_streamed_run_streamed() -> None:
    """Wrapping a streaming model, a streamed run still gets the model's text deltas."""
    recording = RecordingModel(ScriptedModel(text("two words")))
    swarm = Swarm([Agent(name="a")], "a", model=recording)

    events = [e async for e in swarm.stream("hi")]

    assert [e.text for e in events if isinstance(e, TextDeltaEvent)] == ["two ", "words"]
    assert recording.calls == 1


_UNTYPED: Any = ScriptedModel
NOT_TURNS: list[tuple[Any, str]] = [
    (lambda: _UNTYPED([text("hi")]), r"got list .*pass turns one by one"),
    (lambda: _UNTYPED("hi"), r"got str 'hi'"),
    (lambda: _UNTYPED(per_agent={"a": [text("hi"), None]}), r"per_agent\['a'\] .*NoneType"),
]
"""Scripts a type checker would refuse, written as an untyped caller writes them."""


@pytest.mark.parametrize(("build", "says"), NOT_TURNS)
def test_a_script_that_is_not_turns_is_refused_when_built(build: Any, says: str) -> None:
    """A list passed whole, a plain string or a stray value fails at construction with what
    to pass instead, not deep inside the first run."""
    with pytest.raises(ConfigurationError, match=says):
        build()
