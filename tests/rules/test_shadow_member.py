"""The shadow verdicts' member: one documented line of text, read back strictly."""

from __future__ import annotations

import pytest

from swarmkit.exceptions import JournalError
from swarmkit.journal import InMemoryJournal, JournalRecord
from swarmkit.rules import status
from swarmkit.shadow import parse_verdicts, read_verdicts, rule_set_digest, verdict_text
from tests.rules.shadow_swarm import BILLING, OVER_50, script, shadow_rules, swarm


async def test_a_decision_journals_its_verdicts_as_one_readable_line() -> None:
    """The billing rule agrees, the sales rule fires and disagrees: tokens, fired, agreeing,
    the list's digest and the model's choice, in that order."""
    journal = InMemoryJournal()
    await (
        swarm(journal, shadow_rules())
        .with_model(script("billing"))
        .run("help", context={"category": "billing", "amount": 80}, session_id="s1")
    )
    [call, _] = [r.data for r in await journal.read("s1") if r.kind == "model_call"]
    digest = rule_set_digest("triage", [BILLING, OVER_50])
    assert call["shadow"] == f"tokens=107 fired=0,1 agrees=0 set={digest} model=billing"


@pytest.mark.parametrize(
    ("names", "target"),
    [
        ([BILLING, OVER_50], "billing"),
        (["a -> b if note == 'x model=y'", 'a -> c if q == "] model="'], "an agent, spaced"),
        (["a -> é if tag == '\u2028'"], None),
        ([], ""),
    ],
    ids=["plain", "member-text-in-names", "unicode-kept-turn", "no-rules"],
)
def test_the_names_form_reads_back_whatever_the_names_and_target_hold(
    names: list[str], target: str | None
) -> None:
    """A rule list written by name (no rules log) and any agent name read back as written."""
    fired, agrees = list(range(len(names))), [0] if names else []
    text = verdict_text(12, fired, agrees, target, names=names)
    assert parse_verdicts(text, "s", 3) == {
        "tokens": 12,
        "rules": names,
        "fired": fired,
        "agrees": agrees,
        "model_target": target or None,
    }


@pytest.mark.parametrize(
    "member",
    [
        "tokens=1 fired=0 agrees= model=x",
        "tokens=1 fired=0, agrees= set=0123456789abcdef model=x",
        "tokens=-1 fired= agrees= set=0123456789abcdef model=x",
        "tokens=1 fired=٣ agrees= set=0123456789abcdef model=x",
        'tokens=1 fired= agrees= rules=["a"] modl=x',
        "tokens=1 fired= agrees= rules=[1] model=x",
        {"fired": [0], "agrees": [], "tokens": 1, "set": "0123456789abcdef"},
    ],
    ids=[
        "no-list",
        "trailing-comma",
        "negative",
        "non-ascii-digit",
        "no-model",
        "not-names",
        "dict",
    ],
)
async def test_a_malformed_member_is_a_journal_error_naming_its_record(member: object) -> None:
    """Status and read_verdicts refuse an altered member, naming the session and the seq."""
    journal = InMemoryJournal()
    data = {"shadow": member, "agent": "triage", "turn": 1}
    await journal.append([JournalRecord(session_id="s1", seq=0, kind="model_call", data=data)])
    with pytest.raises(JournalError, match=r"record 0 \(model_call\) of session 's1'"):
        await status(journal)
    with pytest.raises(JournalError, match="malformed shadow verdicts"):
        await read_verdicts(journal, "s1")
