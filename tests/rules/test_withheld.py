"""A rule the learner found and withheld is named with its reason, in the report and the command."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from swarmkit import Swarm
from swarmkit.cli import main
from swarmkit.journal import SQLiteJournal
from swarmkit.rules import SuggestReport, Withheld, held_out, suggest_rules
from tests.rules import routed


async def test_a_rule_the_held_out_decisions_contradict_is_withheld_for_precision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Billing is exact on training sessions, but every 10th held-out billing ticket went to
    sales: the billing rule is withheld for its held-out precision, with the counts."""

    def route(index: int, context: dict[str, object], session_id: str) -> str:
        slip = context["category"] == "billing" and index % 10 == 0 and held_out(session_id)
        return "sales" if slip else str(context["category"])

    made = routed.tickets(200, route=route)
    report, text, data = await _suggest(tmp_path, capsys, made, "triage")

    held = [t for t in made if t.held and t.context["category"] == "billing"]
    agreed = sum(t.target == "billing" for t in held)
    [withheld] = report.withheld
    assert (withheld.target, withheld.when, withheld.reason) == (
        "billing",
        "category == 'billing'",
        "precision",
    )
    assert (withheld.support, withheld.agreed) == (len(held), agreed) and agreed < len(held)
    assert withheld.counts == {"billing": agreed, "sales": len(held) - agreed}
    assert f"{agreed} of the {len(held)} held-out decisions it takes went to billing" in (
        withheld.why
    )
    assert [s.target for s in report.suggestions] == ["sales"]
    _assert_shown(withheld, text, data)


async def test_a_rule_with_too_few_held_out_decisions_is_withheld_for_support(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One ticket in four is a sales ticket: enough to learn from, too few held out to check."""
    made = routed.tickets(160, ("billing", "billing", "billing", "sales"))
    report, text, data = await _suggest(tmp_path, capsys, made, "triage")

    sales = [t for t in made if t.target == "sales"]
    held = sum(t.held for t in sales)
    assert len(sales) - held >= 20 > held  # the training sessions support it, held out do not
    [withheld] = report.withheld
    assert (withheld.target, withheld.when, withheld.reason) == (
        "sales",
        "category == 'sales'",
        "support",
    )
    assert (withheld.support, withheld.agreed, dict(withheld.counts)) == (
        held,
        held,
        {"sales": held},
    )
    assert withheld.why == (
        f"it takes {held} decisions on held-out sessions, fewer than the minimum support 20"
    )
    assert [s.target for s in report.suggestions] == ["billing"]
    _assert_shown(withheld, text, data)


async def test_a_rule_over_decisions_the_model_split_is_withheld_as_conflicting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'other' tickets go to billing or sales by a coin: the rule naming them is withheld,
    with where the model sent them on the training sessions."""
    flip = routed.coin(7, "billing", "sales")

    def route(index: int, context: dict[str, object], session_id: str) -> str:
        category = str(context["category"])
        return flip(index, context, session_id) if category == "other" else category

    made = routed.tickets(300, ("billing", "sales", "other"), route=route)
    report, text, data = await _suggest(tmp_path, capsys, made, "triage")

    trained = Counter(t.target for t in made if not t.held and t.context["category"] == "other")
    majority, count = trained.most_common(1)[0]
    [withheld] = report.withheld
    assert (withheld.target, withheld.when, withheld.reason) == (
        majority,
        "category == 'other'",
        "conflicting",
    )
    assert dict(withheld.counts) == dict(trained)
    assert (withheld.support, withheld.agreed) == (trained.total(), count)
    assert {s.target for s in report.suggestions} == {"billing", "sales"}
    _assert_shown(withheld, text, data)


async def test_a_rule_the_swarms_graph_refuses_is_withheld_as_a_cycle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """billing goes back to triage by rule, so triage -> billing would close a rule cycle."""
    made = routed.tickets(200)
    report, text, data = await _suggest(tmp_path, capsys, made, "looping")

    [withheld] = report.withheld
    assert (withheld.target, withheld.when, withheld.reason) == (
        "billing",
        "category == 'billing'",
        "cycle",
    )
    assert "the rule triage -> billing would close a cycle of rules" in withheld.why
    assert [s.target for s in report.suggestions] == ["sales"]
    _assert_shown(withheld, text, data)


async def _suggest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], made: list[routed.Ticket], name: str
) -> tuple[SuggestReport, str, dict[str, Any]]:
    """The report through the Python API, and the command's text and JSON, on one journal."""
    swarm: Swarm = getattr(routed, name)
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as stored:
        await routed.journal_tickets(made, stored)
        report = await suggest_rules(stored, graph=swarm.graph)
    options = ["--swarm", f"tests.rules.routed:{name}", "--journal", str(path)]
    text = await asyncio.to_thread(_command, capsys, "suggest", *options)
    data = json.loads(await asyncio.to_thread(_command, capsys, "suggest", *options, "--json"))
    return report, text, data


def _command(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["rules", *argv]) == 0
    return capsys.readouterr().out


def _assert_shown(withheld: Withheld, text: str, data: dict[str, Any]) -> None:
    """The command names the rule and prints the report's reason, in text and JSON."""
    rule = f"  {withheld.source} -> {withheld.target} when {withheld.when}\n"
    assert "\nWithheld (learned, not suggested), and why:\n" in text
    assert f"{rule}    {withheld.reason}: {withheld.why}\n" in text
    assert data["withheld"] == [
        {
            "source": withheld.source,
            "target": withheld.target,
            "when": withheld.when,
            "reason": withheld.reason,
            "why": withheld.why,
            "precision": withheld.precision,
            "support": withheld.support,
            "agreed": withheld.agreed,
            "counts": dict(withheld.counts),
        }
    ]
