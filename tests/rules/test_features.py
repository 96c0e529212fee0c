"""Candidate atoms of a learner's contexts, read a batch at a time."""

from __future__ import annotations

from typing import Any

import pytest

from swarmkit.redaction import REDACTED
from swarmkit.rules import _features
from swarmkit.rules._features import candidates


def _contexts() -> list[dict[str, Any]]:
    """Contexts whose paths mix kinds, key orders, nesting and redaction across rows."""
    contexts: list[dict[str, Any]] = []
    for row in range(300):
        context: dict[str, Any] = {
            "tier": ("gold", "silver", "bronze")[row % 3],
            "amount": row if row % 7 else row + 0.5,
            "region": None if row % 5 == 0 else ("eu", "us")[row % 2],
            "verified": row % 4 == 0,
            "tags": ["vip"] if row % 6 == 0 else [],
            "customer": {"plan": ("pro", "free")[row % 2], "age": row % 50},
            "note": REDACTED if row == 150 else "kept",
        }
        if row % 11 == 0:  # another key order, another shape
            context = dict(reversed(list(context.items())))
        if row % 13 == 0:  # a nested object where others hold text
            context["customer"] = "walk-in"
        contexts.append(context)
    return contexts


def test_the_atoms_do_not_depend_on_how_many_contexts_are_read_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Columns of mixed kinds, shapes and nesting give the atoms of reading rows one by one."""
    together = candidates(_contexts(), is_secret=lambda key: False, skip="swarm")
    monkeypatch.setattr(_features, "_BATCH", 1)
    alone = candidates(_contexts(), is_secret=lambda key: False, skip="swarm")
    assert [(t.text, t.bits) for t in together.tests] == [(t.text, t.bits) for t in alone.tests]
    assert together.left_out == alone.left_out == {"note": "its value is redacted in the journal"}
    texts = {t.text for t in together.tests}
    assert {
        "tier == 'gold'",
        "customer.plan == 'pro'",
        "'vip' in tags",
        "verified == true",
    } <= texts
    assert any(text.startswith("amount >= ") for text in texts)


def test_each_atom_holds_on_exactly_the_rows_its_condition_does() -> None:
    """Every atom's bits are the rows where its condition holds, read from the contexts."""
    contexts = _contexts()
    found = candidates(contexts, is_secret=lambda key: False, skip="swarm")
    assert len(found.tests) > 20
    for test in found.tests:
        holding = [row for row, context in enumerate(contexts) if _holds(test.text, context)]
        assert test.bits == sum(1 << row for row in holding), test.text


def _holds(text: str, context: dict[str, Any]) -> bool:
    """The few atom forms the learner writes, judged on one context."""
    if " in " in text:
        element, path = text.split(" in ")
        value = _at(context, path)
        return isinstance(value, list) and element.strip("'") in value
    path, operator, literal = text.split(" ", 2)
    value = _at(context, path)
    if literal == "null":  # null: no value an atom can test (a nested object has none)
        return (not _usable(value)) == (operator == "==")
    if operator in (">=", "<"):
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return number and (value >= float(literal)) == (operator == ">=")
    expected = {"true": True, "false": False}.get(literal, literal.strip("'"))
    return value == expected and type(value) is type(expected)


def _usable(value: Any) -> bool:
    if isinstance(value, list):
        return any(type(element) in (str, int) for element in value)
    return value is not None and not isinstance(value, dict)


def _at(context: dict[str, Any], path: str) -> Any:
    value: Any = context
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value
