"""Shadow rules under Temporal: the mirrored journal holds the same verdicts as a local run."""

from __future__ import annotations

import uuid
from pathlib import Path

from swarmkit import HandoffGraph
from swarmkit.journal import SQLiteJournal
from swarmkit.shadow import read_verdicts
from swarmkit.temporal import session_result, start_session
from swarmkit.testing import NeverCalledModel, ScriptedModel
from tests.temporal.harness import running_worker
from tests.temporal.swarms import support_script, support_swarm


def _shadow() -> HandoffGraph:
    rules = HandoffGraph()
    rules.add_edge("triage", "billing", "vip == false")
    return rules


async def test_shadow_verdicts_are_journaled_by_a_temporal_session(
    temporal_address: str, tmp_path: Path
) -> None:
    """Three triage decisions: the rule fires on each and agrees only with the handoff."""
    session_id = f"shadow-{uuid.uuid4().hex[:8]}"
    local = SQLiteJournal(tmp_path / "local.sqlite3")
    await support_swarm(ScriptedModel(*support_script()), shadow=_shadow()).run(
        "refund A-1", context={"vip": False}, session_id=session_id, journal=local
    )
    async with (
        SQLiteJournal(tmp_path / "mirror.sqlite3") as mirror,
        running_worker(
            temporal_address,
            swarms={"support": support_swarm(shadow=_shadow())},
            models={"scripted": ScriptedModel(*support_script(), name="scripted")},
            journal=mirror,
        ) as (client, queue),
    ):
        handle = await start_session(
            client,
            "support",
            "refund A-1",
            task_queue=queue,
            context={"vip": False},
            session_id=session_id,
        )
        result = await session_result(handle)
        mirrored = await read_verdicts(mirror, session_id)
        replayed = await support_swarm(NeverCalledModel(), shadow=_shadow()).replay(
            session_id, mirror
        )
    assert mirrored == await read_verdicts(local, session_id)
    assert [v.agrees for d in mirrored for v in d] == [False, False, True]
    assert replayed.final_output == result.final_output
