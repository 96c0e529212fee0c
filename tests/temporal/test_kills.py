"""A worker SIGKILLed mid-step: a new worker finishes the session; finished steps never rerun."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmkit import Budget, Ledger
from swarmkit.temporal import session_result
from tests.temporal.harness import activity_counts, killed_at

pytestmark = [pytest.mark.kill, pytest.mark.slow]


async def test_a_kill_during_a_tool_call_reruns_only_that_call(
    temporal_address: str, tmp_path: Path
) -> None:
    """The tool in flight runs once more, with the same idempotency key; the model call does
    not, and the clerk's spend ledger holds one charge per model call: the first call's
    reserve and settle activities had completed, and the new worker reads them back."""
    async with killed_at(
        temporal_address, tmp_path, "metered", "where is A-1?", gate="tool"
    ) as handle:
        result = await session_result(handle)
        counts = activity_counts(await handle.fetch_history())

    assert result.final_output == "A-1 was delivered."
    keys = (tmp_path / "keys.txt").read_text().split()
    assert len(keys) == 2 and keys[0] == keys[1]
    assert (tmp_path / "calls.txt").read_text().split() == ["0", "1"]
    assert counts["swarmkit.model"] == {"scheduled": 2, "completed": 2}
    assert counts["swarmkit.tool"] == {"scheduled": 1, "completed": 1}
    assert counts["swarmkit.ledger.reserve"] == {"scheduled": 2, "completed": 2}
    assert counts["swarmkit.ledger.settle"] == {"scheduled": 2, "completed": 2}
    ledger = Ledger(tmp_path / "spend.sqlite", [Budget(name="calls", limit=10, unit="calls")])
    charged = await ledger.store.calls()
    windows = await ledger.store.windows(now=ledger.clock())
    assert [c.session_id for c in charged] == [handle.id, handle.id]
    assert [(w["spent"], w["held"]) for w in windows] == [(2, 0)]


async def test_a_kill_during_a_model_call_reruns_only_that_call(
    temporal_address: str, tmp_path: Path
) -> None:
    """The model call in flight runs once more; the finished tool and first call do not."""
    async with killed_at(
        temporal_address, tmp_path, "clerk", "where is A-1?", gate="model"
    ) as handle:
        result = await session_result(handle)
        counts = activity_counts(await handle.fetch_history())

    assert result.final_output == "A-1 was delivered."
    assert (tmp_path / "calls.txt").read_text().split() == ["0", "1", "1"]
    assert len((tmp_path / "keys.txt").read_text().split()) == 1
    assert counts["swarmkit.model"] == {"scheduled": 2, "completed": 2}
    assert counts["swarmkit.tool"] == {"scheduled": 1, "completed": 1}
