"""Compiles an ordered list of conditions into one function: the first that holds wins.

This is what a HandoffGraph node runs on every ``route``. Consecutive edges comparing the
same path with constants (``category == 'billing'``, ``category == 'support'``, ...)
become one dict lookup; every other edge keeps its own compiled closure, tried in order.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from swarmkit.conditions._ast import Expr, Or, PathKey, path_comparison
from swarmkit.conditions._compile import Condition, Predicate, compile_tree
from swarmkit.conditions._table import decision_table, first_match
from swarmkit.conditions._values import (
    EXACT_LIMIT,
    State,
    _dict_get,
    adapt_state,
    as_float,
    is_number,
    path_getter,
)

Result = TypeVar("Result")


def equality_of(condition: Condition) -> tuple[tuple[PathKey, ...], str | int | float] | None:
    """``(path keys, constant)`` when the condition is just ``path == constant``.

    Only strings and numbers whose comparison Python gets exactly right qualify, so a
    run of such conditions on one path can be answered by one dict lookup.
    """
    found = path_comparison(condition.tree)
    if found is None or found[0] != "==":
        return None
    _, path, constant = found
    value = constant.value
    if isinstance(value, str) or (is_number(value) and abs(value) < EXACT_LIMIT):
        return path.keys, value
    return None


Chooser = Callable[[object], Any]
_Step = tuple[Predicate, object]


@dataclass(kw_only=True, slots=True)
class _Table:
    """A run of ``path == constant`` branches on one path, answered by one dict lookup."""

    keys: tuple[PathKey, ...]
    """The path every branch of the run compares."""
    first: _Step
    """The run's first branch as a plain test, used instead when the run is that alone."""
    texts: dict[str, object] = field(default_factory=dict)
    """String constant -> result of the first branch comparing with it."""
    numbers: dict[int | float, object] = field(default_factory=dict)
    """Number constant -> result of the first branch comparing with it."""


def compile_first_match(branches: Sequence[tuple[Condition | None, Result]]) -> Chooser:
    """A function of the state returning the result of the first branch that holds.

    A branch without a condition always holds; when none holds the function returns
    ``None``, so results must not be ``None``. Like ``Condition``, it never raises.
    """
    steps, fallback, roots = _plan(branches)
    careful = tuple((condition, result) for condition, result in branches)
    # The common shapes get closures of their own: each saves a loop or a call per route.
    if not steps:
        return lambda state: fallback
    if len(steps) == 1 and isinstance(steps[0], _Table):
        return _table_chooser(steps[0], fallback, roots, careful)
    decided = _decision_chooser(branches, fallback, roots, careful, spread=len(steps) < _TABLE_FROM)
    if decided is not None:
        return decided
    if len(steps) >= _FLAT_FROM and all(isinstance(step, tuple) for step in steps):
        return _flat_chooser(branches, fallback, roots, careful)
    if len(steps) == 2 and all(isinstance(step, tuple) for step in steps):
        return _two_test_chooser(steps, fallback, roots, careful)  # type: ignore[arg-type]
    if all(isinstance(step, tuple) for step in steps):
        return _test_chooser(steps, fallback, roots, careful)  # type: ignore[arg-type]
    return _mixed_chooser(steps, fallback, roots, careful)


# From this many steps on, edges that share a path are answered by a per-key decision table.
_TABLE_FROM: Final = 3


def _decision_chooser(
    branches: Sequence[tuple[Condition | None, Result]],
    fallback: object,
    roots: frozenset[str],
    careful: tuple[Any, ...],
    *,
    spread: bool,
) -> Chooser | None:
    """The decision-table chooser for three or more steps, or for fewer (``spread``) when
    their ``or`` terms, taken as edges of their own, all test one path: the node is then
    one lookup (the first term that holds is in the first edge that holds)."""
    tests = _tests(branches, spread=spread)
    if len(tests) < _TABLE_FROM:
        return None
    table = decision_table([(tree, test) for tree, test, _ in tests], compile_tree)
    if table is None or (spread and (table.others or len(table.groups) > 1)):
        return None
    if spread and (table.groups[0].settle is None or table.groups[0].texts is not None):
        return None  # an or of strings on one key is one set lookup in its own test already
    return first_match(
        table,
        [*(result for _, _, result in tests), fallback],
        prepare=lambda state: adapt_state(state, roots),
        recover=lambda state: _carefully(careful, state),
    )


def _tests(
    branches: Sequence[tuple[Condition | None, Result]], *, spread: bool
) -> list[tuple[Expr, Predicate, Result]]:
    """The tests of the edges before the first without a condition; with ``spread``, an
    ``or`` of at most _SPREAD_UP_TO terms gives one test per term (and none if longer)."""
    tests: list[tuple[Expr, Predicate, Result]] = []
    for condition, result in itertools.takewhile(lambda branch: branch[0] is not None, branches):
        tree = condition.tree  # type: ignore[union-attr]
        if not spread:
            tests.append((tree, condition._test, result))  # type: ignore[union-attr]
        elif not isinstance(tree, Or) or len(tree.operands) > _SPREAD_UP_TO:
            return []
        else:
            tests += [(term, compile_tree(term), result) for term in tree.operands]
    return tests


_SPREAD_UP_TO: Final = 1_000


def _plan(
    branches: Sequence[tuple[Condition | None, object]],
) -> tuple[list[_Table | _Step], object, frozenset[str]]:
    steps: list[_Table | _Step] = []
    roots: set[str] = set()
    for condition, result in branches:
        if condition is None:
            return steps, result, frozenset(roots)  # later branches can never be reached
        roots |= condition.roots
        equality = equality_of(condition)
        if equality is None:
            steps.append((condition._test, result))
            continue
        keys, constant = equality
        table = steps[-1] if steps else None
        if not (isinstance(table, _Table) and table.keys == keys):
            table = _Table(keys=keys, first=(condition._test, result))
            steps.append(table)
        entries = table.texts if isinstance(constant, str) else table.numbers
        entries.setdefault(constant, result)  # type: ignore[arg-type]
    return _singles_as_tests(steps), None, frozenset(roots)


def _singles_as_tests(steps: list[_Table | _Step]) -> list[_Table | _Step]:
    # A table pays off only for two or more branches; one is faster as its own closure.
    return [
        step.first if isinstance(step, _Table) and len(step.texts) + len(step.numbers) < 2 else step
        for step in steps
    ]


def _look_up(table: _Table, value: Any) -> object:
    kind = value.__class__
    if kind is str:
        return table.texts.get(value)
    if kind is int or kind is float:
        return table.numbers.get(value)
    if isinstance(value, str):
        return table.texts.get(str.__str__(value))
    if is_number(value):
        return table.numbers.get(as_float(value))
    return None


def _table_chooser(
    table: _Table, fallback: object, roots: frozenset[str], careful: tuple[Any, ...]
) -> Chooser:
    get, arg = path_getter(table.keys)
    texts = table.texts

    def choose(state: Any) -> object:
        if state.__class__ is not dict:
            state = adapt_state(state, roots)
        try:
            value = get(state, arg)
        except Exception:  # a foreign key object in the state misbehaved
            return _carefully(careful, state)
        found = texts.get(value) if value.__class__ is str else _look_up(table, value)
        return fallback if found is None else found

    return choose


def _test_chooser(
    steps: list[_Step], fallback: object, roots: frozenset[str], careful: tuple[Any, ...]
) -> Chooser:
    if len(steps) == 1:
        ((test, result),) = steps

        def choose_one(state: Any) -> object:
            if state.__class__ is not dict:
                state = adapt_state(state, roots)
            try:
                return result if test(state) else fallback
            except Exception:  # a foreign object in the state misbehaved: go carefully
                return _carefully(careful, state)

        return choose_one
    tests = tuple(steps)

    def choose(state: Any) -> object:
        if state.__class__ is not dict:
            state = adapt_state(state, roots)
        try:
            for test, result in tests:
                if test(state):
                    return result
        except Exception:  # a foreign object in the state misbehaved: go carefully
            return _carefully(careful, state)
        return fallback

    return choose


def _two_test_chooser(
    steps: list[_Step], fallback: object, roots: frozenset[str], careful: tuple[Any, ...]
) -> Chooser:
    (first, first_result), (second, second_result) = steps

    def choose(state: Any) -> object:
        if state.__class__ is not dict:
            state = adapt_state(state, roots)
        try:
            if first(state):
                return first_result
            if second(state):
                return second_result
        except Exception:  # a foreign object in the state misbehaved: go carefully
            return _carefully(careful, state)
        return fallback

    return choose


def _mixed_chooser(
    steps: list[_Table | _Step], fallback: object, roots: frozenset[str], careful: tuple[Any, ...]
) -> Chooser:
    parts = tuple(_part(step) for step in steps)

    def choose(state: Any) -> object:
        if state.__class__ is not dict:
            state = adapt_state(state, roots)
        try:
            for part in parts:
                found = part(state)
                if found is not None:
                    return found
        except Exception:  # a foreign object in the state misbehaved: go carefully
            return _carefully(careful, state)
        return fallback

    return choose


def _part(step: _Table | _Step) -> Callable[[State], object]:
    if isinstance(step, tuple):
        test, result = step
        return lambda state: result if test(state) else None
    get, arg = path_getter(step.keys)
    return lambda state: _look_up(step, get(state, arg))


def _carefully(branches: tuple[tuple[Condition | None, object], ...], state: State) -> object:
    for condition, result in branches:
        if condition is None or condition(state):  # calling a Condition never raises
            return result
    return None


# From this many tests on, a node's single comparisons are read in one loop (see _flat_entry).
_FLAT_FROM: Final = 3
_TEXT_KINDS: Final[frozenset[type]] = frozenset({str})
_NUMBER_KINDS: Final[frozenset[type]] = frozenset({int, float})
_OPERATORS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_Flat = tuple[Any, Any, Any, Any, bool, Predicate, object]


def _flat_entry(condition: Condition, result: object) -> _Flat:
    """``(key, operator, constant, kinds, when missing, test, result)``: a top-level key
    compared with a text or a number is answered in the loop for values of exactly those
    kinds; any other value, and any other condition (key None), goes to its own test."""
    generic: _Flat = (None, None, None, None, False, condition._test, result)
    found = path_comparison(condition.tree)
    if found is None or found[0] not in _OPERATORS or len(found[1].keys) != 1:
        return generic
    op, path, literal = found
    constant = literal.value
    if isinstance(constant, str):
        kinds = _TEXT_KINDS
    elif isinstance(constant, int | float) and not isinstance(constant, bool):
        if not abs(constant) < EXACT_LIMIT:
            return generic
        kinds = _NUMBER_KINDS
    else:
        return generic
    # A missing key (None) equals and orders with nothing, so only != holds for it.
    return (path.keys[0], _OPERATORS[op], constant, kinds, op == "!=", condition._test, result)


def _flat_chooser(
    branches: Sequence[tuple[Condition | None, Result]],
    fallback: object,
    roots: frozenset[str],
    careful: tuple[Any, ...],
) -> Chooser:
    tested = itertools.takewhile(lambda branch: branch[0] is not None, branches)
    entries = tuple(_flat_entry(condition, result) for condition, result in tested)  # type: ignore[arg-type]
    get = _dict_get

    def choose(state: Any) -> object:
        if state.__class__ is not dict:
            state = adapt_state(state, roots)
        try:
            for key, order, constant, kinds, missing, test, result in entries:
                if key is None:
                    if test(state):
                        return result
                    continue
                value = get(state, key)
                if value.__class__ in kinds:
                    if order(value, constant):
                        return result
                elif value is None:
                    if missing:
                        return result
                elif test(state):
                    return result
        except Exception:  # a foreign object in the state misbehaved: go carefully
            return _carefully(careful, state)
        return fallback

    return choose
