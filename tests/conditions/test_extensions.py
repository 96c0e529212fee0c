"""Seed 004's richer syntax: `not in`, list literals, indexing and total arithmetic."""

from __future__ import annotations

from typing import Any

import pytest

from swarmkit.conditions import compile_condition


def _holds(expression: str, state: Any = None) -> bool:
    return compile_condition(expression)(state)


NOT_IN = [
    ("x not in y", {"x": 1, "y": [2]}, True),
    ("x not in y", {"x": 1, "y": [1.0]}, False),
    ("'a' not in x", {"x": "bcd"}, True),
    ("'b' not in x", {"x": "bcd"}, False),
    ("x not in y", {"x": 1, "y": 5}, True),
    ("x not in y", {}, True),
    ("'k' not in d", {"d": {"k": None}}, False),
    ("x not  in y", {"x": 1, "y": [1]}, False),
]
LISTS = [
    ("x in ['A', 'B']", {"x": "A"}, True),
    ("x in ['A', 'B']", {"x": "C"}, False),
    ("x in ['A', 'B']", {"x": ["A"]}, False),
    ("x not in ['A', 'B']", {"x": "C"}, True),
    ("x in [1, 2.5, null]", {"x": 2.5}, True),
    ("x in [1, 2.5, null]", {}, True),
    ("x in [1, 2]", {"x": 2.0}, True),
    ("x in [1, 2]", {"x": True}, False),
    ("x in [y, z]", {"x": 1, "y": 2, "z": 1}, True),
    ("x in [y, z]", {"x": 3, "y": 2, "z": 1}, False),
    ("x == [1, 'a']", {"x": [1, "a"]}, True),
    ("x == [1, 'a']", {"x": (1, "a")}, True),
    ("x == [1, 'a',]", {"x": [1, "a"]}, True),
    ("x == []", {"x": []}, True),
    ("x == [[1], []]", {"x": [[1], []]}, True),
    ("[x, 1] == [2, 1]", {"x": 2}, True),
    ("[]", {}, False),
    ("[0]", {}, True),
    ("'a' in ['a', 'b'][0]", {}, True),
]
INDEXING = [
    ('output["key"] == 1', {"output": {"key": 1}}, True),
    ("output['a key'] == 1", {"output": {"a key": 1}}, True),
    ("output['a.b'] == 1", {"output": {"a.b": 1, "a": {"b": 2}}}, True),
    ("items[0] == 'a'", {"items": ["a", "b"]}, True),
    ("items[-1] == 'b'", {"items": ["a", "b"]}, True),
    ("items[-3] == null", {"items": ["a", "b"]}, True),
    ("items[5] == null", {"items": ["a", "b"]}, True),
    ("items[0] == 'a'", {"items": ("a",)}, True),
    ("items['a'] == null", {"items": [1]}, True),
    ("items[0] == null", {"items": {"a": 1}}, True),
    ("items[0].name == 'x'", {"items": [{"name": "x"}]}, True),
    ("items[0][1] == 2", {"items": [[1, 2]]}, True),
    ("name[0] == 'a'", {"name": "abc"}, True),
    ("m[0] == 'z'", {"m": {0: "z"}}, True),
    ("d[k] == 1", {"d": {"x": 1}, "k": "x"}, True),
    ("d[k] == 1", {"d": {"x": 1}, "k": "y"}, False),
    ("d[k] == null", {"d": {1: "a"}, "k": True}, True),
    ("d[k] == null", {"d": {"x": 1}, "k": [1]}, True),
    ("items[i] == 'b'", {"items": ["a", "b"], "i": 1}, True),
    ("items[i + 1] == 'b'", {"items": ["a", "b"], "i": 0}, True),
    ("items[1.0] == null", {"items": ["a", "b"]}, True),
    ("(x)[0] == 1", {"x": [1]}, True),
    ("(x or y)[0] == null", {"x": [1]}, True),
    ("x[0] == null", {"x": 5}, True),
    ("x[1 / 0] == null", {"x": [1]}, False),
    ("x[0] != null", {"x": [None]}, False),
]
ARITHMETIC = [
    ("x + 1 == 3", {"x": 2}, True),
    ("x - 1 == 1", {"x": 2}, True),
    ("x-1 == 1", {"x": 2}, True),
    ("x -1 == 1", {"x": 2}, True),
    ("x * 2 == 6", {"x": 3}, True),
    ("x / 2 == 1.5", {"x": 3}, True),
    ("x / 2 == 1", {"x": 2}, True),
    ("7 / 2 == 3.5", {}, True),
    ("x % 3 == 1", {"x": 7}, True),
    ("-7 % 3 == 2", {}, True),
    ("7 % -3 == -2", {}, True),
    ("5.5 % 2 == 1.5", {}, True),
    ("x + y == 3", {"x": 1, "y": 2.0}, True),
    ("1 + 2 * 3 == 7", {}, True),
    ("(1 + 2) * 3 == 9", {}, True),
    ("10 - 2 - 3 == 5", {}, True),
    ("8 / 2 / 2 == 2", {}, True),
    ("-x == -2", {"x": 2}, True),
    ("- x == -2", {"x": 2}, True),
    ("- 1 == -1", {}, True),
    ("2 - -1 == 3", {}, True),
    ("--1 == 1", {}, True),
    ("-(x + 1) == -3", {"x": 2}, True),
    ("x + 1 > 2", {"x": 1.5}, True),
    ("'a' + 'b' == 'ab'", {}, True),
    ("x + '!' == 'hi!'", {"x": "hi"}, True),
    ("x + 1", {"x": -1}, False),
    ("x + 1", {"x": 0}, True),
    # Undefined results: every comparison with them is false, `!=` included.
    ("x / 0 == 1", {"x": 1}, False),
    ("x / 0 != 1", {"x": 1}, False),
    ("x % 0 == 0", {"x": 1}, False),
    ("(x / 0) == null", {"x": 1}, False),
    ("x / 0 in [null]", {"x": 1}, False),
    ("x / 0 not in [1]", {"x": 1}, False),
    ("x / 0 < 1", {"x": 1}, False),
    ("not (x / 0 == 1)", {"x": 1}, True),
    ("1 / 0", {}, False),
    ("not (1 / 0)", {}, True),
    ("x + 1 == 2", {"x": "1"}, False),
    ("x + 1 != 2", {"x": "1"}, False),
    ("x + 1 == 2", {"x": True}, False),
    ("x + 1 == 2", {"x": None}, False),
    ("x + 1 == 2", {}, False),
    ("-x == -1", {"x": True}, False),
    ("-x == null", {"x": "a"}, False),
    ("'a' * 3 == 'aaa'", {}, False),
    ("x + y == [1, 2]", {"x": [1], "y": [2]}, False),
    ("x * x > 0", {"x": 2**40}, False),
    ("x * 2 > 0", {"x": 2**63 - 1}, True),
    ("x + 1 > 0", {"x": 2**64 - 1}, False),
    ("x - 1 < 0", {"x": -(2**63)}, False),
    ("x * 10.0 > 0", {"x": 1e308}, False),
    ("x / y > 0", {"x": 10**400, "y": 3}, False),
    ("x + 1 > 0", {"x": float("inf")}, True),
    ("x - x == x - x", {"x": float("inf")}, False),
]


@pytest.mark.parametrize(("expression", "state", "expected"), NOT_IN)
def test_not_in_is_the_negation_of_in(
    expression: str, state: dict[str, Any], expected: bool
) -> None:
    """`x not in y` is `not (x in y)`."""
    assert _holds(expression, state) is expected


@pytest.mark.parametrize(("expression", "state", "expected"), LISTS)
def test_list_literals(expression: str, state: dict[str, Any], expected: bool) -> None:
    """List literals are haystacks and values; their elements may be any expression."""
    assert _holds(expression, state) is expected


@pytest.mark.parametrize(("expression", "state", "expected"), INDEXING)
def test_indexing(expression: str, state: dict[str, Any], expected: bool) -> None:
    """`[key]` reads mappings by key and sequences by position; a wrong one reads null."""
    assert _holds(expression, state) is expected


@pytest.mark.parametrize(("expression", "state", "expected"), ARITHMETIC)
def test_arithmetic_is_total(expression: str, state: dict[str, Any], expected: bool) -> None:
    """Arithmetic never raises: a failure makes every comparison with the result false."""
    assert _holds(expression, state) is expected


def test_constant_indexes_extend_the_path() -> None:
    """A constant index is part of the path the condition reports it reads."""
    condition = compile_condition("x.a[0]['b c'].d == 1 and items[i] and x.a[0]['b c'].d")
    assert condition.paths == ("x.a[0]['b c'].d", "items", "i")
