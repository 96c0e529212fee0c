"""Two processes claim the same parked conversation at once: exactly one wins."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from swarmkit import Agent, Swarm, queues
from swarmkit.journal import open_journal
from swarmkit.people import PeopleQueue
from swarmkit.testing import ScriptedModel, transfer

ROOT = Path(__file__).resolve().parents[2]


async def _park(location: str) -> None:
    journal = open_journal(location, cipher=None)
    try:
        desk = PeopleQueue(name="desk")
        swarm = Swarm(
            [Agent(name="triage"), desk],
            "triage",
            model=ScriptedModel(transfer("desk")),
            journal=journal,
        )
        await swarm.run("a person, please", session_id="s1")
    finally:
        journal.close()


def _racers(location: str) -> list[str]:
    """Start two claimers, let them go together, and return what each said."""
    racers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.people.claim_worker", location, "s1", name],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("ana", "bo")
    ]
    for racer in racers:
        assert racer.stdout is not None
        assert racer.stdout.readline().strip() == "ready"
    for racer in racers:
        assert racer.stdin is not None
        racer.stdin.write("go\n")
        racer.stdin.flush()
    said = [racer.communicate(timeout=60)[0].strip() for racer in racers]
    assert [racer.returncode for racer in racers] == [0, 0]
    return said


async def _check_one_winner(location: str) -> None:
    await _park(location)

    said = _racers(location)

    assert sorted(s.split()[0] for s in said) == ["lost", "won"]
    journal = open_journal(location, cipher=None)
    try:
        (found,) = await queues.waiting(journal)
        winner = ("ana", "bo")[said.index("won")]
        assert found.claimed_by == winner
        claims = [r for r in await journal.read("s1") if r.kind == "queue_claimed"]
        assert len(claims) == 1
    finally:
        journal.close()


@pytest.mark.slow
async def test_two_processes_claiming_on_sqlite_one_wins(tmp_path: Path) -> None:
    """On one SQLite file, the loser is told it lost and nothing of its claim is written."""
    await _check_one_winner(str(tmp_path / "j.db"))


@pytest.mark.slow
async def test_two_processes_claiming_on_postgres_one_wins(postgres_dsn: str) -> None:
    """On one Postgres journal, the same."""
    await _check_one_winner(postgres_dsn)
