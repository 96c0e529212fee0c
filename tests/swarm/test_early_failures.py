"""A run that fails before it starts (a context nested too deep, limits of the wrong type, a
reader that stops at the first event) leaves no lease behind: the session is free at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swarmkit import Agent, ConfigurationError, SQLiteJournal, Swarm
from swarmkit.bounds import MAX_JSON_DEPTH
from swarmkit.events import RunStarted
from swarmkit.testing import ScriptedModel, text


def _swarm(journal: SQLiteJournal, *answers: str) -> Swarm:
    model = ScriptedModel(*(text(answer) for answer in answers))
    return Swarm([Agent(name="a")], "a", model=model, journal=journal)


def _nested(depth: int) -> dict[str, Any]:
    """{"k": {"k": ... {}}}, ``depth`` dicts deep."""
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 300, 5_000])
async def test_a_context_nested_too_deep_is_refused_before_the_run(
    tmp_path: Path, depth: int
) -> None:
    """run() refuses the context with a ConfigurationError naming the bound; nothing is
    journaled and the session id is free for the next run at once."""
    journal = SQLiteJournal(tmp_path / "j.db")

    with pytest.raises(ConfigurationError, match=f"more than the {MAX_JSON_DEPTH} levels"):
        await _swarm(journal).run("hi", session_id="s", context={"deep": _nested(depth)})
    result = await _swarm(journal, "ok").run("hi", session_id="s")

    assert result.final_output == "ok"


async def test_a_context_at_the_bound_runs(tmp_path: Path) -> None:
    """A context nested as deep as the bound allows is journaled and replays."""
    journal = SQLiteJournal(tmp_path / "j.db")
    swarm = _swarm(journal, "ok")

    await swarm.run("hi", session_id="s", context=_nested(MAX_JSON_DEPTH))

    assert (await swarm.replay("s")).final_output == "ok"


async def test_limits_of_the_wrong_type_leave_the_session_free(tmp_path: Path) -> None:
    """A ConfigurationError for limits= takes no lease: the same session runs at once."""
    journal = SQLiteJournal(tmp_path / "j.db")

    with pytest.raises(ConfigurationError, match="limits must be a UsageLimits"):
        await _swarm(journal).run("hi", session_id="s", limits={"max_model_calls": 2})  # type: ignore[arg-type]
    result = await _swarm(journal, "ok").run("hi", session_id="s")

    assert result.final_output == "ok"


async def test_a_stream_closed_at_its_first_event_lets_the_session_go(tmp_path: Path) -> None:
    """A reader that stops after RunStarted leaves a session resume continues at once."""
    journal = SQLiteJournal(tmp_path / "j.db")
    stream = _swarm(journal).stream("hi", session_id="s")
    first = await anext(stream)
    await stream.aclose()

    resumed = await _swarm(journal, "ok").resume("s")

    assert isinstance(first, RunStarted)
    assert resumed.final_output == "ok"
