"""Tool arguments nested far past the recursion limit: a tool error the model reads, never a
raw RecursionError, and the session stays resumable and replayable (issue 33, finding 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from swarmkit import (
    Agent,
    ConfigurationError,
    FunctionTool,
    Handoff,
    SQLiteJournal,
    Swarm,
    approve,
    tool,
)
from swarmkit.bounds import MAX_JSON_DEPTH, json_depth, load_json, value_depth
from swarmkit.messages import ToolMessage
from swarmkit.testing import ScriptedModel, ScriptExhaustedError, raw_tool_call, text, turn

DEEP = '{"query": ' + "[" * 100_000 + "]" * 100_000 + "}"


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def _swarm(model: ScriptedModel, journal: SQLiteJournal) -> Swarm:
    return Swarm([Agent(name="a", tools=[lookup])], "a", model=model, journal=journal)


def _tool_answers(model: ScriptedModel) -> list[str]:
    return [m.content for r in model.requests for m in r.messages if isinstance(m, ToolMessage)]


async def test_run_answers_deep_arguments_with_a_tool_error(tmp_path: Path) -> None:
    """run() sends the model a readable error for arguments nested 100,000 deep and goes on."""
    model = ScriptedModel(turn(raw_tool_call("lookup", DEEP)), text("sorry"))

    result = await _swarm(model, SQLiteJournal(tmp_path / "j.db")).run("hi", session_id="s")

    assert result.final_output == "sorry"
    (answer,) = _tool_answers(model)
    assert "invalid arguments for tool 'lookup'" in answer
    assert f"more than the {MAX_JSON_DEPTH} allowed" in answer
    model.assert_exhausted()


async def test_stream_answers_deep_arguments_with_a_tool_error(tmp_path: Path) -> None:
    """stream() yields the tool's error result and finishes instead of raising."""
    model = ScriptedModel(turn(raw_tool_call("lookup", DEEP)), text("sorry"))
    swarm = _swarm(model, SQLiteJournal(tmp_path / "j.db"))

    kinds = [event.kind async for event in swarm.stream("hi", session_id="s")]

    assert "tool_resulted" in kinds
    assert kinds[-1] == "run_finished"
    assert "more than the" in _tool_answers(model)[0]


async def test_a_crashed_run_with_deep_arguments_resumes(tmp_path: Path) -> None:
    """A run that failed after a deep call was journaled resumes from its journal."""
    journal = SQLiteJournal(tmp_path / "j.db")
    crashing = ScriptedModel(turn(raw_tool_call("lookup", DEEP)))
    with pytest.raises(ScriptExhaustedError):  # the run dies after the tool step
        await _swarm(crashing, journal).run("hi", session_id="s")

    resumed = await _swarm(ScriptedModel(text("sorry")), journal).resume("s")

    assert resumed.final_output == "sorry"


async def test_a_session_with_deep_arguments_replays(tmp_path: Path) -> None:
    """replay() of a session holding a deep call gives the recorded result, no model call."""
    journal = SQLiteJournal(tmp_path / "j.db")
    model = ScriptedModel(turn(raw_tool_call("lookup", DEEP)), text("sorry"))
    await _swarm(model, journal).run("hi", session_id="s")

    replayed = await _swarm(ScriptedModel(), journal).replay("s")
    executed = await _swarm(ScriptedModel(), journal).replay("s", tools="execute")

    assert replayed.final_output == executed.final_output == "sorry"


async def test_deep_arguments_to_an_approval_tool_pause_and_resume(tmp_path: Path) -> None:
    """A needs_approval tool called with deep arguments pauses with a readable payload, and an
    approval answers the call with the argument error."""

    @tool(needs_approval=True)
    def pay(query: str) -> str:
        """Pay."""
        return "paid"

    journal = SQLiteJournal(tmp_path / "j.db")
    first = ScriptedModel(turn(raw_tool_call("pay", DEEP)))
    swarm = Swarm([Agent(name="a", tools=[pay])], "a", model=first, journal=journal)
    paused = await swarm.run("hi", session_id="s")
    assert paused.stop_reason == "interrupted"
    assert paused.pending is not None and paused.pending.payload == {"raw": DEEP}

    second = ScriptedModel(text("sorry"))
    resumed = await swarm.with_model(second).resume("s", decision=approve())

    assert resumed.final_output == "sorry"
    assert "more than the" in _tool_answers(second)[0]


async def test_a_deep_handoff_payload_is_refused_to_the_model(tmp_path: Path) -> None:
    """A typed handoff whose payload nests too deep is refused with a message, not a crash."""

    class Refund(BaseModel):
        """A refund."""

        amount: int

    billing = Agent(name="billing")
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    model = ScriptedModel(
        turn(raw_tool_call("transfer_to_billing", '{"amount": ' + "[" * 50_000 + "]" * 50_000)),
        text("cannot"),
    )
    swarm = Swarm([triage, billing], "triage", model=model, journal=SQLiteJournal(tmp_path / "j"))

    result = await swarm.run("refund", session_id="s")

    assert result.final_output == "cannot"
    assert result.trail == ("triage",)
    assert "more than the" in _tool_answers(model)[0]


def test_depth_is_measured_without_recursion() -> None:
    """json_depth counts brackets outside strings; load_json refuses what nests too deep."""
    assert json_depth('{"a": "[[[[", "b": [1, {"c": []}]}') == 4
    assert json_depth('"\\"[["') == 0
    assert json_depth(DEEP) == 100_001
    assert value_depth([[[]]]) == 3
    with pytest.raises(ValueError, match="nests 100001 levels deep"):
        load_json(DEEP)


def test_a_schema_nested_too_deep_is_refused_when_the_tool_is_built() -> None:
    """FunctionTool.from_schema refuses a schema nested 5,000 deep with a ConfigurationError,
    not a RecursionError from reshaping it."""
    deep: dict[str, object] = {"type": "string"}
    for _ in range(5_000):
        deep = {"type": "array", "items": deep}

    async def call(arguments: dict[str, object]) -> str:
        return "never"

    with pytest.raises(ConfigurationError, match="more than the 64 levels allowed"):
        FunctionTool.from_schema(
            name="deep",
            description="A tool with a hostile schema.",
            parameters={"type": "object", "properties": {"x": deep}},
            function=call,
        )
