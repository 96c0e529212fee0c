"""Journals of the older verdict form (one dict per rule) still replay and still count."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from swarmkit import HandoffGraph
from swarmkit.exceptions import ReplayDivergenceError
from swarmkit.journal import InMemoryJournal, Journal, JournalRecord
from swarmkit.rules import RulesStatus, status
from swarmkit.shadow import (
    SHADOW_MEMBER,
    SHADOW_RECORD,
    read_rules_log,
    rule_sets,
    verdicts_held,
    verdicts_of,
)
from tests.rules.shadow_swarm import BILLING, OVER_50, script, shadow_rules, swarm


def _older(
    records: Sequence[JournalRecord],
    lists: dict[str, tuple[str, tuple[str, ...]]],
    form: str,
) -> tuple[JournalRecord, ...]:
    """A session as swarmkit wrote it before the verdicts went into the model call's record:
    each call's verdicts in a ``shadow`` record of their own after it, in the compact form
    (``"separate"``) or as swarmkit 0.2 wrote them (``"0.2"``: a verdict dict per rule, no
    tokens)."""
    older: list[tuple[str, Mapping[str, Any]]] = []
    for record in records:
        verdicts = verdicts_held(record)
        if verdicts is None:
            older.append((record.kind, record.data))
            continue
        call = {key: value for key, value in record.data.items() if key != SHADOW_MEMBER}
        older += [("model_call", call), (SHADOW_RECORD, _form(verdicts, lists, form))]
    sid = records[0].session_id
    return tuple(
        JournalRecord(session_id=sid, seq=seq, kind=kind, data=data)
        for seq, (kind, data) in enumerate(older)
    )


def _form(
    data: Mapping[str, Any], lists: dict[str, tuple[str, tuple[str, ...]]], form: str
) -> Mapping[str, Any]:
    if form == "separate":
        return data
    targets = {BILLING: "billing", OVER_50: "sales"}
    return {
        "agent": data["agent"],
        "turn": data["turn"],
        "model_target": data["model_target"],
        "verdicts": [
            {"rule": v.rule, "target": targets[v.rule], "fired": v.fired, "agrees": v.agrees}
            for v in verdicts_of(data, lists)
        ],
    }


async def _corpus(
    live: Journal, old: Journal, count: int = 20, legacy_from: int = 0, form: str = "0.2"
) -> None:
    """Tickets as in the status tests, run live into ``live`` and copied into ``old`` through
    the journal API, the sessions from ``legacy_from`` on in an older ``form``."""
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
            records = _older(records, lists, form)
        await old.append(records)


@pytest.mark.parametrize("form", ["separate", "0.2"])
async def test_an_older_journal_replays_strictly_and_changed_rules_diverge(form: str) -> None:
    """A strict replay of a session journaled in an older form (verdicts in a record of their
    own) makes no call and checks its verdicts: other shadow rules diverge."""
    live, old = InMemoryJournal(), InMemoryJournal()
    await _corpus(live, old, count=2, form=form)
    [record] = [r for r in await old.read("t000") if r.kind == SHADOW_RECORD]
    assert ("verdicts" in record.data) == (form == "0.2")
    assert not any(SHADOW_MEMBER in r.data for r in await old.read("t000"))
    replayed = await swarm(old, shadow_rules()).replay("t000")
    assert replayed.trail == ("triage", "sales")
    other = HandoffGraph()
    other.add_edge("triage", "sales", "amount > 10")
    with pytest.raises(ReplayDivergenceError):
        await swarm(old, other).replay("t000")


@pytest.mark.parametrize("form", ["separate", "0.2"])
async def test_status_reads_older_newer_and_mixed_journals_alike(store: Journal, form: str) -> None:
    """The same sessions with the verdicts in the model calls, in an older form (a record of
    their own) and half of each give the same counts, tokens and disagreements, on SQLite and
    Postgres (the copies lack the rules log that names the compact verdicts' rule list: the
    swarm's own list names it); a disagreement points at the record holding the verdicts."""
    live, old, mixed = InMemoryJournal(), InMemoryJournal(), store
    await _corpus(live, old, form=form)
    await _corpus(InMemoryJournal(), mixed, legacy_from=10, form=form)
    journals = (live, old, mixed)
    reports = [await status(journal, swarm(shadow=shadow_rules())) for journal in journals]
    assert _unplaced(reports[0]) == _unplaced(reports[1]) == _unplaced(reports[2])
    billing = reports[0].rule(BILLING)
    assert (billing.decisions, billing.evidence.fired, billing.evidence.agreements) == (20, 10, 8)
    assert billing.tokens_saved == 10 * 107
    assert [d.session_id for d in billing.disagreements] == ["t000", "t010"]
    for journal, report in zip(journals, reports, strict=True):
        for found in report.rule(BILLING).disagreements:
            [record] = [r for r in await journal.read(found.session_id) if r.seq == found.seq]
            assert verdicts_held(record) is not None


def _unplaced(report: RulesStatus) -> dict[str, Any]:
    """A report's data without the seqs of its disagreements (the verdicts' record)."""
    data = report.to_data()
    for rule in data["rules"]:
        for disagreement in rule["disagreements"]:
            del disagreement["seq"]
    return data
