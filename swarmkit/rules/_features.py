"""Candidate tests on the journaled context, each with the rows it holds on as a bitset.

A test is one atom of the condition language (``tier == 'gold'``, ``amount >= 100``,
``'vip' in tags``, ``region == null``). Rows are decisions; a bitset is a Python int whose bit
``i`` is set when the test holds on row ``i``, so counting a conjunction over 100,000 rows is
one ``&`` and one ``bit_count``.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain, islice
from typing import Any

from swarmkit.redaction import REDACTED

MAX_SHAPES = 1024
"""How many distinct lists of keys the reader keeps the slots of."""
MAX_DEPTH = 4
"""How deep into nested objects paths are followed."""
MAX_CATEGORIES = 64
"""A path with more distinct text values than this is an identifier or free text: left out."""
MAX_CUTS = 15
"""How many thresholds a numeric path is tried at (quantiles of its values)."""
MAX_ELEMENTS = 32
"""How many distinct list elements a list path is tried with."""
_BATCH = 256
"""How many contexts are read a column at a time (held unpacked together)."""

_ESCAPES = str.maketrans({"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LANGUAGE_WORDS = frozenset(
    {"and", "or", "not", "in", "true", "false", "null", "none", "True", "False", "None"}
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Test:
    """One condition atom and the rows it holds on."""

    text: str
    """The atom in the condition language."""
    path: str
    """The context path it reads."""
    bits: int
    """Bit ``i`` set when the atom holds on row ``i``."""


class Column:
    """The rows of one path, bucketed by value as they are read."""

    __slots__ = ("elements", "flags", "number_rows", "numbers", "texts")

    def __init__(self) -> None:
        self.texts: defaultdict[str, list[int]] = defaultdict(list)
        self.flags: defaultdict[bool, list[int]] = defaultdict(list)
        # Two flat lists, not (value, row) pairs: a tuple a row costs 64 bytes.
        self.numbers: list[float] = []
        self.number_rows: list[int] = []
        self.elements: dict[Any, list[int]] = {}


@dataclass(frozen=True, kw_only=True, slots=True)
class Candidates:
    """Every candidate atom of a set of rows, and the paths left out and why."""

    tests: list[Test]
    """The atoms, in a fixed order (path, then kind, then value)."""
    left_out: Mapping[str, str]
    """Path -> why it is never used in a condition (redacted, secret key, not a name)."""
    columns: Mapping[str, Column]
    """Path -> its rows bucketed by value (what judging reads instead of each context)."""


def candidates(
    contexts: Iterable[Mapping[str, Any]], *, is_secret: Callable[[str], bool], skip: str
) -> Candidates:
    """The candidate atoms on the leaf paths of every context (``skip`` is never a path); the
    contexts are read once, in order (so they may be unpacked one at a time)."""
    reader = _Reader(is_secret, skip)
    count = 0
    ahead = iter(contexts)
    while batch := list(islice(ahead, _BATCH)):
        reader.read_many(batch, range(count, count + len(batch)), "", 0)
        count += len(batch)
    tests: list[Test] = []
    for path in sorted(reader.columns):
        if path not in reader.left_out:
            tests.extend(_column_tests(path, reader.columns[path], count))
    return Candidates(
        tests=tests, left_out=dict(sorted(reader.left_out.items())), columns=reader.columns
    )


class _Reader:
    """Walks contexts once, putting each leaf's row in its path's bucket."""

    def __init__(self, is_secret: Callable[[str], bool], skip: str) -> None:
        self.columns: dict[str, Column] = {}
        self.left_out: dict[str, str] = {}
        # prefix -> key -> its path's column, or None for a key never used: each key's
        # verdict and path are worked out once, not once a row.
        self._slots: dict[str, dict[Any, tuple[str, Column] | None]] = {}
        self._shapes: dict[tuple[Any, ...], list[tuple[str, Column] | None]] = {}
        self._ints: dict[int, int] = {}
        self._is_secret = is_secret
        self._skip = skip

    def read_many(
        self, contexts: Sequence[Mapping[str, Any]], rows: Sequence[int], prefix: str, depth: int
    ) -> None:
        """Read a batch of contexts a column at a time: those listing the same keys in the same
        order are grouped, and each key's values (one tuple, built at C speed) are put in
        their buckets by kind, the values of one kind in one step."""
        shapes: dict[tuple[Any, ...], tuple[list[Mapping[str, Any]], list[int]]] = {}
        for context, row in zip(contexts, rows, strict=True):
            shape = (prefix, *context)
            found = shapes.get(shape)
            if found is None:
                shapes[shape] = ([context], [row])
            else:
                found[0].append(context)
                found[1].append(row)
        for shape, (group, group_rows) in shapes.items():
            slots = self._shape_slots(shape, group[0], prefix)
            columns = zip(*(context.values() for context in group), strict=True)
            for slot, values in zip(slots, columns, strict=True):
                if slot is not None:
                    self._column(slot, values, group_rows, depth)

    def read(self, context: Mapping[str, Any], prefix: str, depth: int, row: int) -> None:
        """Read one context (one nested in a column of values of mixed kinds)."""
        slots = self._shape_slots((prefix, *context), context, prefix)
        for slot, value in zip(slots, context.values(), strict=True):
            if slot is not None:
                self._value(slot, value, row, depth)

    def _shape_slots(
        self, shape: tuple[Any, ...], context: Mapping[str, Any], prefix: str
    ) -> list[tuple[str, Column] | None]:
        # Most contexts list the same keys in the same order: their slots are looked up once
        # for that list of keys.
        slots = self._shapes.get(shape)
        if slots is None:
            slots = self._slots_of(context, prefix)
            if len(self._shapes) < MAX_SHAPES:
                self._shapes[shape] = slots
        return slots

    def _column(
        self, slot: tuple[str, Column], values: tuple[Any, ...], rows: list[int], depth: int
    ) -> None:
        """One key's values on ``rows``: a column of one common kind in one step, any other
        value by value (as ``read`` takes them)."""
        path, column = slot
        kinds = set(map(type, values))
        kind = kinds.pop() if len(kinds) == 1 else None
        if kind is int:
            # One object for each whole number: each row's context was unpacked anew.
            column.numbers.extend(map(self._ints.setdefault, values, values))
            column.number_rows.extend(rows)
        elif kind is float:
            column.numbers.extend(values)
            column.number_rows.extend(rows)
        elif kind is str and REDACTED not in values:
            _bucket(column.texts, values, rows)
        elif kind is bool:
            _bucket(column.flags, values, rows)
        elif kind is dict:
            if depth + 1 < MAX_DEPTH:
                self.read_many(values, rows, path + ".", depth + 1)
        else:
            for value, row in zip(values, rows, strict=True):
                self._value(slot, value, row, depth)

    def _value(self, slot: tuple[str, Column], value: Any, row: int, depth: int) -> None:
        path, column = slot
        kind = value.__class__
        if kind is str:
            if value == REDACTED:
                self.left_out.setdefault(path, "its value is redacted in the journal")
                return
            column.texts[value].append(row)
        elif kind is int:
            column.numbers.append(self._ints.setdefault(value, value))
            column.number_rows.append(row)
        elif kind is float:
            column.numbers.append(value)
            column.number_rows.append(row)
        elif kind is bool:
            column.flags[value].append(row)
        elif kind is list:
            _add_elements(column.elements, value, row)
        elif isinstance(value, Mapping) and depth + 1 < MAX_DEPTH:
            self.read(value, path + ".", depth + 1, row)

    def _slots_of(self, context: Mapping[str, Any], prefix: str) -> list[tuple[str, Column] | None]:
        """The slot of each of the context's keys, in order."""
        slots = self._slots.get(prefix)
        if slots is None:
            slots = self._slots[prefix] = {}
        found: list[tuple[str, Column] | None] = []
        for key in context:
            try:
                slot = slots[key]
            except KeyError:
                slot = slots[key] = self._slot(key, prefix)
            except TypeError:  # an unhashable key no JSON object has
                slot = None
            found.append(slot)
        return found

    def _slot(self, key: Any, prefix: str) -> tuple[str, Column] | None:
        """Where a key's values go, or None (and why, in ``left_out``) when it is never used."""
        why = _key_problem(key, prefix, self._skip, self._is_secret)
        if why is not None:
            if why:
                self.left_out.setdefault(prefix + str(key), why)
            return None
        path = prefix + key
        column = self.columns.get(path)
        if column is None:
            column = self.columns[path] = Column()
        return path, column


def _bucket(buckets: defaultdict[Any, list[int]], values: tuple[Any, ...], rows: list[int]) -> None:
    """Add each row to its value's bucket: the buckets' lists found and appended to by
    ``map``, drained at C speed (no Python step a value)."""
    _drain(map(list.append, map(buckets.__getitem__, values), rows))


_drain: Callable[[Iterable[Any]], None] = deque(maxlen=0).extend


def _key_problem(
    key: object, prefix: str, skip: str, is_secret: Callable[[str], bool]
) -> str | None:
    """Why a key is never used ("" to skip it silently), or None when it may be."""
    if not prefix and key == skip:
        return ""
    if not isinstance(key, str) or not _NAME.match(key) or key in _LANGUAGE_WORDS:
        return "its key is not a plain name a condition can spell"
    if is_secret(key):
        return "its key is secret (redacted in the journal)"
    return None


def _column_tests(path: str, column: Column, count: int) -> list[Test]:
    by_value = {literal(value): rows for value, rows in column.texts.items()}
    by_value.update((literal(flag), rows) for flag, rows in column.flags.items())
    value_bits = {text: bitset(rows) for text, rows in by_value.items()}
    present = 0
    for bits in value_bits.values():
        present |= bits
    numeric = bitset(column.number_rows)
    present |= numeric
    element_bits = {literal(element): bitset(rows) for element, rows in column.elements.items()}
    for bits in element_bits.values():
        present |= bits
    tests: list[Test] = []
    everything = (1 << count) - 1
    # Rows holding a nested object, or a list with no usable element, count as null here: no
    # atom tests their value. (The language says such a value is not null; the held-out
    # check judges these atoms as the language does.)
    if 0 < present.bit_count() < count:
        null_bits = everything & ~present
        tests.append(Test(text=f"{path} == null", path=path, bits=null_bits))
        tests.append(Test(text=f"{path} != null", path=path, bits=present))
    if len(value_bits) <= MAX_CATEGORIES:
        for text in sorted(value_bits):
            tests.append(Test(text=f"{path} == {text}", path=path, bits=value_bits[text]))
    tests.extend(_numeric_tests(path, column.numbers, column.number_rows, numeric))
    ranked = sorted(element_bits, key=lambda e: (-element_bits[e].bit_count(), e))[:MAX_ELEMENTS]
    for element in sorted(ranked):
        tests.append(Test(text=f"{element} in {path}", path=path, bits=element_bits[element]))
    return tests


def _numeric_tests(path: str, values: list[float], rows: list[int], total: int) -> list[Test]:
    if not values:
        return []
    ordered = sorted(values)
    first = ordered[0]
    if ordered[-1] == first:
        return []
    cuts = _cuts(sorted(set(ordered)), ordered)
    if _has_nan(values):  # NaN orders with nothing: the rows in sorted order, as ever
        return _sorted_tests(path, values, rows, total, cuts)
    # Each row's byte: how many cuts lie at or below its value (0xff: no number), so the rows
    # below each cut are one translation of the bytes, at C speed.
    marks = bytearray(b"\xff") * (max(rows) + 1)
    _drain(map(marks.__setitem__, rows, map(partial(bisect_right, cuts), values)))
    tests: list[Test] = []
    for index, cut in enumerate(cuts):
        below_bits = int(marks.translate(_BELOW[index])[::-1], 2)
        shown = _number(cut)
        tests.append(Test(text=f"{path} >= {shown}", path=path, bits=total & ~below_bits))
        tests.append(Test(text=f"{path} < {shown}", path=path, bits=below_bits))
    return tests


_BELOW = [bytes(49 if code <= index else 48 for code in range(256)) for index in range(MAX_CUTS)]
"""Per cut: the table marking a row's byte "1" when the cut is above its value."""


def _has_nan(values: list[float]) -> bool:
    if float not in set(map(type, values)):
        return False
    return any(map(math.isnan, [value for value in values if value.__class__ is float]))


def _sorted_tests(
    path: str, values: list[float], rows: list[int], total: int, cuts: list[float]
) -> list[Test]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ordered = [values[i] for i in order]
    tests: list[Test] = []
    at = 0
    below_bits = 0
    for cut in cuts:
        end = bisect_left(ordered, cut, at)  # the first value at or above the cut
        below_bits |= bitset([rows[index] for index in order[at:end]])
        at = end
        shown = _number(cut)
        tests.append(Test(text=f"{path} >= {shown}", path=path, bits=total & ~below_bits))
        tests.append(Test(text=f"{path} < {shown}", path=path, bits=below_bits))
    return tests


def _cuts(distinct: list[float], ordered: list[float]) -> list[float]:
    """Thresholds between values: every distinct value but the first when there are few,
    else values at evenly spaced quantiles of the rows."""
    if len(distinct) - 1 <= MAX_CUTS:
        return distinct[1:]
    picked = {ordered[(len(ordered) * k) // (MAX_CUTS + 1)] for k in range(1, MAX_CUTS + 1)}
    return sorted(value for value in picked if value > distinct[0])


def bitset(rows: Any) -> int:
    """The bitset with the given row indices set."""
    indices = rows if isinstance(rows, list) else list(rows)
    if not indices:
        return 0
    # A byte a row, read as a binary numeral: both steps run at C speed but the marking.
    marks = bytearray(max(indices) + 1)
    for row in indices:
        marks[row] = 1
    return int(marks.translate(_DIGITS)[::-1], 2)


_DIGITS = bytes.maketrans(b"\x00\x01", b"01")


def literal(value: Any) -> str:
    """A JSON scalar as the condition language writes it."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return "'" + value.translate(_ESCAPES) + "'"
    if isinstance(value, float):
        return _number(value)
    return json.dumps(value)


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 2**53:
        return str(int(value))
    shown = repr(value)
    # The language has no exponent: spell small and large decimals out.
    return shown if "e" not in shown else f"{value:.20f}".rstrip("0")


def _add_elements(elements: dict[Any, list[int]], value: list[Any], row: int) -> None:
    """Add ``row`` to the rows of each distinct text or whole-number element of ``value``
    (kept raw: they are spelt as literals once, not once a row)."""
    seen: set[Any] = set()
    for element in value:
        kind = element.__class__
        if (kind is str or kind is int) and element not in seen:
            seen.add(element)
            rows = elements.get(element)
            if rows is None:
                elements[element] = [row]
            else:
                rows.append(row)


WORDS_PATH = "swarm.user_words"
"""Where conditions find the words of the user's latest message."""
MAX_WORDS = 64
"""How many words of the users' messages the learner tries, per source agent."""


def word_tests(
    words: Sequence[Sequence[str] | None],
    labels: Mapping[str | None, Sequence[int]],
    train: Sequence[int],
    *,
    min_support: int,
) -> list[Test]:
    """``'word' in swarm.user_words`` atoms for the words worth trying, in word order.

    ``words`` holds each row's message words (``None``: no text, or redacted text, which is
    never learned from); ``labels`` maps a target (``None``: the model kept the turn) to its
    rows. A word is a candidate when at least ``min_support`` training messages hold it; of
    those, the ``MAX_WORDS`` with the highest FOIL gain toward one target (against that
    target's share of the training rows) are tried. Words in most messages ("the", "please")
    carry no gain and rare words too little support, so neither is ever tried. Words are
    counted before any bitset is built, so the cost is one pass over the training messages
    and one over the messages that hold a chosen word.
    """
    chosen = _gainful_words(words, labels, train, min_support=min_support)
    rows: dict[str, list[int]] = {word: [] for word in chosen}
    for row, held in enumerate(words):
        if held:
            for word in chosen.intersection(held):
                rows[word].append(row)
    return [
        Test(text=f"{literal(word)} in {WORDS_PATH}", path=WORDS_PATH, bits=bitset(rows[word]))
        for word in sorted(chosen)
    ]


def _gainful_words(
    words: Sequence[Sequence[str] | None],
    labels: Mapping[str | None, Sequence[int]],
    train: Sequence[int],
    *,
    min_support: int,
) -> set[str]:
    """The ``MAX_WORDS`` training words of most FOIL gain toward a target (see ``word_tests``)."""
    training = set(train)
    everywhere: Counter[str] = Counter()
    by_target: dict[str, tuple[float, Counter[str]]] = {}
    for target, indices in labels.items():
        rows = [i for i in indices if i in training]
        counts = Counter(chain.from_iterable(words[i] or () for i in rows))
        everywhere.update(counts)
        if target is not None and rows:
            by_target[target] = (math.log(len(rows) / len(training)), counts)
    scored: list[tuple[float, str]] = []
    for word, holding in everywhere.items():
        if holding < min_support:
            continue
        gain = 0.0
        for base, counts in by_target.values():
            positive = counts.get(word, 0)
            if positive:
                gain = max(gain, positive * (math.log(positive / holding) - base))
        if gain > 1e-12:
            scored.append((-gain, word))
    scored.sort()
    return {word for _, word in scored[:MAX_WORDS]}
