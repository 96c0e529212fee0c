"""Per-key decision tables: ordered tests grouped by the one path each compares with constants.

A node's edges (or an ``or`` chain's terms) that compare one path with plain constants,
``tier == 'gold'``, ``score >= 80 and score < 90``, ``kind in ['a', 'b']``, are answered by
reading the path once: a dict when only equality is asked, bisect on the sorted constants
when order is, one stored answer each for null, true, false and NaN. An ``and`` with such a
part (``region == 'eu' and amount > 10``) is keyed on that part, and the rest is tested only
for the edges the table leaves in. ``'text' in path`` terms on one path share one pass over
the list. Every other test keeps its own closure, tried in order.

The stored answers come from the language's own comparisons (``_values``), evaluated once
per region of values when the table is built; a value of any other type (a str subclass,
a list, an object) is tested edge by edge. So the answer is always the plain evaluation's:
the first test that holds, in order. Nothing here generates code. ``_keyed`` says which
tests a table can answer; ``_lookup`` holds the closures that read a path and answer.
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from swarmkit.conditions._ast import Expr, PathKey
from swarmkit.conditions._keyed import (
    constants_of,
    holds,
    needle_of,
    path_preference,
    split_keyed,
)
from swarmkit.conditions._lookup import UNSETTLED, Kind, value_chooser, value_lookup
from swarmkit.conditions._values import State, path_getter

Predicate = Callable[[State], bool]
Candidates: TypeAlias = tuple[tuple[int, Predicate | None], ...]
"""``(index, rest)`` of each test a value may satisfy, in order; ``rest`` None: it holds."""
Lookup = Callable[[State], Candidates]

_ORDERS: Final = frozenset({"<", "<=", ">", ">="})
# A group answers at most this many (tests x values tried) at build time; a longer chain of one
# key (a 100,000-term ``or``) keeps its plain tests rather than a quadratic build.
_BUILD_LIMIT: Final = 50_000
# A list longer than this many times the needles is searched needle by needle (in C).
_SCAN_FACTOR: Final = 8
# An ordered group of numbers whose bounds span at most this many ints stores each int.
_WHOLE_NUMBERS_UP_TO: Final = 1_024
SPARSE_FROM: Final = 8
"""From this many keys that each must be present for their tests to hold, a state with fewer
keys is walked instead: only the groups of keys it has are asked."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Group:
    """The tests of a table that read one path, answered by one read of it."""

    first: int
    """The index of its first test."""
    size: int
    """How many tests it answers."""
    lookup: Lookup
    """The candidates for the state's value at the path."""
    sparse_key: str | None
    """The top-level key it reads, when none of its tests can hold while the key is missing."""
    settle: Callable[[Sequence[object], Any], Callable[[Any], object]] | None
    """Given the answers, the lookup returning the answer itself (or ``UNSETTLED``), or with
    ``(prepare, recover)`` a whole chooser: for a group whose tests read only its path."""
    texts: tuple[str, dict[str, Candidates], Candidates] | None = None
    """``(key, points, other)`` when the group reads one top-level key, needs nothing but it,
    and asks strings only for equality: a string there is then looked up in place."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DecisionTable:
    """A list of tests compiled into per-path lookups and the leftover tests."""

    groups: tuple[Group, ...]
    """One per path, by the index of its first test."""
    others: tuple[tuple[int, Predicate], ...]
    """``(index, test)`` of the tests no group answers, in order."""
    count: int
    """How many tests there are; an index of ``count`` means none held."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _Member:
    """One test of a group."""

    index: int
    """Its position in the list of tests."""
    key: Expr
    """The part that compares the group's path with constants."""
    rest: Predicate | None
    """The compiled remainder of an ``and`` keyed on ``key``; None when ``key`` is all."""
    whole: Predicate
    """The whole test, for values the table has no answer for."""


def decision_table(
    tests: Sequence[tuple[Expr, Predicate]], compile_tree: Callable[[Expr], Predicate]
) -> DecisionTable | None:
    """The table for ``tests`` (tree and compiled test, in order), or None when it would not
    pay: no path is compared by two tests, and too few keys for a walk over the state's."""
    preferred = path_preference(tree for tree, _ in tests)
    keyed: dict[tuple[PathKey, ...], list[_Member]] = {}
    needles: dict[tuple[PathKey, ...], list[tuple[int, str, Predicate]]] = {}
    others: list[tuple[int, Predicate]] = []
    for index, (tree, whole) in enumerate(tests):
        needle = needle_of(tree)
        split = None if needle is not None else split_keyed(tree, preferred, compile_tree)
        if needle is not None:
            needles.setdefault(needle[0], []).append((index, needle[1], whole))
        elif split is not None:
            path, key, rest = split
            member = _Member(index=index, key=key, rest=rest, whole=whole)
            keyed.setdefault(path, []).append(member)
        else:
            others.append((index, whole))
    built = [
        (_value_group(path, members), [(member.index, member.whole) for member in members])
        for path, members in keyed.items()
    ]
    built += [
        (_needle_group(path, found), [(index, whole) for index, _, whole in found])
        for path, found in needles.items()
    ]
    groups = _worth_keeping(built, others)
    if not groups:
        return None
    others.sort(key=lambda other: other[0])
    groups.sort(key=lambda group: group.first)
    return DecisionTable(groups=tuple(groups), others=tuple(others), count=len(tests))


def _worth_keeping(
    built: list[tuple[Group | None, list[tuple[int, Predicate]]]],
    others: list[tuple[int, Predicate]],
) -> list[Group]:
    """The groups that pay for their lookup; the tests of the rest go back to ``others``."""
    walk = sum(1 for group, _ in built if group is not None and group.sparse_key) >= SPARSE_FROM
    if not walk and not any(group is not None and group.size > 1 for group, _ in built):
        return []
    kept: list[Group] = []
    for group, tests in built:
        if group is not None and (group.size > 1 or (walk and group.sparse_key)):
            kept.append(group)
        else:
            others.extend(tests)
    return kept


# Groups: one path read once, its tests answered from stored candidates.


def _value_group(path: tuple[PathKey, ...], members: list[_Member]) -> Group | None:
    pairs = [pair for member in members for pair in constants_of(member.key)]
    texts = sorted({value for _, value in pairs if type(value) is str})
    numbers = _distinct([value for _, value in pairs if type(value) in (int, float)])
    if (2 * len(texts) + 2 * len(numbers) + 6) * len(members) > _BUILD_LIMIT:
        return None

    def answer(value: object) -> Candidates:
        return _candidates(members, value)

    unknown = tuple((member.index, member.whole) for member in members)
    text_order = any(op in _ORDERS and type(value) is str for op, value in pairs)
    number_order = any(op in _ORDERS and type(value) in (int, float) for op, value in pairs)
    number_order = number_order or answer(math.nan) != answer(_other_number(numbers))
    text = _kind(
        texts,
        ordered=text_order,
        other=_other_text(texts),
        steps=_TEXT_STEPS,
        answer=answer,
        unknown=unknown,
    )
    number = _kind(
        numbers,
        ordered=number_order,
        other=_other_number(numbers),
        steps=_NUMBER_STEPS,
        answer=answer,
        unknown=unknown,
    )
    singles = (answer(math.nan), answer(None), answer(True), answer(False), unknown)
    settle = None
    if all(member.rest is None for member in members):
        settle = _settler(path, text, number, singles)
    return Group(
        first=members[0].index,
        size=len(members),
        lookup=value_lookup(path, text, number, singles),
        sparse_key=_top_key(path) if not singles[1] else None,
        settle=settle,
        texts=_texts(path, text) if settle is not None else None,
    )


def _texts(
    path: tuple[PathKey, ...], text: Kind
) -> tuple[str, dict[str, Candidates], Candidates] | None:
    key = _top_key(path)
    if key is None or text.bounds is not None or not text.points:
        return None
    return key, text.points, text.other


def _top_key(path: tuple[PathKey, ...]) -> str | None:
    return path[0] if len(path) == 1 and type(path[0]) is str else None


def _settler(
    path: tuple[PathKey, ...], text: Kind, number: Kind, singles: tuple[Candidates, ...]
) -> Callable[[Sequence[object], Any], Callable[[Any], object]]:
    unknown = singles[-1]

    def settle(answers: Sequence[object], around: Any) -> Callable[[Any], object]:
        def final(slot: Candidates) -> object:
            if slot is unknown:
                return UNSETTLED
            return answers[slot[0][0]] if slot else answers[-1]

        settled = tuple(final(slot) for slot in singles)
        text_answers, number_answers = _mapped(text, final), _mapped(number, final)
        if around is None:
            return value_lookup(path, text_answers, number_answers, settled)
        return value_chooser(path, text_answers, number_answers, settled, around)

    return settle


def _mapped(kind: Kind, final: Callable[[Candidates], object]) -> Kind:
    points = {constant: final(slot) for constant, slot in kind.points.items()}
    gaps = [final(gap) for gap in kind.gaps]
    return Kind(points=points, other=final(kind.other), bounds=kind.bounds, gaps=gaps)


def _candidates(members: list[_Member], value: object) -> Candidates:
    """The members whose key part holds for ``value``, in order, up to the first that needs
    nothing more."""
    found: list[tuple[int, Predicate | None]] = []
    for member in members:
        if holds(member.key, value):
            found.append((member.index, member.rest))
            if member.rest is None:
                break
    return tuple(found)


def _distinct(numbers: list[Any]) -> list[Any]:
    """Sorted, one of each value (``1`` and ``1.0`` are one number)."""
    kept: list[Any] = []
    for number in sorted(numbers):
        if not kept or kept[-1] != number:
            kept.append(number)
    return kept


def _other_number(numbers: list[Any]) -> object:
    return numbers[-1] + 1 if numbers else 0


def _other_text(texts: list[str]) -> str:
    return "\x00" * (max((len(text) for text in texts), default=0) + 1)


# A value strictly inside each open region, or None when no value of that kind is.
_Steps = tuple[Callable[[Any], Any], Callable[[Any, Any], Any], Callable[[Any], Any]]
_TEXT_STEPS: Final[_Steps] = (
    lambda first: "" if first else None,
    lambda low, high: low + "\x00" if low + "\x00" < high else None,
    lambda last: last + "\x00",
)
_NUMBER_STEPS: Final[_Steps] = (
    lambda first: first - 1,
    lambda low, high: (low + high) / 2 if low < (low + high) / 2 < high else None,
    lambda last: last + 1,
)


def _kind(
    constants: list[Any],
    *,
    ordered: bool,
    other: object,
    steps: _Steps,
    answer: Callable[[object], Candidates],
    unknown: Candidates,
) -> Kind:
    points = {constant: answer(constant) for constant in constants}
    if not ordered or not constants:
        return Kind(points=points, other=answer(other), bounds=None, gaps=[])
    below, between, above = steps
    samples = [below(constants[0])]
    samples += [between(low, high) for low, high in itertools.pairwise(constants)]
    samples.append(above(constants[-1]))
    # An empty gap holds no value of its kind, so its entry is never read; testing each
    # edge is right for any value anyway.
    gaps = [unknown if sample is None else answer(sample) for sample in samples]
    if steps is _NUMBER_STEPS:
        _add_whole_numbers(points, constants, gaps)
    return Kind(points=points, other=(), bounds=constants, gaps=gaps)


def _add_whole_numbers(points: dict[Any, Candidates], bounds: list[Any], gaps: list[Any]) -> None:
    """Every int from the lowest bound to the highest as a key too (when there are few): a
    score, an age or a count is then answered by the dict alone, as a jump table would."""
    low, high = math.ceil(bounds[0]), math.floor(bounds[-1])
    if high - low <= _WHOLE_NUMBERS_UP_TO:
        for number in range(low, high + 1):
            points.setdefault(number, gaps[bisect_left(bounds, number)])


def _needle_group(path: tuple[PathKey, ...], found: list[tuple[int, str, Predicate]]) -> Group:
    """``'a' in tags``, ``'b' in tags``, ...: one pass over a list, or a key test per text."""
    get, arg = path_getter(path)
    first: dict[str, int] = {}
    for index, text, _ in found:
        first.setdefault(text, index)
    hits = {index: ((index, None),) for index in first.values()}
    ordered = tuple((text, hits[index]) for text, index in first.items())
    unknown = tuple((index, whole) for index, _, whole in found)
    longest = _SCAN_FACTOR * len(first)
    nothing: Candidates = ()

    def lookup(state: State) -> Candidates:
        haystack = get(state, arg)
        kind = haystack.__class__
        if kind is list or kind is tuple:
            if len(haystack) > longest:
                return unknown
            best = None
            for item in haystack:
                if item.__class__ is str:
                    index = first.get(item)
                    if index is not None and (best is None or index < best):
                        best = index
                elif isinstance(item, str):
                    return unknown  # a str subclass: equal by its text, not its hash
            return nothing if best is None else hits[best]
        if kind is dict:
            for text, hit in ordered:
                if text in haystack:
                    return hit
            return nothing
        return nothing if haystack is None else unknown

    return Group(
        first=found[0][0], size=len(found), lookup=lookup, sparse_key=_top_key(path), settle=None
    )


# Choosers over a table.


def first_match(
    table: DecisionTable,
    answers: Sequence[object],
    *,
    prepare: Callable[[Any], State],
    recover: Callable[[State], object],
) -> Callable[[Any], object]:
    """``answers[i]`` for the first test ``i`` that holds, ``answers[count]`` when none does.

    ``prepare`` turns a state that is not a dict into one; ``recover`` answers, test by test,
    for a state holding a value the table has no answer for or an object that raised."""
    answers = tuple(answers)
    groups = table.groups
    if not table.others and len(groups) == 1 and groups[0].settle is not None:
        return groups[0].settle(answers, (prepare, recover))
    if not table.others and len(groups) == 1:
        return _one_group(groups[0].lookup, answers, prepare, recover)
    decide = _decider(table, answers)

    def choose(state: Any) -> object:
        if state.__class__ is not dict:
            state = prepare(state)
        try:
            return decide(state)
        except Exception:  # a foreign object in the state misbehaved: go carefully
            return recover(state)

    return choose


def _one_group(
    lookup: Lookup,
    answers: tuple[object, ...],
    prepare: Callable[[Any], State],
    recover: Callable[[State], object],
) -> Callable[[Any], object]:
    missing = answers[-1]

    def choose(state: Any) -> object:
        if state.__class__ is not dict:
            state = prepare(state)
        try:
            for index, rest in lookup(state):
                if rest is None or rest(state):
                    return answers[index]
        except Exception:  # a foreign object in the state misbehaved: go carefully
            return recover(state)
        return missing

    return choose


_Walked = tuple[int, str | None, dict[str, int], int, Lookup]


def _walked(group: Group, count: int) -> _Walked:
    """``(first, key, index by text, index for other texts, lookup)``; key None: no texts."""
    if group.texts is None:
        return group.first, None, {}, count, group.lookup
    key, points, other = group.texts
    indexes = {text: found[0][0] if found else count for text, found in points.items()}
    return group.first, key, indexes, other[0][0] if other else count, group.lookup


def _decider(table: DecisionTable, answers: tuple[object, ...]) -> Callable[[State], object]:
    """Each group asked only while it could still beat the best test found so far; with a
    state of fewer keys than the groups that need theirs, only those of its keys."""
    others, count = table.others, table.count
    keys = Counter(group.sparse_key for group in table.groups)
    by_key = {
        group.sparse_key: (group.first, group.lookup)
        for group in table.groups
        if group.sparse_key is not None and keys[group.sparse_key] == 1
    }
    every = tuple(_walked(group, count) for group in table.groups)
    dense = tuple(_walked(g, count) for g in table.groups if g.sparse_key not in by_key)
    few, get = (len(by_key) if len(by_key) >= SPARSE_FROM else 0), dict.get

    def decide(state: State) -> object:
        best, walk = count, every
        if len(state) < few:
            walk = dense
            for present in state:
                sparse = by_key.get(present)
                if sparse is not None and sparse[0] < best:
                    best = _best_of(sparse[1], state, best)
        for first, key, indexes, other, lookup in walk:
            if first >= best:
                break
            if key is not None:
                value = get(state, key)
                if value.__class__ is str:  # the common case, looked up here: no call
                    found = indexes.get(value, other)
                    if found < best:  # noqa: PLR1730 - min() would cost a call per key
                        best = found
                    continue
            for index, rest in lookup(state):
                if index >= best:
                    break
                if rest is None or rest(state):
                    best = index
                    break
        for index, test in others:
            if index >= best:
                break
            if test(state):
                return answers[index]
        return answers[best]

    return decide


def _best_of(lookup: Lookup, state: State, best: int) -> int:
    """The lower of ``best`` and the index of the first of the group's tests that holds."""
    for index, rest in lookup(state):
        if index >= best:
            break
        if rest is None or rest(state):
            return index
    return best


def any_match(table: DecisionTable) -> Predicate:
    """Whether any test holds (an ``or`` chain): the first hit anywhere decides."""
    lookups = tuple(group.lookup for group in table.groups)
    others = tuple(test for _, test in table.others)
    if not others and len(lookups) == 1 and table.groups[0].settle is not None:
        # An or of tests of one path: the path's value decides, most often with no test.
        settled = table.groups[0].settle([True] * table.count + [False], None)
        (slow,) = lookups

        def test_one_path(state: State) -> bool:
            found = settled(state)
            if found is UNSETTLED:
                return any(rest is None or rest(state) for _, rest in slow(state))
            return found  # type: ignore[return-value]

        return test_one_path

    def test(state: State) -> bool:
        for lookup in lookups:
            for _, rest in lookup(state):
                if rest is None or rest(state):
                    return True
        for other in others:  # noqa: SIM110
            if other(state):
                return True
        return False

    return test
