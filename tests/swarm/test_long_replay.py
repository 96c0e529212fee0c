"""A long session (2,000 journaled steps) replays exactly, and a change deep in it is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmkit import Agent, ReplayDivergenceError, Swarm, tool
from swarmkit.journal import InMemoryJournal, SQLiteJournal
from swarmkit.journal._digest import RequestDigester
from swarmkit.testing import (
    NeverCalledModel,
    RecordingModel,
    ScriptedModel,
    ScriptExhaustedError,
    text,
    tool_call,
)

TURNS = 1_000
CHANGED_AT = 700


def _clerk(model: object, *, changed_from: int | None = None) -> Swarm:
    seen: list[str] = []

    @tool
    def lookup(invoice_id: str) -> str:
        """Look up an invoice."""
        seen.append(invoice_id)
        late = changed_from is not None and len(seen) >= changed_from
        return f"{invoice_id}: {'refunded' if late else 'paid'}"

    agent = Agent(name="clerk", instructions="Check every invoice.", tools=[lookup])
    return Swarm([agent], "clerk", model=model, max_turns=TURNS + 1)  # type: ignore[arg-type]


def _script(start: int = 0, stop: int = TURNS) -> ScriptedModel:
    """Turns ``start`` to ``stop`` (0-based) of the session's script."""
    turns = [tool_call("lookup", invoice_id=f"A-{i}") for i in range(TURNS - 1)]
    return ScriptedModel(*[*turns, text("All paid.")][start:stop])


async def test_a_two_thousand_step_session_replays_exactly(tmp_path: Path) -> None:
    """Every message, the output and the usage come back from the journal, with no model call."""
    journal = SQLiteJournal(tmp_path / "long.sqlite")
    original = await _clerk(_script()).run("check all", session_id="long", journal=journal)
    offline = RecordingModel(NeverCalledModel())

    replayed = await _clerk(offline).replay("long", journal)

    assert len(await journal.read("long")) == 2 * TURNS + 2
    assert offline.calls == 0
    assert replayed.final_output == original.final_output == "All paid."
    assert replayed.messages == original.messages
    assert replayed.turns == original.turns == TURNS
    assert replayed.usage == original.usage


async def test_a_changed_tool_result_deep_in_a_long_session_diverges_at_the_next_call(
    tmp_path: Path,
) -> None:
    """Tools re-executed on replay answer differently from turn 700: the model call after it is
    the step that diverges, and the diff shows the new result."""
    journal = SQLiteJournal(tmp_path / "long.sqlite")
    await _clerk(_script()).run("check all", session_id="long", journal=journal)
    changed = _clerk(NeverCalledModel(), changed_from=CHANGED_AT)

    with pytest.raises(ReplayDivergenceError) as raised:
        await changed.replay("long", journal, tools="execute")

    records = await journal.read("long")
    diverged = records[raised.value.step]
    assert diverged.kind == "model_call"
    assert diverged.data["turn"] == CHANGED_AT + 1
    assert f"A-{CHANGED_AT - 1}: refunded" in raised.value.diff


async def test_a_long_session_resumed_midway_repeats_no_call_and_digests_as_if_whole() -> None:
    """A run whose model failed at turn 601 resumes: 600 calls replay, 400 go live, and each
    live call's journaled digest is the digest of its whole request computed afresh."""
    journal = InMemoryJournal()
    with pytest.raises(ScriptExhaustedError):
        await _clerk(_script(stop=600)).run("check all", session_id="cut", journal=journal)
    rest = _script(start=600)

    resumed = await _clerk(rest).resume("cut", journal)

    assert len(rest.requests) == TURNS - 600
    assert resumed.final_output == "All paid."
    assert resumed.turns == TURNS
    records = await journal.read("cut")
    journaled = [r.data["digest"] for r in records if r.kind == "model_call"]
    fresh = [RequestDigester().digest(request) for request in rest.requests]
    assert journaled[-len(fresh) :] == fresh
