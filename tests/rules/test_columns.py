"""Learned rules judged from the learner's columns agree with routing every point."""

from __future__ import annotations

from swarmkit.messages import USER_WORDS_FACT
from swarmkit.rules._columns import judge_columns
from swarmkit.rules._corpus import FACT_KEYS, fresh_facts
from swarmkit.rules._features import Test as Atom
from swarmkit.rules._features import candidates, word_tests
from swarmkit.rules._rows import Holds, Row, Spot, words_of
from swarmkit.rules._suggest import _equality
from tests.rules.test_features import _contexts

WORDS = ("refund", "my", "invoice")


def _rows() -> list[Row]:
    """Rows over contexts of mixed kinds; some turns call the model twice on one context,
    some after a tool changed it, some with no message words."""
    rows = []
    for index, context in enumerate(_contexts()):
        facts = fresh_facts()
        facts[USER_WORDS_FACT] = None if index % 9 == 0 else WORDS[: index % 3 + 1]
        said = tuple(facts[key] for key in FACT_KEYS)
        last = Spot(index * 10 + 1, 5, True, context, said)
        points: tuple[Spot, ...] = (last,)
        if index % 4 == 1:
            points = (Spot(index * 10, 5, True, context, said), last)
        elif index % 4 == 2:  # a tool changed the context between the calls
            points = (Spot(index * 10, 5, True, {**context, "tier": "gold"}, said), last)
        rows.append(Row(f"s{index:03d}", "triage", "llm", "billing", frozenset(), points))
    return rows


def _rules(rows: list[Row]) -> list[tuple[Atom, ...]]:
    found = candidates(
        [row.points[-1].context for row in rows],  # type: ignore[misc]
        is_secret=lambda key: False,
        skip="swarm",
    )
    tests = {test.text: test for test in found.tests}
    words = [words_of(row.points[-1]) for row in rows]
    said = [index for index, held in enumerate(words) if held and "invoice" in held]
    labels: dict[str | None, list[int]] = {
        "billing": said,
        "sales": [i for i in range(len(rows)) if i not in said],
    }
    word = word_tests(words, labels, list(range(len(rows))), min_support=1)
    amount = next(text for text in tests if text.startswith("amount >= "))
    return [
        (tests["customer.plan == 'pro'"], tests[amount]),
        (next(test for test in word if "invoice" in test.text),),
        (tests["region == null"],),
        (tests["tier == 'gold'"], tests["verified == true"]),
    ]


def test_rules_read_off_the_columns_agree_with_routing_every_point() -> None:
    """Settled rows take their first rule from the columns, the others are routed, and every
    rule list judged later fires where routing each point would."""
    rows = _rows()
    rules = _rules(rows)
    whens = [" and ".join(test.text for test in atoms) for atoms in rules]
    equal = ["tier", "region", "customer.plan"]
    found = candidates(
        [row.points[-1].context for row in rows],  # type: ignore[misc]
        is_secret=lambda key: False,
        skip="swarm",
    )
    judged = judge_columns(rules, found.columns, rows, equal=equal, spell=_equality)
    assert judged is not None
    settled = sum(first is not None for first in judged.first)
    assert 0 < settled < len(rows)  # both ways are taken
    fast = Holds("triage", rows, whens, equal, _equality, judged=judged)
    slow = Holds("triage", rows, whens, equal, _equality)
    assert fast.first == slow.first
    assert fast.equalities == slow.equalities
    for order in ([0, 1, 2, 3], [1, 3], [3, 2, 0], [2]):
        assert list(fast.fires(order)) == list(slow.fires(order))


def test_an_atom_reading_another_path_leaves_every_row_to_routing() -> None:
    """A condition reading more than its own path is not judged from the columns."""
    rows = _rows()
    found = candidates(
        [row.points[-1].context for row in rows],  # type: ignore[misc]
        is_secret=lambda key: False,
        skip="swarm",
    )
    wide = Atom(text="tier == 'gold' or amount > 3", path="tier", bits=0)
    assert judge_columns([(wide,)], found.columns, rows, equal=[], spell=_equality) is None
