"""`swarmkit queue`: list, claim, reply and hand back a parked conversation from the command."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from swarmkit import queues
from swarmkit.cli import main
from swarmkit.journal import SQLiteJournal
from swarmkit.lowlevel import engine_notes

APP = "tests.people.queue_app:support"


def _park(journal: Path) -> None:
    assert (
        main(["run", APP, "refund order 7", "--session-id", "c1", "--journal", str(journal)]) == 0
    )


def test_a_queue_round_trip_through_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A person lists, claims, replies and hands back; billing answers having seen the reply."""
    journal = str(tmp_path / "j.db")
    _park(tmp_path / "j.db")
    capsys.readouterr()

    assert main(["queue", "list", "--json", "--journal", journal]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert (listed["session_id"], listed["queue"], listed["priority"]) == ("c1", "refunds-desk", 2)
    assert listed["payload"] == {"order": "7", "amount": 30}
    assert main(["queue", "claim", "c1", "--by", "ana", "--journal", journal]) == 0
    assert (
        main(["queue", "reply", "c1", "Approved, 30 back.", "--by", "ana", "--journal", journal])
        == 0
    )
    assert main(["queue", "list", "--journal", journal]) == 0
    assert "ana" in capsys.readouterr().out
    back = ["queue", "hand-back", "c1", "--swarm", APP, "--to", "billing", "--by", "ana"]
    assert main([*back, "--journal", journal]) == 0

    assert "Your refund of 30 is booked." in capsys.readouterr().out
    assert main(["queue", "list", "--journal", journal]) == 0
    assert "no conversation is waiting" in capsys.readouterr().out


def test_a_second_claim_fails_with_who_holds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The loser of a claim gets a clear error and exit code 1."""
    journal = str(tmp_path / "j.db")
    _park(tmp_path / "j.db")
    assert main(["queue", "claim", "c1", "--by", "ana", "--journal", journal]) == 0
    capsys.readouterr()

    assert main(["queue", "claim", "c1", "--by", "bo", "--journal", journal]) == 1
    assert "already claimed by 'ana'" in capsys.readouterr().err


def test_a_hand_back_to_an_unknown_agent_fails_and_keeps_it_waiting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent the swarm does not have: exit 1, the conversation still listed."""
    journal = str(tmp_path / "j.db")
    _park(tmp_path / "j.db")
    assert main(["queue", "claim", "c1", "--by", "ana", "--journal", journal]) == 0
    capsys.readouterr()
    back = ["queue", "hand-back", "c1", "--swarm", APP, "--to", "nobody", "--by", "ana"]

    assert main([*back, "--journal", journal]) == 1

    assert "no agent named 'nobody'" in capsys.readouterr().err
    assert main(["queue", "list", "--json", "--journal", journal]) == 0
    assert [c["claimed_by"] for c in json.loads(capsys.readouterr().out)] == ["ana"]


def test_a_run_that_parks_says_how_a_person_takes_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's last line points at `swarmkit queue claim`, not at an approval."""
    _park(tmp_path / "j.db")

    out = capsys.readouterr().out

    assert "queue claim c1 --by NAME" in out
    assert "--approve" not in out


def test_a_session_an_engine_runs_is_handed_back_only_through_the_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command refuses to resume here a conversation Temporal runs (saying how), and
    refuses to send to Temporal one that DBOS runs; nothing is written."""
    path = tmp_path / "j.db"
    _park(path)
    asyncio.run(_note_engine(path, "temporal", claim=True))
    before = asyncio.run(SQLiteJournal(path).read("c1"))
    here = ["queue", "hand-back", "c1", "--swarm", APP, "--to", "billing", "--by", "ana"]
    capsys.readouterr()

    assert main([*here, "--journal", str(path)]) == 1
    told = capsys.readouterr().err
    after = asyncio.run(SQLiteJournal(path).read("c1"))
    on_dbos = tmp_path / "dbos.db"
    _park(on_dbos)
    asyncio.run(_note_engine(on_dbos, "dbos"))
    there = ["queue", "close", "c1", "--by", "ana", "--temporal-address", "127.0.0.1:1"]
    assert main([*there, "--journal", str(on_dbos)]) == 1

    assert "runs on temporal" in told and "--to billing --temporal-address" in told
    assert "runs on dbos, not Temporal" in capsys.readouterr().err
    assert after == before


async def _note_engine(path: Path, engine: str, *, claim: bool = False) -> None:
    """Note the engine after the pause, as its mirror would; claim it for ana."""
    journal = SQLiteJournal(path)
    await journal.append(engine_notes(await journal.read("c1"), engine=engine))
    if claim:
        await queues.claim(journal, "c1", by="ana")
