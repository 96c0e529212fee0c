"""Rules learned from what the customer wrote: word atoms, alone and with context tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from swarmkit import HandoffGraph
from swarmkit.journal import Journal, SQLiteJournal
from swarmkit.messages import message_facts
from swarmkit.rules import SuggestReport, held_out, suggest_rules, whatif
from tests.rules import text_corpus
from tests.rules.corpus import copy

_BUILT: dict[int, tuple[Journal, list[text_corpus.Plan]]] = {}


async def _corpus(redact_every: int = 7) -> tuple[Journal, list[text_corpus.Plan]]:
    # 600 real runs cost seconds: built once per test module (the journal is only read).
    if redact_every not in _BUILT:
        _BUILT[redact_every] = await text_corpus.build(600, redact_every=redact_every)
    return _BUILT[redact_every]


async def _report() -> SuggestReport:
    journal, _ = await _corpus()
    return await suggest_rules(journal, min_precision=0.98, min_support=10)


async def test_word_rules_and_a_mixed_rule_are_recovered_at_the_held_out_precision() -> None:
    """Each key word's rule, and 'urgent' with tier == 'gold', at 100% held-out precision."""
    report = await _report()
    found = {s.when: s.target for s in report.suggestions}

    assert found == {
        "'urgent' in swarm.user_words and tier == 'gold'": "support",
        "'quote' in swarm.user_words": "sales",
        "'price' in swarm.user_words": "sales",
        "'invoice' in swarm.user_words": "billing",
        "'refund' in swarm.user_words": "billing",
    }
    assert all(s.precision == 1.0 and s.support >= 10 for s in report.suggestions)
    assert all(s.counter_count == 0 for s in report.suggestions)


async def test_the_rules_route_every_held_out_message_as_the_model_did() -> None:
    """Applied as a graph, the rules send each held-out worded session where the model did."""
    _, plans = await _corpus()
    rules = HandoffGraph.from_dict((await _report()).to_dict())
    checked = 0
    for item in plans:
        if not held_out(item.session_id) or item.coin or item.redacted:
            continue
        state = {**item.context, "swarm": {"agent": "triage", **message_facts(item.message)}}
        assert rules.route("triage", state) == item.target, item
        checked += 1
    assert checked > 100


async def test_whatif_tries_the_text_rules_and_finds_no_changed_route() -> None:
    """whatif with the suggested rules: every session they decide goes where the model went."""
    journal, plans = await _corpus()
    outcome = await whatif(journal, (await _report()).graph())

    assert outcome.count("changed") == 0
    worded = sum(1 for p in plans if not p.coin and not p.redacted)
    assert outcome.count("same_route") == worded


async def test_redacted_messages_are_never_learned_from() -> None:
    """When every message is redacted (and routed against its words), no word rule is learned."""
    journal, _ = await text_corpus.build(200, redact_every=1)
    report = await suggest_rules(journal, min_precision=0.98, min_support=10)

    assert not [s for s in report.suggestions if "user_words" in s.when]
    assert not [w for w in report.withheld if "user_words" in w.when]


async def test_the_command_shows_the_text_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`swarmkit rules suggest` prints the word rules as paste-ready lines."""
    from swarmkit.cli import main  # noqa: PLC0415

    memory, _ = await _corpus()
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as stored:
        await copy(memory, stored)
    argv = ["rules", "suggest", "--swarm", "tests.rules.text_corpus:desk", "--journal", str(path)]
    code = await asyncio.to_thread(main, [*argv, "--min-support", "10"])
    out = capsys.readouterr().out

    assert code == 0
    assert "when=\"'refund' in swarm.user_words\"" in out
    assert "when=\"'urgent' in swarm.user_words and tier == 'gold'\"" in out
