"""Learned rules judged from the learner's columns: where each holds, no context parsed again.

The learner reads each row's context (at its last point) once, into columns: a path's rows
bucketed by their text, flag or number. A learned rule is a conjunction of atoms that each
read one path, and an atom gives the same answer on every row holding one value there. So each
atom is tested once per distinct value, by the condition language itself, and where it holds is
read off the buckets. A row whose value at an atom's path is anything else (null, missing, a
list, an object), or whose points do not all share the last one's context and message words,
is left for ``Holds`` to judge as before: its context parsed, the graph routed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import chain, compress
from typing import Any

from swarmkit.conditions import compile_condition
from swarmkit.exceptions import ConditionSyntaxError
from swarmkit.rules._features import WORDS_PATH, Column, Test, bitset
from swarmkit.rules._rows import Row, Spot, words_of

Spell = Callable[[Mapping[str, Any], str], str]
"""How a row's value at a path is spelt as ``path == value`` (given a state and the path)."""


class Judged:
    """Where each of a source's learned rules holds, for the rows the columns settle."""

    __slots__ = ("_holding", "_marks", "equalities", "first")

    def __init__(
        self, holding: list[int], first: list[int | None], equalities: list[list[str | None]]
    ) -> None:
        self._holding = holding
        self._marks: list[str] | None = None
        self.first = first
        """Per row: the index of the first rule that holds (their count when none does), the
        same at each of its points; None for a row left to be judged point by point."""
        self.equalities = equalities
        """Per asked path, per row: ``path == value`` spelt, or None when the columns cannot."""

    def holding_at(self, row: int) -> int:
        """The bits of the rules that hold on a settled row."""
        marks = self._marks
        if marks is None:
            count = max(len(self.first), 1)
            marks = self._marks = [format(bits, f"0{count}b")[::-1] for bits in self._holding]
        holding = 0
        for index, rows in enumerate(marks):
            if rows[row] == "1":
                holding |= 1 << index
        return holding


def judge_columns(
    rules: Sequence[Sequence[Test]],
    columns: Mapping[str, Column],
    rows: Sequence[Row],
    *,
    equal: Sequence[str],
    spell: Spell,
) -> Judged | None:
    """Where each rule (its atoms) holds on ``rows``, from ``columns``; None when an atom
    reads anything but its own path (then every row is judged point by point)."""
    count = len(rows)
    everything = (1 << count) - 1
    words = any(test.path == WORDS_PATH for atoms in rules for test in atoms)
    unsettled = _unsettled(rows, words=words)
    found: dict[str, tuple[int, int] | None] = {}
    holding: list[int] = []
    for atoms in rules:
        bits = everything
        for test in atoms:
            if test.text not in found:
                found[test.text] = _atom(test, columns, everything)
            atom = found[test.text]
            if atom is None:
                return None
            bits &= atom[0]
            unsettled |= atom[1]
        holding.append(bits)
    first = _firsts(holding, everything & ~unsettled, count)
    spelt = [_spelt(path, columns.get(path), count, spell) for path in equal]
    return Judged(holding, first, spelt)


def _unsettled(rows: Sequence[Row], *, words: bool) -> int:
    """The rows whose points do not all see the last point's context (and words): a tool
    changed it, so the last point's columns do not speak for the others."""
    mixed: list[int] = []
    for index, row in enumerate(rows):
        points = row.points
        last = points[-1]
        said = words_of(last) if words else None
        if said is not None and said.__class__ is not tuple and said.__class__ is not list:
            mixed.append(index)  # words the learner's bits may not read as the language does
        elif len(points) > 1 and any(
            point.context is not last.context or (words and _other_words(point, said))
            for point in points
        ):
            mixed.append(index)
    return bitset(mixed)


def _other_words(point: Spot, said: Any) -> bool:
    found = words_of(point)
    return found is not said and bool(found != said)


def _atom(test: Test, columns: Mapping[str, Column], everything: int) -> tuple[int, int] | None:
    """(rows where the atom holds, rows the columns cannot settle), or None when it reads
    anything but its own path."""
    try:
        condition = compile_condition(test.text)
    except ConditionSyntaxError:
        return None
    if condition.paths != (test.path,):
        return None
    if test.path == WORDS_PATH:
        # The learner's own bits: membership in each row's tuple of words (or none).
        return test.bits, 0
    column = columns.get(test.path)
    if column is None:
        return None
    path = test.path
    holds: list[int] = []
    settled: list[int] = []
    for value, rows in chain(column.texts.items(), column.flags.items()):
        settled.extend(rows)
        if condition(_nested(path, value)):
            holds.extend(rows)
    if column.numbers:
        # The language compares numbers by value: 1 and 1.0 are one number to it.
        verdicts = {value: condition(_nested(path, value)) for value in set(column.numbers)}
        holding = map(verdicts.__getitem__, column.numbers)
        holds.extend(compress(column.number_rows, holding))
        settled.extend(column.number_rows)
    return bitset(holds), everything & ~bitset(settled)


def _firsts(holding: Sequence[int], settled: int, count: int) -> list[int | None]:
    """Per row: the first rule that holds (``len(holding)`` when none), None if unsettled."""
    first: list[int | None] = [None] * count
    for row in _indices(settled, count):
        first[row] = len(holding)
    left = settled
    for index, bits in enumerate(holding):
        hit = bits & left
        if hit:
            left ^= hit
            for row in _indices(hit, count):
                first[row] = index
    return first


def _spelt(path: str, column: Column | None, count: int, spell: Spell) -> list[str | None]:
    """Each row's ``path == value`` as ``spell`` writes it, None where the columns hold no
    text, flag or number for the row."""
    spelt: list[str | None] = [None] * count
    if column is None:
        return spelt
    for value, rows in chain(column.texts.items(), column.flags.items()):
        text = spell(_nested(path, value), path)
        for row in rows:
            spelt[row] = text
    # 1 and 1.0 are one number but two spellings: whole numbers and decimals apart.
    by_kind: dict[type, dict[Any, str]] = {int: {}, float: {}}
    for value, row in zip(column.numbers, column.number_rows, strict=True):
        known = by_kind[value.__class__]
        found = known.get(value)
        if found is None:
            found = known[value] = spell(_nested(path, value), path)
        spelt[row] = found
    return spelt


def _nested(path: str, value: Any) -> dict[str, Any]:
    """The smallest state holding ``value`` at ``path``."""
    state: dict[str, Any] = {}
    inner = state
    *outer, last = path.split(".")
    for key in outer:
        inner[key] = {}
        inner = inner[key]
    inner[last] = value
    return state


def _indices(bits: int, count: int) -> list[int]:
    """The rows set in ``bits``."""
    if not bits:
        return []
    marks = format(bits, f"0{count}b")[::-1].encode().translate(_FLAGS)
    return list(compress(range(count), marks))


_FLAGS = bytes.maketrans(b"01", b"\x00\x01")
