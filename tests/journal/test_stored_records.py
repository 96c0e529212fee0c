"""A strict replay's records read undecoded from SQLite and decoded as the run reaches them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from swarmkit import Agent, Swarm
from swarmkit.exceptions import JournalError
from swarmkit.journal import SQLiteJournal
from swarmkit.journal._course import replayable
from swarmkit.journal._stored import StoredRecords
from swarmkit.testing import ScriptedModel, text, tool_call
from swarmkit.tools import tool


@tool
def lookup(invoice_id: str) -> str:
    """Look up an invoice."""
    return f"{invoice_id}: paid"


def _swarm(*turns: object) -> Swarm:
    agent = Agent(name="clerk", instructions="Check every invoice.", tools=[lookup])
    return Swarm([agent], "clerk", model=ScriptedModel(*turns))  # type: ignore[arg-type]


async def _recorded(path: Path) -> SQLiteJournal:
    """A journal holding "s": two tool turns, then an answer."""
    journal = SQLiteJournal(path)
    turns = (tool_call("lookup", invoice_id="A-1"), tool_call("lookup", invoice_id="A-2"))
    await _swarm(*turns, text("All paid.")).run("check", session_id="s", journal=journal)
    return journal


def _corrupt(path: Path, seq: int) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE records SET data = '{' WHERE session_id = 's' AND seq = ?", (seq,))
    conn.close()


async def test_stored_records_read_back_as_read_does(tmp_path: Path) -> None:
    """Each stored record, an index, a slice or a selection, equals what ``read`` returns."""
    journal = await _recorded(tmp_path / "j.sqlite")
    read, stored = await journal.read("s"), await journal.read_stored("s")

    assert len(stored) == len(read)
    assert tuple(stored) == read
    assert [stored.kind(i) for i in range(len(stored))] == [r.kind for r in read]
    assert tuple(stored[2:4]) == read[2:4]
    assert tuple(stored.only([0, 3])) == (read[0], read[3])
    assert stored[-1].at == read[-1].at


async def test_a_strict_replay_from_sqlite_replays_its_stored_records(tmp_path: Path) -> None:
    """The replay reproduces the run from the undecoded records with no model call."""
    journal = await _recorded(tmp_path / "j.sqlite")
    replayer = _swarm()

    result = await replayer.replay("s", journal)

    assert result.final_output == "All paid."
    assert result.turns == 3


def test_replayable_reads_only_the_ends_of_runs() -> None:
    """Working out the replayed run reads kinds only: a broken step record stays unread until
    the run reaches it, where it is a JournalError naming it."""
    rows = [
        (0, "run_started", '{"prompt": "hi", "context": {}}', 1.0),
        (1, "model_call", "{", 2.0),
        (2, "run_finished", '{"stop_reason": "finished"}', 3.0),
    ]
    records = replayable(StoredRecords("s", rows))

    assert isinstance(records, StoredRecords) and len(records) == 3
    with pytest.raises(JournalError, match=r"record 1 \('model_call'\) of session 's'"):
        records[1]


async def test_a_corrupt_record_stops_a_strict_replay_where_it_is_reached(
    tmp_path: Path,
) -> None:
    """A record that cannot be decoded is a JournalError naming it, even read lazily."""
    path = tmp_path / "j.sqlite"
    journal = await _recorded(path)
    _corrupt(path, 4)

    with pytest.raises(JournalError, match=r"record 4 \('model_call'\) of session 's'"):
        await _swarm().replay("s", journal)


async def test_a_corrupt_record_stops_an_executing_replay_before_any_tool_runs(
    tmp_path: Path,
) -> None:
    """With tools executed for real, the whole session is decoded before the run starts."""
    path = tmp_path / "j.sqlite"
    journal = await _recorded(path)
    _corrupt(path, 5)
    ran: list[str] = []

    @tool
    def lookup(invoice_id: str) -> str:  # the same tool, watched
        """Look up an invoice."""
        ran.append(invoice_id)
        return f"{invoice_id}: paid"

    agent = Agent(name="clerk", instructions="Check every invoice.", tools=[lookup])
    with pytest.raises(JournalError, match=r"record 5"):
        await Swarm([agent], "clerk", model=ScriptedModel()).replay("s", journal, tools="execute")
    assert ran == []
