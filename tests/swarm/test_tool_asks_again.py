"""A tool that asks a person and is called again with the answer (``ToolResult(again=True)``)."""

from __future__ import annotations

import pytest

from swarmkit import Agent, ConfigurationError, RunContext, Swarm, ToolResult, tool
from swarmkit.context import Answer, context_from_data, context_to_data
from swarmkit.interrupts import Edit, edit, reject
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call
from swarmkit.tools import ToolOutcome, outcome_from_data, outcome_to_data

SCHEMA = {"type": "object", "properties": {"colour": {"type": "string"}}}


def _paint_swarm(calls: list[str], journal: InMemoryJournal) -> Swarm:
    @tool
    def paint(wall: str, ctx: RunContext) -> ToolResult | str:
        """Paint a wall, once a person chose the colour."""
        answer = ctx.answer
        calls.append("asked" if answer is None else answer.asked)
        if answer is None:
            return ToolResult(output="state-1", ask="Which colour?", ask_schema=SCHEMA, again=True)
        if isinstance(answer.decision, Edit):
            return f"painted {wall} {answer.decision.payload['colour']}"
        return f"left {wall} as it was"

    model = ScriptedModel(tool_call("paint", wall="north"), text("Done."))
    return Swarm([Agent(name="a", tools=[paint])], "a", model=model, journal=journal)


async def test_the_answer_reaches_the_tool_called_again_and_its_result_stands() -> None:
    """The pause shows the question and schema; the second call sees the decision and what
    the first returned; its result is the call's; replay calls the tool no more."""
    calls: list[str] = []
    journal = InMemoryJournal()
    swarm = _paint_swarm(calls, journal)

    paused = await swarm.run("paint it", session_id="s")
    assert paused.pending is not None
    assert paused.pending.payload == {"question": "Which colour?", "schema": SCHEMA}

    resumed = await swarm.resume("s", decision=edit(payload={"colour": "blue"}))

    assert resumed.final_output == "Done."
    assert [m.content for m in resumed.messages if getattr(m, "name", "") == "paint"] == [
        "painted north blue"
    ]
    assert calls == ["asked", "state-1"]
    replayed = await swarm.with_model(NeverCalledModel()).replay("s")
    assert (replayed.final_output, calls) == ("Done.", ["asked", "state-1"])


async def test_a_rejection_reaches_the_tool_called_again() -> None:
    """A rejected question is the tool's to answer, not an error of the loop's."""
    calls: list[str] = []
    swarm = _paint_swarm(calls, InMemoryJournal())
    await swarm.run("paint it", session_id="s")

    resumed = await swarm.resume("s", decision=reject("not now"))

    assert [m.content for m in resumed.messages if getattr(m, "name", "") == "paint"] == [
        "left north as it was"
    ]


def test_an_outcome_that_asks_again_round_trips_through_the_journal_codec() -> None:
    """The question's schema and the again flag survive the journal; other outcomes keep the
    record they always had."""
    result = ToolResult(output="s", ask="Which?", ask_schema=SCHEMA, again=True)
    outcome = ToolOutcome(content="s", is_error=False, result=result)
    data = outcome_to_data(outcome)
    back = outcome_from_data(data)
    assert back.result is not None
    assert (back.result.ask, back.result.ask_schema, back.result.again) == ("Which?", SCHEMA, True)
    plain = outcome_to_data(ToolOutcome(content="x", is_error=False, result=ToolResult(output="x")))
    assert "again" not in plain and "ask_schema" not in plain


def test_again_without_a_question_is_refused() -> None:
    """``again`` and ``ask_schema`` mean nothing without ``ask``: a ConfigurationError."""
    with pytest.raises(ConfigurationError, match="need ask"):
        ToolResult(output="x", again=True)


def test_the_answer_crosses_to_an_engine_with_the_run_context() -> None:
    """An engine's tool runner hands the context over as data: the answer goes with it."""
    context = RunContext(
        context={},
        agent="a",
        session_id="s",
        answer=Answer(decision=edit(payload={"colour": "blue"}), asked="state-1"),
    )
    back = context_from_data(context_to_data(context))
    assert back.answer == context.answer
    plain = context_to_data(RunContext(context={}, agent="a", session_id="s"))
    assert "answer" not in plain
