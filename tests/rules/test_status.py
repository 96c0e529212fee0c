"""Status: each shadow rule's agreement with the model, with Wilson bounds, from the journal."""

from __future__ import annotations

import math

import pytest

from swarmkit.exceptions import RuleLearningError
from swarmkit.journal import InMemoryJournal, Journal
from swarmkit.rules import status, wilson
from swarmkit.shadow import RULES_LOG
from tests.rules.shadow_swarm import script, shadow_rules, swarm

BILLING = "triage -> billing if category == 'billing'"
OVER_50 = "triage -> sales if amount > 50"


def _reference(a: int, n: int) -> tuple[float, float]:
    """The Wilson interval written out from its definition, z = 1.96."""
    z = 1.96
    p = a / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


@pytest.mark.parametrize(
    ("agreements", "fired", "lower", "upper"),
    [
        (0, 10, 0.0, 0.38416 / 1.38416),  # a = 0: upper = (z²/n) / (1 + z²/n)
        (10, 10, 1 / 1.38416, 1.0),  # a = n: lower = 1 / (1 + z²/n)
        (9, 10, 0.59584, 0.98212),
        (29, 30, 0.83329, 0.99409),
        (95, 100, 0.88825, 0.97846),
        (1000, 1000, 0.99617, 1.0),
    ],
)
def test_wilson_bounds_on_constructed_counts(
    agreements: int, fired: int, lower: float, upper: float
) -> None:
    """The bounds match the formula (and published values) to five places."""
    got = wilson(agreements, fired)
    assert got == pytest.approx((lower, upper), abs=1e-5)
    assert got == pytest.approx(_reference(agreements, fired), abs=1e-12)


def test_wilson_with_no_fired_decision_knows_nothing() -> None:
    """Zero fired decisions: the whole interval."""
    assert wilson(0, 0) == (0.0, 1.0)


async def _corpus(journal: Journal, count: int = 40) -> None:
    """Ticket i: billing when i % 2 == 0 (the model agrees with the billing rule, except
    every 10th, which it sends to sales); amounts i * 3; odd tickets go to sales."""
    shadowed = swarm(journal, shadow_rules())
    for index in range(count):
        billing = index % 2 == 0
        target = "billing" if billing and index % 10 else "sales"
        context = {"category": "billing" if billing else "sales", "amount": index * 3}
        await shadowed.with_model(script(target)).run(
            "help", context=context, session_id=f"t{index:03d}"
        )


async def test_status_counts_verdicts_exactly() -> None:
    """Decisions, fired, agreements, share, savings and disagreements per rule."""
    journal = InMemoryJournal()
    await _corpus(journal)
    report = await status(journal, swarm(shadow=shadow_rules()))

    billing = report.rule(BILLING)
    assert (billing.mode, billing.decisions, billing.evidence.fired) == ("shadow", 40, 20)
    assert billing.evidence.agreements == 16  # t000, t010, t020, t030 went to sales
    assert billing.evidence.lower == pytest.approx(wilson(16, 20)[0])
    assert billing.share == 0.5
    assert (billing.calls_saved, billing.tokens_saved) == (20, 20 * 107)
    assert [d.session_id for d in billing.disagreements] == ["t000", "t010", "t020", "t030"]
    assert {d.model_target for d in billing.disagreements} == {"sales"}

    over_50 = report.rule(OVER_50)  # amounts 51..117: tickets 17..39
    assert over_50.evidence.fired == 23
    assert over_50.evidence.agreements == 12 + 2  # the odd tickets, and t020 and t030
    assert report.sessions == 40


async def test_status_filters_by_session_prefix() -> None:
    """Only the sessions whose id starts with the prefix are read."""
    journal = InMemoryJournal()
    await _corpus(journal)
    report = await status(journal, session_prefix="t00")
    assert report.sessions == 10
    assert report.rule(BILLING).evidence.fired == 5


async def test_a_journal_without_decisions_is_a_clear_error() -> None:
    """No verdicts: say how to gather them."""
    journal = InMemoryJournal()
    await swarm(journal).with_model(script("billing")).run("help", context={"category": "x"})
    with pytest.raises(RuleLearningError, match="shadow="):
        await status(journal)


async def test_sessions_copied_without_the_rules_log_still_count() -> None:
    """Verdicts name their rule list by digest; copied without the rules log that names it,
    the swarm's own list names it, and with no swarm the rules are counted by number."""
    live, copy = InMemoryJournal(), InMemoryJournal()
    await _corpus(live, count=10)
    for info in await live.sessions():
        if info.session_id != RULES_LOG:
            await copy.append(await live.read(info.session_id))
    named = await status(copy, swarm(shadow=shadow_rules()))
    assert named.rule(BILLING).evidence.fired == 5
    unnamed = await status(copy)
    first = unnamed.rules[0]
    assert first.rule.startswith("triage -> rule 0 of unnamed list ")
    assert (first.evidence.fired, first.evidence.agreements) == (5, 4)
