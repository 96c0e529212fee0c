"""Candidate tests on the journaled context, each with the rows it holds on as a bitset.

A test is one atom of the condition language (``tier == 'gold'``, ``amount >= 100``,
``'vip' in tags``, ``region == null``). Rows are decisions; a bitset is a Python int whose bit
``i`` is set when the test holds on row ``i``, so counting a conjunction over 100,000 rows is
one ``&`` and one ``bit_count``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from swarmkit.redaction import REDACTED

MAX_DEPTH = 4
"""How deep into nested objects paths are followed."""
MAX_CATEGORIES = 64
"""A path with more distinct text values than this is an identifier or free text: left out."""
MAX_CUTS = 15
"""How many thresholds a numeric path is tried at (quantiles of its values)."""
MAX_ELEMENTS = 32
"""How many distinct list elements a list path is tried with."""

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


@dataclass(frozen=True, kw_only=True, slots=True)
class Columns:
    """The context paths of a set of rows, and what was left out and why."""

    values: Mapping[str, list[Any]]
    """Path -> the value at that path per row (``None`` when missing)."""
    left_out: Mapping[str, str]
    """Path -> why it is never used in a condition (redacted, secret key, not a name)."""


def columns(
    states: Sequence[Mapping[str, Any]], *, is_secret: Callable[[str], bool], skip: str
) -> Columns:
    """The leaf paths of every state (``skip`` is the loop's reserved key), one column each."""
    values: dict[str, list[Any]] = {}
    left_out: dict[str, str] = {}
    count = len(states)
    for row, state in enumerate(states):
        for path, value in _leaves(state, "", 0, skip, is_secret, left_out):
            column = values.get(path)
            if column is None:
                column = values[path] = [None] * count
            column[row] = value
    for path in list(values):
        if path in left_out:
            del values[path]
    return Columns(values=values, left_out=left_out)


def _leaves(
    state: Mapping[str, Any],
    prefix: str,
    depth: int,
    skip: str,
    is_secret: Callable[[str], bool],
    left_out: dict[str, str],
) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for key, value in state.items():
        if not prefix and key == skip:
            continue
        path = f"{prefix}{key}"
        if not isinstance(key, str) or not _NAME.match(key) or key in _LANGUAGE_WORDS:
            left_out.setdefault(path, "its key is not a plain name a condition can spell")
            continue
        if is_secret(key):
            left_out.setdefault(path, "its key is secret (redacted in the journal)")
            continue
        if value == REDACTED:
            left_out.setdefault(path, "its value is redacted in the journal")
            continue
        if isinstance(value, Mapping):
            if depth + 1 < MAX_DEPTH:
                found.extend(_leaves(value, path + ".", depth + 1, skip, is_secret, left_out))
            continue
        found.append((path, value))
    return found


def tests_of(cols: Columns, count: int) -> list[Test]:
    """Every candidate atom of every column, in a fixed order (path, then kind, then value)."""
    tests: list[Test] = []
    for path in sorted(cols.values):
        tests.extend(_column_tests(path, cols.values[path], count))
    return tests


def _column_tests(path: str, column: list[Any], count: int) -> list[Test]:
    by_value: dict[str, list[int]] = {}
    numbers: list[tuple[float, int]] = []
    elements: dict[str, list[int]] = {}
    nulls: list[int] = []
    for row, value in enumerate(column):
        if value is None:
            nulls.append(row)
        elif isinstance(value, bool) or isinstance(value, str):
            by_value.setdefault(literal(value), []).append(row)
        elif isinstance(value, int | float):
            numbers.append((float(value), row))
        elif isinstance(value, list):
            for element in _elements(value):
                elements.setdefault(element, []).append(row)
    tests: list[Test] = []
    if 0 < len(nulls) < count:
        null_bits = bitset(nulls)
        tests.append(Test(text=f"{path} == null", path=path, bits=null_bits))
        tests.append(Test(text=f"{path} != null", path=path, bits=((1 << count) - 1) & ~null_bits))
    if len(by_value) <= MAX_CATEGORIES:
        for text in sorted(by_value):
            tests.append(Test(text=f"{path} == {text}", path=path, bits=bitset(by_value[text])))
    tests.extend(_numeric_tests(path, numbers))
    ranked = sorted(elements, key=lambda e: (-len(elements[e]), e))[:MAX_ELEMENTS]
    for element in sorted(ranked):
        tests.append(Test(text=f"{element} in {path}", path=path, bits=bitset(elements[element])))
    return tests


def _numeric_tests(path: str, numbers: list[tuple[float, int]]) -> list[Test]:
    if not numbers:
        return []
    numbers.sort()
    distinct = sorted({number for number, _ in numbers})
    if len(distinct) < 2:
        return []
    cuts = _cuts(distinct, [number for number, _ in numbers])
    tests: list[Test] = []
    at = 0
    below: list[int] = []
    total = bitset(row for _, row in numbers)
    for cut in cuts:
        while at < len(numbers) and numbers[at][0] < cut:
            below.append(numbers[at][1])
            at += 1
        below_bits = bitset(below)
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
    indices = list(rows)
    if not indices:
        return 0
    buffer = bytearray(max(indices) // 8 + 1)
    for row in indices:
        buffer[row >> 3] |= 1 << (row & 7)
    return int.from_bytes(buffer, "little")


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


def _elements(value: list[Any]) -> set[str]:
    return {literal(e) for e in value if isinstance(e, str | int) and not isinstance(e, bool)}
