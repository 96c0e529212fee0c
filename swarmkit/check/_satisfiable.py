"""Whether a condition can ever hold: a small abstract interpretation over its syntax tree.

A conjunction is read as constraints on each path (``==``, ``!=``, ``in``, ``not in`` a
list of constants, and ``< <= > >=`` against a constant); constraints on one path that no
value meets together make the conjunction false for every state. ``or`` is false when each
branch is (an ``or`` inside an ``and`` is expanded into its branches); ``not`` flips what is
known for certain. Anything else is "may hold": the
analysis never calls a satisfiable condition dead, it only misses some dead ones.
"""

from __future__ import annotations

import itertools
from typing import Any

from swarmkit.conditions.syntax import (
    And,
    Compare,
    Constant,
    Expr,
    Literal,
    Not,
    Or,
    PathKey,
    path_comparison,
)
from swarmkit.conditions.values import COMPARISONS, is_number, truthy

_MAX_BRANCHES = 64
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
            return not _consistent(operands)
        case Compare():
            return not _consistent((node,))
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
        return COMPARISONS[node.op](node.left.value, node.right.value)
    return None


def _consistent(operands: tuple[Expr, ...]) -> bool:
    """Whether some state could meet every operand: ``or`` operands are expanded into their
    branches (up to ``_MAX_BRANCHES`` combinations; beyond that an ``or`` is left open)."""
    fixed: list[Expr] = []
    choices: list[tuple[Expr, ...]] = []
    combinations = 1
    for operand in _flat(operands):
        if _expandable(operand, combinations):
            assert isinstance(operand, Or)
            combinations *= len(operand.operands)
            choices.append(operand.operands)
        else:
            fixed.append(operand)
    if any(_dead(o) for o in fixed):
        return False
    base = _tests(fixed)
    for branch in itertools.product(*choices):
        chosen = _flat(branch)
        if any(_dead(o) for o in chosen):
            continue
        tests = _tests(chosen)
        keys = set(base) | set(tests)
        if all(_satisfiable(base.get(k, []) + tests.get(k, [])) for k in keys):
            return True
    return False


def _expandable(operand: Expr, combinations: int) -> bool:
    if not isinstance(operand, Or) or combinations * len(operand.operands) > _MAX_BRANCHES:
        return False
    return all(_shallow(branch) for branch in operand.operands)


def _flat(operands: tuple[Expr, ...] | list[Expr]) -> list[Expr]:
    flat: list[Expr] = []
    for operand in operands:
        flat.extend(operand.operands if isinstance(operand, And) else (operand,))
    return flat


def _tests(operands: list[Expr]) -> dict[tuple[PathKey, ...], list[tuple[str, Constant]]]:
    """The path tests among ``operands``, by path."""
    tests: dict[tuple[PathKey, ...], list[tuple[str, Constant]]] = {}
    for operand in operands:
        atom = _atom(operand)
        if atom is not None:
            keys, op, constant = atom
            tests.setdefault(keys, []).append((op, constant))
    return tests


def _shallow(node: Expr) -> bool:
    """An ``or`` branch cheap to expand: no ``or`` in it, at most one ``and`` level."""
    if isinstance(node, Or):
        return False
    if isinstance(node, And):
        return not any(isinstance(o, And | Or) for o in node.operands)
    return True


def _dead(node: Expr) -> bool:
    """One operand of a conjunction that alone can never hold (its own sub-tree only)."""
    if isinstance(node, Compare):
        return _constant_compare(node) is False
    return never_true(node)


def _atom(node: Expr) -> tuple[tuple[PathKey, ...], str, Constant] | None:
    """A test of one path against a constant, as ``(path, op, constant)``, if it is one."""
    negated = False
    if isinstance(node, Not) and isinstance(node.operand, Compare):
        node, negated = node.operand, True
    found = path_comparison(node)
    if found is None:
        return None
    op: str = found[0]
    if negated:
        if op not in _NEGATED:  # not (x < 1) also holds for a string: nothing to learn
            return None
        op = _NEGATED[op]
    return found[1].keys, op, found[2].value


def _satisfiable(tests: list[tuple[str, Constant]]) -> bool:
    """Whether some value passes every test (the candidates tried are the tests' constants)."""
    candidates = _candidates(tests)
    if candidates is None:
        return _open_domain_satisfiable(tests)
    return any(all(COMPARISONS[op](value, c) for op, c in tests) for value in candidates)


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
    return all(COMPARISONS[op](low, c) for op, c in tests)
