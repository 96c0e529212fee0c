"""The eval report's rule share and the rules its trials suggest, from the API and the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmkit import InMemoryJournal
from swarmkit.cli import main
from swarmkit.evals import EvalReport, RuleSuggestions, SuggestedRule, TaskSet, evaluate, regrade
from swarmkit.evals.support_desk import build_swarm, tasks
from swarmkit.rules import CorpusFilter, suggest_rules

TASKS = str(Path("swarmkit/evals/support_desk/tasks.json").resolve())
SWARM = "swarmkit.evals.support_desk:offline_swarm"


async def test_a_live_eval_reports_the_rules_its_trials_suggest() -> None:
    """Five trials of the desk: the report lists the learner's rules, with held-out evidence."""
    journal = InMemoryJournal()
    report = await evaluate(tasks(), build_swarm(), trials=5, journal=journal, run_id="rs")
    suggested = report.suggested_rules

    assert suggested is not None and suggested.note == ""
    assert suggested.rules, suggested
    assert all(rule.precision >= 0.98 and rule.support >= 5 for rule in suggested.rules)
    learned = await suggest_rules(journal, min_support=5, where=CorpusFilter(prefix="eval-rs-"))
    assert suggested.decisions == sum(learned.decisions.values())
    table = report.table()
    assert "rule-decided handoffs 25%" in table
    assert f"{suggested.rules[0].source} -> {suggested.rules[0].target} when" in table
    assert report.route_metrics()["rule_share"] == pytest.approx(0.25)


async def test_too_few_decisions_say_so_instead_of_rules() -> None:
    """One trial of two tasks: no rules, and the report says there were too few decisions."""
    few = tasks()
    few = TaskSet(domain=few.domain, tasks=few.tasks[:2])
    report = await evaluate(few, build_swarm(), trials=1, run_id="few")
    suggested = report.suggested_rules

    assert suggested is not None and not suggested.rules
    assert "no model-decided handoffs" in suggested.note or "too few" in suggested.note
    assert "suggested rules: none (" in report.table()


async def test_a_regrade_suggests_from_the_stored_trials() -> None:
    """Regrading a stored run suggests the same rules as the live run, with zero model calls."""
    journal = InMemoryJournal()
    live = await evaluate(tasks(), build_swarm(), trials=5, journal=journal, run_id="rg")
    again = await regrade("rg", tasks(), journal)

    assert again.suggested_rules == live.suggested_rules
    assert again.model_calls == 0


def test_the_suggestions_round_trip_through_json() -> None:
    """A stored report reads back with its suggestions; an old one without them reads as None."""
    rule = SuggestedRule(
        source="triage", target="billing", when="'refund' in swarm.user_words",
        precision=1.0, support=7, saved_calls=12,
    )  # fmt: skip
    report = EvalReport(
        run_id="r",
        mode="live",
        tasks=(),
        suggested_rules=RuleSuggestions(decisions=30, rules=(rule,)),
    )
    data = json.loads(report.to_json())

    assert EvalReport.from_data(data) == report
    del data["suggested_rules"]
    assert EvalReport.from_data(data).suggested_rules is None


def test_the_command_shows_the_rule_share_and_the_suggested_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`swarmkit eval` prints both in its table and its JSON."""
    journal = str(tmp_path / "evals.sqlite")
    base = ["eval", TASKS, "--journal", journal, "--swarm", SWARM, "--trials", "5"]
    assert main([*base, "--run-id", "c1"]) == 0
    table = capsys.readouterr().out
    assert "rule-decided handoffs" in table and "suggested rules (" in table

    assert main([*base, "--replay", "c1", "--report", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["route"]["rule_share"] == pytest.approx(0.25)
    assert data["suggested_rules"]["rules"] and data["suggested_rules"]["decisions"] > 0
