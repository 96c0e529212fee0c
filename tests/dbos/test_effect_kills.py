"""A DBOS worker SIGKILLed between an effect and its result: the ledger is paid exactly once."""

from __future__ import annotations

from pathlib import Path

from swarmkit import edit
from swarmkit.journal import SQLiteJournal
from tests.dbos.harness import lines
from tests.dbos.test_kills import LIMIT, finished, killed_at


async def test_a_lost_effect_with_reconcile_is_not_paid_again(
    sqlite_url: str, tmp_path: Path
) -> None:
    """The recovered workflow asks the ledger instead of paying: one payment."""
    killed = killed_at(sqlite_url, tmp_path, "cashier", "pay A-1", session_id="s-cashier")
    async with killed as handle:
        assert await finished(handle) == "done: paid A-1"
    assert len(lines(tmp_path / "ledger.txt")) == 1
    kinds = [r.kind for r in await SQLiteJournal(tmp_path / "journal.sqlite").read("s-cashier")]
    assert kinds[kinds.index("effect_intent") + 1] == "tool_call"  # mirrored, in order


async def test_a_lost_effect_without_reconcile_waits_for_a_person(
    sqlite_url: str, tmp_path: Path
) -> None:
    """The recovered workflow does not pay: it waits with "outcome unknown" until a person
    says what happened."""
    killed = killed_at(sqlite_url, tmp_path, "teller", "pay A-1", session_id="s-teller")
    async with killed as handle:
        pending = await handle.pending(wait=LIMIT)
        assert pending is not None and pending.kind == "effect"
        assert (pending.payload or {})["outcome"] == "unknown"
        await handle.decide(edit(payload={"result": "paid A-1 (ledger)"}))
        assert await finished(handle) == "done: paid A-1 (ledger)"
    assert len(lines(tmp_path / "ledger.txt")) == 1
