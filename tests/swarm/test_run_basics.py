"""A run's basic shape: answers, handoffs, trails, usage and the per-run independence."""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest
from pydantic import BaseModel

from swarmkit import Agent, Handoff, ModelError, RunContext, RunError, Swarm, ToolResult, tool
from swarmkit.messages import AssistantMessage, ToolMessage, UserMessage
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, raw_tool_call, text, tool_call, transfer, turn

from .conftest import tool_names


async def test_entry_agent_answers_without_handoff() -> None:
    """An agent that answers in text ends the run with that text as the final output."""
    model = ScriptedModel(text("Hello!"))
    swarm = Swarm([Agent(name="solo", instructions="Be nice.")], "solo", model=model)

    result = await swarm.run("hi")

    assert result.final_output == "Hello!"
    assert result.stop_reason == "final_output"
    assert result.trail == ("solo",)
    assert result.final_agent == "solo"
    model.assert_exhausted()


async def test_llm_transfer_runs_the_target_agent() -> None:
    """A transfer_to_<name> call switches the active agent, who then answers."""
    model = ScriptedModel(transfer("billing"), text("Refund issued."))
    swarm = Swarm([Agent(name="triage"), Agent(name="billing")], "triage", model=model)

    result = await swarm.run("refund please")

    assert result.final_output == "Refund issued."
    assert result.trail == ("triage", "billing")
    assert [(h.source, h.target, h.decided_by) for h in result.handoffs] == [
        ("triage", "billing", "llm")
    ]
    assert result.stop_reason == "final_output"
    model.assert_exhausted()


async def test_request_carries_instructions_history_and_transfer_tools() -> None:
    """The model sees the agent's instructions, the prompt, and a transfer tool per peer."""
    model = ScriptedModel(text("ok"))
    triage = Agent(name="triage", instructions="Route tickets.")
    swarm = Swarm([triage, Agent(name="billing"), Agent(name="tech")], "triage", model=model)

    await swarm.run("hi")

    request = model.requests[0]
    assert request.messages[0].kind == "system"
    assert request.messages[0].content == "Route tickets."
    assert request.messages[1] == UserMessage(content="hi")
    assert tool_names(request) == ["transfer_to_billing", "transfer_to_tech"]


async def test_agent_never_gets_a_tool_to_transfer_to_itself() -> None:
    """With handoffs=None an agent may hand off to every peer but itself."""
    model = ScriptedModel(transfer("b"), text("done"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model)

    await swarm.run("x")

    assert tool_names(model.requests[0]) == ["transfer_to_b"]
    assert tool_names(model.requests[1]) == ["transfer_to_a"]


async def test_explicit_empty_handoffs_offers_no_transfer_tools() -> None:
    """handoffs=[] means the agent must answer itself."""
    model = ScriptedModel(text("mine"))
    swarm = Swarm([Agent(name="a", handoffs=[]), Agent(name="b")], "a", model=model)

    await swarm.run("x")

    assert tool_names(model.requests[0]) == []


async def test_function_tool_result_goes_back_to_the_model() -> None:
    """A tool call runs the function and its result is the next request's tool message."""

    @tool
    def lookup(invoice_id: str) -> str:
        """Look up an invoice."""
        return f"invoice {invoice_id}: 42 EUR"

    model = ScriptedModel(tool_call("lookup", invoice_id="A-1"), text("It is 42 EUR."))
    swarm = Swarm([Agent(name="billing", tools=[lookup])], "billing", model=model)

    result = await swarm.run("how much?")

    last = model.requests[1].messages[-1]
    assert isinstance(last, ToolMessage)
    assert last.content == "invoice A-1: 42 EUR"
    assert result.final_output == "It is 42 EUR."


async def test_malformed_tool_arguments_do_not_crash_the_run() -> None:
    """Malformed JSON from the model becomes an error result the model can react to."""

    @tool
    def lookup(invoice_id: str) -> str:
        """Look up an invoice."""
        return invoice_id

    model = ScriptedModel(raw_tool_call("lookup", '{"invoice_id": '), text("Sorry."))
    swarm = Swarm([Agent(name="billing", tools=[lookup])], "billing", model=model)

    result = await swarm.run("x")

    error = model.requests[1].messages[-1]
    assert isinstance(error, ToolMessage) and error.is_error
    assert result.final_output == "Sorry."


async def test_unknown_tool_gets_an_error_result_listing_the_real_tools() -> None:
    """A hallucinated tool name is answered with the available tools, and the run goes on."""
    model = ScriptedModel(tool_call("delete_everything"), text("ok"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model)

    result = await swarm.run("x")

    error = model.requests[1].messages[-1]
    assert isinstance(error, ToolMessage) and error.is_error
    assert "delete_everything" in error.content and "transfer_to_b" in error.content
    assert result.stop_reason == "final_output"


async def test_tool_error_is_returned_to_the_model() -> None:
    """A tool that raises yields an error result; the run does not crash."""

    @tool
    def explode() -> str:
        """Fail."""
        raise RuntimeError("disk on fire")

    model = ScriptedModel(tool_call("explode"), text("handled"))
    swarm = Swarm([Agent(name="a", tools=[explode])], "a", model=model)

    result = await swarm.run("x")

    error = model.requests[1].messages[-1]
    assert isinstance(error, ToolMessage) and error.is_error and "disk on fire" in error.content
    assert result.final_output == "handled"


class Refund(BaseModel):
    """A refund request."""

    invoice_id: str
    amount: float


async def test_typed_payload_reaches_the_receiving_agent_and_its_tools() -> None:
    """The validated payload is in the target's instructions, its tools' context and the record."""
    seen: list[object] = []

    @tool
    def issue_refund(ctx: RunContext) -> str:
        """Issue the refund from the handoff payload."""
        seen.append(ctx.payload)
        return "refunded"

    billing = Agent(name="billing", tools=[issue_refund])
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    model = ScriptedModel(
        transfer("billing", invoice_id="A-1", amount=12.5),
        tool_call("issue_refund"),
        text("Done."),
    )
    swarm = Swarm([triage, billing], "triage", model=model)

    result = await swarm.run("refund A-1")

    assert seen == [Refund(invoice_id="A-1", amount=12.5)]
    assert result.handoffs[0].payload == {"invoice_id": "A-1", "amount": 12.5}
    system = model.requests[1].messages[0]
    assert system.kind == "system" and '"invoice_id": "A-1"' in system.content


async def test_invalid_typed_payload_goes_back_to_the_model_to_retry() -> None:
    """A payload that fails validation is an error result; a corrected call then hands off."""
    billing = Agent(name="billing")
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    model = ScriptedModel(
        transfer("billing", invoice_id="A-1", amount="lots"),
        transfer("billing", invoice_id="A-1", amount=3),
        text("Done."),
    )
    swarm = Swarm([triage, billing], "triage", model=model)

    result = await swarm.run("refund")

    error = model.requests[1].messages[-1]
    assert isinstance(error, ToolMessage) and error.is_error and "amount" in error.content
    assert result.trail == ("triage", "billing")
    assert result.stop_reason == "final_output"


async def test_tool_result_can_update_context_and_hand_off() -> None:
    """A tool's ToolResult updates the run context and its goto hands off (decided by tool)."""

    @tool
    def classify() -> ToolResult:
        """Classify the ticket."""
        return ToolResult(output="billing ticket", update={"category": "billing"}, goto="billing")

    model = ScriptedModel(tool_call("classify"), text("Billing here."))
    swarm = Swarm(
        [Agent(name="triage", tools=[classify]), Agent(name="billing")], "triage", model=model
    )

    result = await swarm.run("x")

    assert result.context == {"category": "billing"}
    assert [(h.target, h.decided_by) for h in result.handoffs] == [("billing", "tool")]
    assert result.final_output == "Billing here."


async def test_tool_goto_to_unknown_agent_is_refused_not_fatal() -> None:
    """A tool naming an agent that does not exist gets a refusal; the run continues."""

    @tool
    def route() -> ToolResult:
        """Route."""
        return ToolResult(output="routing", goto="nobody")

    model = ScriptedModel(tool_call("route"), text("fine"))
    swarm = Swarm([Agent(name="a", tools=[route])], "a", model=model)

    result = await swarm.run("x")

    assert result.final_output == "fine"
    assert result.handoffs == ()
    assert "nobody" in result.refusals[0]


async def test_legacy_handoff_tool_with_a_hallucinated_target_is_an_error_result() -> None:
    """The legacy handoff(target) tool refuses names that are not peers, and the run goes on."""
    model = ScriptedModel(tool_call("handoff", target="ghost", message=""), text("ok"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model, legacy_handoff_tool=True)

    result = await swarm.run("x")

    assert tool_names(model.requests[0]) == ["handoff"]
    error = model.requests[1].messages[-1]
    assert isinstance(error, ToolMessage) and error.is_error
    assert result.handoffs == ()


async def test_legacy_handoff_tool_hands_off_with_its_message() -> None:
    """handoff(target, message) switches agents and the message reaches the target."""
    model = ScriptedModel(tool_call("handoff", target="b", message="VIP customer"), text("hi VIP"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model, legacy_handoff_tool=True)

    result = await swarm.run("x")

    assert result.handoffs[0].message == "VIP customer"
    assert "VIP customer" in str(model.requests[1].messages[0].content)


async def test_usage_is_recorded_per_agent() -> None:
    """Token usage is summed per agent and in total."""
    model = ScriptedModel(transfer("b"), text("x"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model)

    result = await swarm.run("x")

    assert result.usage["a"].total_tokens == 15
    assert result.usage["b"].total_tokens == 15
    assert result.total_usage.total_tokens == 30
    assert result.turns == 2


async def test_one_swarm_serves_concurrent_runs_independently() -> None:
    """Runs share no state: two concurrent runs each get their own trail and answer."""
    model = ScriptedModel(
        per_agent={"a": [transfer("b"), text("a-answer")], "b": [text("b-answer")]}
    )
    swarm = Swarm([Agent(name="a"), Agent(name="b", handoffs=[])], "a", model=model)

    first, second = await asyncio.gather(swarm.run("one"), swarm.run("two"))

    assert {first.final_output, second.final_output} == {"a-answer", "b-answer"}
    assert first.session_id != second.session_id


def test_run_sync_runs_without_an_event_loop() -> None:
    """run_sync wraps run for synchronous code."""
    swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("sync")))

    assert swarm.run_sync("x").final_output == "sync"


class _Failing:
    """A model whose API is down."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("API down after 3 attempts", model="m", attempts=3)


async def test_model_failure_ends_the_run_with_stop_reason_error() -> None:
    """A model that fails after its retries ends the run with a result, not a crash."""
    swarm = Swarm([Agent(name="a")], "a", model=_Failing())

    result = await swarm.run("x")

    assert result.stop_reason == "error"
    assert result.error is not None and "API down" in str(result.error)


async def test_assistant_messages_are_attributed_to_their_agent() -> None:
    """The run's messages say which agent spoke."""
    model = ScriptedModel(transfer("b"), text("from b"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model)

    result = await swarm.run("x")

    speakers = [m.agent for m in result.messages if isinstance(m, AssistantMessage)]
    assert speakers == ["a", "b"]


async def test_two_handoffs_in_one_turn_first_wins_after_other_tools_ran() -> None:
    """Other tool calls run first; the first handoff is taken; the second is told it was not."""
    ran: list[str] = []

    @tool
    def note() -> str:
        """Take a note."""
        ran.append("note")
        return "noted"

    model = ScriptedModel(
        turn(transfer("b"), tool_call("note"), transfer("c")),
        text("b answers"),
    )
    swarm = Swarm(
        [Agent(name="a", tools=[note]), Agent(name="b"), Agent(name="c")], "a", model=model
    )

    result = await swarm.run("x")

    assert ran == ["note"]
    assert result.trail == ("a", "b")
    results = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert [r.name for r in results] == ["transfer_to_b", "note", "transfer_to_c"]
    assert "not taken" in results[2].content and results[2].is_error
    assert not results[0].is_error


@pytest.mark.parametrize("pass_full_history", [True, False])
async def test_pass_full_history_decides_what_the_target_sees(pass_full_history: bool) -> None:
    """With full history the target sees the whole conversation; without, only the latest input."""
    model = ScriptedModel(turn(transfer("b"), content="let me pass you on"), text("done"))
    swarm = Swarm(
        [Agent(name="a"), Agent(name="b")], "a", model=model, pass_full_history=pass_full_history
    )

    await swarm.run("question")

    seen = model.requests[1].messages[1:]
    if pass_full_history:
        assert [m.kind for m in seen] == ["user", "assistant", "tool"]
    else:
        assert seen == (UserMessage(content="question"),)


async def test_legacy_handoff_tool_lists_peers_with_their_descriptions() -> None:
    """The single handoff tool tells the model whom it can pick and what each peer does."""
    model = ScriptedModel(text("ok"))
    peers = [Agent(name="a"), Agent(name="b", description="Handles billing.")]
    swarm = Swarm(peers, "a", model=model, legacy_handoff_tool=True)

    await swarm.run("x")

    spec = model.requests[0].tools[0]
    assert spec.name == "handoff" and "Handles billing." in spec.description
    assert spec.parameters["properties"]["target"]["enum"] == ["b"]


async def test_run_sync_inside_a_running_loop_says_to_await_run() -> None:
    """From async code (or Jupyter) run_sync raises RunError, with no never-awaited warning."""
    swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("hi")))

    with warnings.catch_warnings():
        # Only this warning: collecting garbage may also finalise other tests' leftovers.
        warnings.filterwarnings("error", message=".*never awaited", category=RuntimeWarning)
        with pytest.raises(RunError, match=r"await swarm\.run\(\.\.\.\)"):
            swarm.run_sync("hi")
        gc.collect()
