"""Append speed of SQLiteJournal (and InMemoryJournal): steady steps, and whole sessions.

Run: ``.venv/bin/python bench/journal_store.py``.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import uuid
from pathlib import Path

from _size import size

from swarmkit.journal import InMemoryJournal, Journal, JournalRecord, SQLiteJournal

STEPS = size(20_000, 10)
SESSIONS = size(5_000, 5)
PAYLOAD = {
    "agent": "triage",
    "request_digest": "sha256:" + "ab" * 32,
    "response": {
        "content": "I will hand you over to billing, who can look at the refund. " * 3,
        "tool_calls": [{"id": "call_1", "name": "transfer_to_billing", "arguments": "{}"}],
        "usage": {"prompt_tokens": 812, "completion_tokens": 37, "total_tokens": 849},
    },
}
# A typical short session: the first step starts the run (5 records), the second ends it (2).
# Each record carries about 600 bytes of JSON, as a model call with its request summary does.
FIRST_STEP = ("run_started", "agent_entered", "model_call", "tool_call", "model_call")
LAST_STEP = ("model_call", "run_finished")
SESSION_PAYLOAD = {**PAYLOAD, "prompt": "Why was I charged twice for my May invoice? " * 3}


async def _append_steps(journal: Journal, session_id: str, per_step: int) -> float:
    """Seconds to append STEPS steps of ``per_step`` records each to one session."""
    started = time.perf_counter()
    seq = 0
    for _ in range(STEPS):
        step = [
            JournalRecord(session_id=session_id, seq=seq + i, kind="model_call", data=PAYLOAD)
            for i in range(per_step)
        ]
        await journal.append(step)
        seq += per_step
    return time.perf_counter() - started


async def _append_sessions(journal: Journal) -> float:
    """Seconds to journal SESSIONS new sessions of two steps each (5 records, then 2)."""
    data = {**SESSION_PAYLOAD, "stop_reason": "final_output"}
    started = time.perf_counter()
    for _ in range(SESSIONS):
        session_id = uuid.uuid4().hex
        for first, kinds in ((0, FIRST_STEP), (len(FIRST_STEP), LAST_STEP)):
            step = [
                JournalRecord(session_id=session_id, seq=first + i, kind=kind, data=data)
                for i, kind in enumerate(kinds)
            ]
            await journal.append(step)
    return time.perf_counter() - started


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, SQLiteJournal(Path(tmp) / "j.sqlite3") as journal:
        for per_step in (1, 5):
            seconds = await _append_steps(journal, f"sqlite-{per_step}", per_step)
            _report("SQLiteJournal", per_step, seconds)
    with tempfile.TemporaryDirectory() as tmp, SQLiteJournal(Path(tmp) / "j.sqlite3") as journal:
        _report_sessions("SQLiteJournal", await _append_sessions(journal))
    for per_step in (1, 5):
        seconds = await _append_steps(InMemoryJournal(), f"memory-{per_step}", per_step)
        _report("InMemoryJournal", per_step, seconds)
    _report_sessions("InMemoryJournal", await _append_sessions(InMemoryJournal()))


def _report(name: str, per_step: int, seconds: float) -> None:
    print(
        f"{name:16} {per_step} record(s)/step: {STEPS / seconds:9,.0f} appends/s "
        f"({seconds / STEPS * 1e6:6.1f} µs/append, {STEPS * per_step / seconds:9,.0f} records/s)"
    )


def _report_sessions(name: str, seconds: float) -> None:
    print(
        f"{name:16} session (5+2 records): {SESSIONS / seconds:7,.0f} sessions/s "
        f"({seconds / SESSIONS * 1e6:6.1f} µs/session, both appends)"
    )


if __name__ == "__main__":
    asyncio.run(main())
