"""Shadow rules under DBOS: a workflow session journals the verdicts a local run does."""

from __future__ import annotations

from pathlib import Path

from swarmkit import HandoffGraph
from swarmkit.dbos import DurableSwarms
from swarmkit.journal import SQLiteJournal
from swarmkit.shadow import read_verdicts
from swarmkit.testing import NeverCalledModel, ScriptedModel
from tests.temporal.swarms import support_script, support_swarm


def _shadow() -> HandoffGraph:
    rules = HandoffGraph()
    rules.add_edge("triage", "billing", "vip == false")
    return rules


async def test_shadow_verdicts_are_journaled_by_a_dbos_session(
    database_url: str, tmp_path: Path
) -> None:
    """Three triage decisions: the rule fires on each and agrees only with the handoff."""
    local = SQLiteJournal(tmp_path / "local.sqlite3")
    await support_swarm(ScriptedModel(*support_script()), shadow=_shadow()).run(
        "refund A-1", context={"vip": False}, session_id="s-1", journal=local
    )
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    swarms = {"support": support_swarm(ScriptedModel(*support_script()), shadow=_shadow())}
    app = DurableSwarms(swarms, database_url=database_url, polling_interval=0.05, journal=journal)
    async with app:
        handle = await app.start_session(
            "support", "refund A-1", context={"vip": False}, session_id="s-1"
        )
        result = await handle.result()
    shadowed = await read_verdicts(journal, "s-1")
    assert shadowed == await read_verdicts(local, "s-1")
    assert [v.agrees for d in shadowed for v in d] == [False, False, True]
    replayed = await support_swarm(NeverCalledModel(), shadow=_shadow()).replay("s-1", journal)
    assert replayed.final_output == result.final_output
