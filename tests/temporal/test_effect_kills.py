"""A worker SIGKILLed between an effect and its result: the ledger is paid exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmkit import edit
from swarmkit.temporal import (
    SessionHandle,
    decide,
    pending_decision,
    session_result,
)
from tests.temporal.harness import killed_at, wait_for

pytestmark = [pytest.mark.kill, pytest.mark.slow]


async def test_a_lost_effect_with_reconcile_is_not_paid_again(
    temporal_address: str, tmp_path: Path
) -> None:
    """The retried activity asks the ledger instead of paying: one payment."""
    async with killed_at(temporal_address, tmp_path, "cashier", "pay A-1", gate="tool") as handle:
        result = await session_result(handle)
    assert result.final_output == "done: paid A-1"
    assert len((tmp_path / "ledger.txt").read_text().split()) == 1


async def test_a_lost_effect_without_reconcile_waits_for_a_person(
    temporal_address: str, tmp_path: Path
) -> None:
    """The retried activity does not pay: the session waits with "outcome unknown"."""
    async with killed_at(temporal_address, tmp_path, "teller", "pay A-1", gate="tool") as handle:
        await wait_for(handle, lambda: _waiting(handle), "the outcome-unknown pause")
        pending = await pending_decision(handle)
        assert pending is not None and pending.kind == "effect"
        assert (pending.payload or {})["outcome"] == "unknown"
        await decide(handle, edit(payload={"result": "paid A-1 (ledger)"}))
        result = await session_result(handle)
    assert result.final_output == "done: paid A-1 (ledger)"
    assert len((tmp_path / "ledger.txt").read_text().split()) == 1


async def _waiting(handle: SessionHandle) -> bool:
    return await pending_decision(handle) is not None
