"""Status over a time window: only the sessions started in [since, until) count."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from swarmkit.cli import main
from swarmkit.exceptions import RuleLearningError
from swarmkit.journal import Journal, SQLiteJournal
from swarmkit.rules import promote, status
from swarmkit.shadow import read_rules_log
from swarmkit.testing import FixedRuntime
from tests.rules.shadow_swarm import script, shadow_rules, swarm

BILLING = "triage -> billing if category == 'billing'"
DAY = 86_400.0
START = datetime(2026, 3, 1, tzinfo=UTC).timestamp()
"""Midnight UTC of the first of three days with four billing tickets each."""


async def _three_days(journal: Journal) -> None:
    """Day 0: the model agrees with the billing rule; day 1: it sends billing to sales;
    day 2: it agrees again. Each day's sessions start at that day's clock."""
    shadowed = swarm(journal, shadow_rules())
    for day, target in enumerate(("billing", "sales", "billing")):
        fixed = FixedRuntime(start=START + day * DAY + 3600)
        for number in range(4):
            await (
                shadowed.with_model(script(target))
                .with_seams(runtime=fixed.runtime())
                .run("help", context={"category": "billing"}, session_id=f"d{day}-{number}")
            )
            fixed.now += 60


async def test_status_counts_only_the_sessions_started_in_the_window(tmp_path: Path) -> None:
    """The drifting day alone, the days around it, and an open-ended window, exactly."""
    with SQLiteJournal(tmp_path / "journal.sqlite") as journal:
        await _three_days(journal)
        shadowed = swarm(shadow=shadow_rules())
        whole = (await status(journal, shadowed)).rule(BILLING).evidence
        drift = await status(journal, shadowed, since=START + DAY, until=START + 2 * DAY)
        before = await status(journal, shadowed, until=START + DAY)
        after = await status(journal, shadowed, since=START + DAY + 3600 + 120)
        with pytest.raises(RuleLearningError, match="after the filters"):
            await status(journal, shadowed, since=START + 3 * DAY)

    assert (whole.fired, whole.agreements) == (12, 8)
    assert drift.sessions == 4
    assert (drift.rule(BILLING).evidence.fired, drift.rule(BILLING).evidence.agreements) == (4, 0)
    assert [d.session_id for d in drift.rule(BILLING).disagreements] == [
        f"d1-{n}" for n in range(4)
    ]
    assert (before.sessions, before.rule(BILLING).evidence.agreements) == (4, 4)
    # since is inclusive: d1-2 started exactly then; d1-3 a minute later, then day 2.
    assert after.sessions == 6
    assert (after.rule(BILLING).evidence.fired, after.rule(BILLING).evidence.agreements) == (6, 4)


async def test_the_command_takes_the_window_as_iso_times(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`swarmkit rules status --since ... --until ...` reads the same window."""
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as journal:
        await _three_days(journal)
    argv = ["rules", "status", "--swarm", "tests.rules.shadow_swarm:shadowed"]
    argv += ["--journal", str(path), "--json"]
    argv += ["--since", "2026-03-02T00:00+00:00", "--until", str(START + 2 * DAY)]
    code = await asyncio.to_thread(main, argv)
    report = json.loads(capsys.readouterr().out)

    assert code == 0 and report["sessions"] == 4
    billing = next(rule for rule in report["rules"] if rule["rule"] == BILLING)
    assert (billing["fired"], billing["agreements"]) == (4, 0)


async def test_a_promotion_over_a_window_without_decisions_writes_nothing(tmp_path: Path) -> None:
    """Promote reads the same window: none of its sessions holds a verdict, so it is refused
    as status is, and neither the rules file nor a promotion record is written."""
    out = tmp_path / "rules.json"
    with SQLiteJournal(tmp_path / "journal.sqlite") as journal:
        await _three_days(journal)
        with pytest.raises(RuleLearningError, match="hold no rule verdicts"):
            await promote(
                journal, swarm(shadow=shadow_rules()), BILLING, out=out, since=START + 3 * DAY
            )
        assert await read_rules_log(journal) == ()
    assert not out.exists()
