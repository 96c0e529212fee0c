"""Whether a condition can ever hold: a small abstract interpretation over its syntax tree.

A conjunction is read as constraints on each path (``==``, ``!=``, ``in``, ``not in`` a
list of constants, and ``< <= > >=`` against a constant); constraints on one path that no
value meets together make the conjunction false for every state. ``or`` is false when each
branch is; ``not`` flips what is known for certain. Anything else is "may hold": the
analysis never calls a satisfiable condition dead, it only misses some dead ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from swarmkit.conditions._ast import And, Compare, Constant, Expr, Literal, Not, Or, Path, PathKey
from swarmkit.conditions._values import (
    contains,
    equals,
    greater,
    greater_equal,
    is_number,
    less,
    less_equal,
    not_contains,
    not_equals,
    truthy,
)

_TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "==": equals,
    "!=": not_equals,
    "<": less,
    "<=": less_equal,
    ">": greater,
    ">=": greater_equal,
    "in": contains,
    "not in": not_contains,
}
_FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATED = {"==": "!=", "!=": "==", "in": "not in", "not in": "in"}


def never_true(node: Expr) -> bool:
    """Whether ``node`` is false (falsy) for every state."""
    match node:
        case Literal(value=value):
            return not truthy(value)
        case Or(operands=operands):
            return all(never_true(operand) for operand in operands)
        case Not(operand=operand):
            return always_true(operand)
        case And(operands=operands):
            return any(never_true(o) for o in operands) or not _consistent(operands)
        case Compare():
            return _constant_compare(node) is False or not _consistent((node,))
        case _:
            return False


def always_true(node: Expr) -> bool:
    """Whether ``node`` is true (truthy) for every state."""
    match node:
        case Literal(value=value):
            return truthy(value)
        case Or(operands=operands):
            return any(always_true(operand) for operand in operands)
        case And(operands=operands):
            return all(always_true(operand) for operand in operands)
        case Not(operand=operand):
            return never_true(operand)
        case Compare():
            return _constant_compare(node) is True
        case _:
            return False


def _constant_compare(node: Compare) -> bool | None:
    if isinstance(node.left, Literal) and isinstance(node.right, Literal):
        return _TESTS[node.op](node.left.value, node.right.value)
    return None


@dataclass(kw_only=True, slots=True)
class _Facts:
    """What a conjunction says of one path: the tests its value must pass."""

    tests: list[tuple[str, Constant]] = field(default_factory=list)
    """``(op, constant)`` pairs: the value ``op`` the constant must hold."""


def _consistent(operands: tuple[Expr, ...]) -> bool:
    facts: dict[tuple[PathKey, ...], _Facts] = {}
    for operand in operands:
        atom = _atom(operand)
        if atom is not None:
            keys, op, constant = atom
            facts.setdefault(keys, _Facts()).tests.append((op, constant))
    return all(_satisfiable(path_facts.tests) for path_facts in facts.values())


def _atom(node: Expr) -> tuple[tuple[PathKey, ...], str, Constant] | None:
    """A test of one path against a constant, as ``(path, op, constant)``, if it is one."""
    negated = False
    if isinstance(node, Not) and isinstance(node.operand, Compare):
        node, negated = node.operand, True
    if not isinstance(node, Compare):
        return None
    op: str = node.op
    if isinstance(node.left, Path) and isinstance(node.right, Literal):
        keys, constant = node.left.keys, node.right.value
    elif isinstance(node.right, Path) and isinstance(node.left, Literal) and op in _FLIPPED:
        keys, constant, op = node.right.keys, node.left.value, _FLIPPED[op]
    else:
        return None
    if negated:
        if op not in _NEGATED:  # not (x < 1) also holds for a string: nothing to learn
            return None
        op = _NEGATED[op]
    return keys, op, constant


def _satisfiable(tests: list[tuple[str, Constant]]) -> bool:
    """Whether some value passes every test (the candidates tried are the tests' constants)."""
    candidates = _candidates(tests)
    if candidates is None:
        return _open_domain_satisfiable(tests)
    return any(all(_TESTS[op](value, c) for op, c in tests) for value in candidates)


def _candidates(tests: list[tuple[str, Constant]]) -> list[Any] | None:
    """The only values that can pass: an ``==`` constant or an ``in`` list; None if open."""
    for op, constant in tests:
        if op == "==":
            return [constant]
    for op, constant in tests:
        if op == "in":
            return list(constant) if isinstance(constant, tuple) else _substrings(constant)
    return None


def _substrings(constant: Constant) -> list[Any] | None:
    # ``x in 'abc'`` holds for any substring; ``x in 5`` for nothing at all.
    return None if isinstance(constant, str) else []


def _open_domain_satisfiable(tests: list[tuple[str, Constant]]) -> bool:
    """Only ``!=``, ``not in`` and order tests: they exclude finitely many values, so only a
    range with no room left (or one value, excluded) makes them fail together."""
    bounds = [(op, c) for op, c in tests if op in ("<", "<=", ">", ">=")]
    if not bounds:
        return True
    if any(not (is_number(c) or isinstance(c, str)) for _, c in bounds):
        return False  # ordering a value against null, a bool or a list never holds
    if len({"number" if is_number(c) else "str" for _, c in bounds}) > 1:
        return False  # one value cannot be both a number and a string
    lower: list[tuple[Any, bool]] = [(c, op == ">") for op, c in bounds if op in (">", ">=")]
    upper: list[tuple[Any, bool]] = [(c, op == "<") for op, c in bounds if op in ("<", "<=")]
    if not lower or not upper:
        return True
    low, low_strict = max(lower, key=lambda b: (b[0], b[1]))
    high, high_strict = min(upper, key=lambda b: (b[0], not b[1]))
    if low > high:
        return False
    if low < high:
        return True  # numbers and strings alike have values strictly between two others
    if low_strict or high_strict:
        return False
    return all(_TESTS[op](low, c) for op, c in tests)
