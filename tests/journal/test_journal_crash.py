"""A process SIGKILLed while appending leaves a journal that opens, reads whole, takes more."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from swarmkit.journal import SQLiteJournal
from tests.journal.test_journal_contract import step

# Appends steps of one to four large records round-robin over three sessions, forever, continuing
# whatever the journal already holds; prints "<session> <next seq>" after each commit.
CRASHING_WRITER = """
import asyncio, sys
from swarmkit.journal import JournalRecord, SQLiteJournal

async def main(path):
    sessions = ["a", "b", "c"]
    with SQLiteJournal(path) as journal:
        n = 0
        while True:
            session_id = sessions[n % 3]
            seq = await journal.next_seq(session_id)
            size = 1 + n % 4
            step = [
                JournalRecord(session_id=session_id, seq=seq + i, kind="model_call",
                              data={"n": n, "blob": "x" * 3000})
                for i in range(size)
            ]
            await journal.append(step)
            print(session_id, seq + size, flush=True)
            n += 1

asyncio.run(main(sys.argv[1]))
"""


def _write_then_kill(path: Path, commits: int) -> dict[str, int]:
    """Run the writer until it reports ``commits`` commits, SIGKILL it, return what it committed."""
    writer = subprocess.Popen(
        [sys.executable, "-c", CRASHING_WRITER, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    committed: dict[str, int] = {}
    try:
        for _ in range(commits):
            line = writer.stdout.readline()
            if not line:
                pytest.fail(f"the writer stopped early: {writer.communicate()[1]}")
            session_id, next_seq = line.split()
            committed[session_id] = int(next_seq)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.communicate()
    assert writer.returncode == -signal.SIGKILL
    return committed


async def _assert_whole(path: Path, committed: dict[str, int]) -> None:
    """Every session reads without error, with contiguous seqs and every reported commit."""
    with SQLiteJournal(path) as journal:
        for info in await journal.sessions():
            records = await journal.read(info.session_id)
            assert [r.seq for r in records] == list(range(len(records)))
            assert info.records == len(records)
            assert len(records) >= committed.get(info.session_id, 0)


async def test_a_journal_killed_mid_write_reads_whole_and_keeps_every_commit(
    tmp_path: Path,
) -> None:
    """Two writers in turn are SIGKILLed mid-stream; the file stays whole and takes more steps."""
    path = tmp_path / "crash.sqlite3"
    first = _write_then_kill(path, commits=300)
    await _assert_whole(path, first)
    # The second writer recovers the crashed file and continues each session's sequence.
    second = _write_then_kill(path, commits=300)
    assert all(second[s] > first[s] for s in first)
    await _assert_whole(path, second)
    with SQLiteJournal(path) as journal:
        seq = await journal.next_seq("a")
        await journal.append(step("a", seq, "run_finished"))
        assert (await journal.read("a"))[-1].kind == "run_finished"
