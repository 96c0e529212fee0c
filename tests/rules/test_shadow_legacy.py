"""Journals of the older verdict form (one dict per rule) still replay and still count."""

from __future__ import annotations

import pytest

from swarmkit import HandoffGraph
from swarmkit.exceptions import ReplayDivergenceError
from swarmkit.journal import InMemoryJournal, Journal, JournalRecord
from swarmkit.rules import status
from swarmkit.shadow import SHADOW_RECORD, read_rules_log, rule_sets, verdicts_of
from tests.rules.shadow_swarm import BILLING, OVER_50, script, shadow_rules, swarm


def _legacy(record: JournalRecord, lists: dict[str, tuple[str, tuple[str, ...]]]) -> JournalRecord:
    """The record as swarmkit 0.2 wrote it: a verdict dict per rule, no tokens."""
    if record.kind != SHADOW_RECORD:
        return record
    data = record.data
    targets = {BILLING: "billing", OVER_50: "sales"}
    old = {
        "agent": data["agent"],
        "turn": data["turn"],
        "model_target": data["model_target"],
        "verdicts": [
            {"rule": v.rule, "target": targets[v.rule], "fired": v.fired, "agrees": v.agrees}
            for v in verdicts_of(data, lists)
        ],
    }
    return JournalRecord(session_id=record.session_id, seq=record.seq, kind=record.kind, data=old)


async def _corpus(live: Journal, old: Journal, count: int = 20, legacy_from: int = 0) -> None:
    """Tickets as in the status tests, run live into ``live`` and copied into ``old`` through
    the journal API, the sessions from ``legacy_from`` on in the older form."""
    shadowed = swarm(live, shadow_rules())
    for index in range(count):
        billing = index % 2 == 0
        target = "billing" if billing and index % 10 else "sales"
        context = {"category": "billing" if billing else "sales", "amount": index * 6}
        session_id = f"t{index:03d}"
        await shadowed.with_model(script(target)).run(
            "help", context=context, session_id=session_id
        )
        records = await live.read(session_id)
        if index >= legacy_from:
            lists = rule_sets(await read_rules_log(live, rule_lists=True))
            records = tuple(_legacy(record, lists) for record in records)
        await old.append(records)


async def test_an_older_journal_replays_strictly_and_changed_rules_diverge() -> None:
    """A strict replay of a session journaled in the older form makes no call and checks its
    verdicts: other shadow rules diverge."""
    live, old = InMemoryJournal(), InMemoryJournal()
    await _corpus(live, old, count=2)
    [record] = [r for r in await old.read("t000") if r.kind == SHADOW_RECORD]
    assert "verdicts" in record.data
    replayed = await swarm(old, shadow_rules()).replay("t000")
    assert replayed.trail == ("triage", "sales")
    other = HandoffGraph()
    other.add_edge("triage", "sales", "amount > 10")
    with pytest.raises(ReplayDivergenceError):
        await swarm(old, other).replay("t000")


async def test_status_reads_older_newer_and_mixed_journals_alike(store: Journal) -> None:
    """The same sessions in the compact form, the older form and half of each give the same
    counts, tokens and disagreements, on SQLite and Postgres (the copies lack the rules log
    that names the compact verdicts' rule list: the swarm's own list names it)."""
    live, old, mixed = InMemoryJournal(), InMemoryJournal(), store
    await _corpus(live, old)
    await _corpus(InMemoryJournal(), mixed, legacy_from=10)
    reports = [await status(journal, swarm(shadow=shadow_rules())) for journal in (live, old)]
    reports.append(await status(mixed, swarm(shadow=shadow_rules())))
    assert reports[0].to_data() == reports[1].to_data() == reports[2].to_data()
    billing = reports[0].rule(BILLING)
    assert (billing.decisions, billing.evidence.fired, billing.evidence.agreements) == (20, 10, 8)
    assert billing.tokens_saved == 10 * 107
    assert [d.session_id for d in billing.disagreements] == ["t000", "t010"]
