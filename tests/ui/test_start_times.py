"""One start time everywhere: `swarmkit sessions`, `swarmkit show` and the viewer agree."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from swarmkit import Agent, ConfigurationError, ModelError, Swarm
from swarmkit.cli import main
from swarmkit.console._timeline import local_time
from swarmkit.journal import SQLiteJournal
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import FixedRuntime, ScriptedModel, text
from swarmkit.ui._sessions import SessionList, SessionQuery
from swarmkit.ui._timeline import session_view

AGENTS = [Agent(name="solo", instructions="Answer.")]
DAY = 1_790_000_000.0


class _Failing:
    """A model whose API is down."""

    name = "failing"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("the API is down", model=self.name, attempts=3)


class _Hanging:
    """A model that never answers (the run is stopped while it waits)."""

    name = "hanging"

    def __init__(self) -> None:
        self.called = asyncio.Event()

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.called.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def _swarm(model: object, start: float) -> Swarm:
    return Swarm(AGENTS, "solo", model=model, runtime=FixedRuntime(start=start))  # type: ignore[arg-type]


async def _journal_the_cases(journal: SQLiteJournal) -> None:
    """A model error on the first call, a refused start, a stopped run, a resumed failure."""
    # Less than half a microsecond before a whole second: every view rounds it up alike.
    await _swarm(_Failing(), DAY - 4e-7).run("q", session_id="failed", journal=journal)
    with pytest.raises(ConfigurationError):
        await _swarm(_Failing(), DAY + 60).run(
            "q", session_id="refused", journal=journal, context={"x": object()}
        )
    hanging = _Hanging()
    stopped = asyncio.create_task(
        _swarm(hanging, DAY + 120).run("q", session_id="stopped", journal=journal)
    )
    await hanging.called.wait()
    stopped.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopped
    await _swarm(_Failing(), DAY + 180).run("q", session_id="resumed", journal=journal)
    resumed = await _swarm(ScriptedModel(text("ok")), DAY + 900).resume("resumed", journal=journal)
    assert resumed.final_output == "ok"


def _listed(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """Each session's STARTED cell in `swarmkit sessions`."""
    assert main(["sessions", "--journal", str(path)]) == 0
    rows = capsys.readouterr().out.splitlines()[1:-1]
    found = (re.search(r"^(\S+) .* (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) ", row) for row in rows)
    return {match[1]: match[2] for match in found if match}


def _shown(path: Path, session_id: str, capsys: pytest.CaptureFixture[str]) -> str:
    """The start in `swarmkit show`'s first line."""
    assert main(["show", session_id, "--journal", str(path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    return first.split("started ")[1]


async def _viewed(path: Path, viewer: SessionList) -> dict[str, tuple[str, str]]:
    """Each session's start in the viewer's list and on its page."""
    with SQLiteJournal(path) as journal:
        rows = (await viewer.page(SessionQuery()))["rows"]
        pages = {
            r["session_id"]: session_view(await journal.read(r["session_id"]), None) for r in rows
        }
    return {
        r["session_id"]: (
            local_time(r["started_at"]),
            local_time(pages[r["session_id"]]["started_at"]),
        )
        for r in rows
    }


def test_sessions_show_and_the_viewer_agree_on_each_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failed, a stopped and a resumed run each start at their first record's time in all
    three, to the same second; a run refused at its start is in none of them."""
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as journal:
        asyncio.run(_journal_the_cases(journal))

    listed = _listed(path, capsys)
    shown = {session_id: _shown(path, session_id, capsys) for session_id in listed}
    with SQLiteJournal(path) as journal:
        viewed = asyncio.run(_viewed(path, SessionList(journal)))

    expected = {
        "failed": local_time(DAY),
        "stopped": local_time(DAY + 120),
        "resumed": local_time(DAY + 180),
    }
    assert listed == shown == expected
    assert viewed == {k: (v, v) for k, v in expected.items()}


def test_a_session_run_again_under_its_id_shows_its_new_start_in_the_open_viewer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Deleted and run again (the same number of records), a failed session is listed with
    its new start by a viewer that listed the old one, as `sessions` and `show` list it."""
    path = tmp_path / "journal.sqlite"
    clock = [0.0]
    with SQLiteJournal(path) as journal:
        viewer = SessionList(journal, clock=lambda: clock[0])
        asyncio.run(_swarm(_Failing(), DAY).run("q", session_id="failed", journal=journal))
        before = asyncio.run(_viewed(path, viewer))
        assert main(["delete", "failed", "--yes", "--journal", str(path)]) == 0
        asyncio.run(_swarm(_Failing(), DAY + 3600).run("q", session_id="failed", journal=journal))
        clock[0] = 60.0
        asyncio.run(viewer.page(SessionQuery()))
        asyncio.run(viewer.settled())
        capsys.readouterr()
        after = asyncio.run(_viewed(path, viewer))

    assert before["failed"][0] == local_time(DAY)
    assert _listed(path, capsys)["failed"] == _shown(path, "failed", capsys)
    assert after["failed"] == (local_time(DAY + 3600), local_time(DAY + 3600))
