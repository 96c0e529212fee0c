"""What conditions mean: every operator against every kind of value, as tables."""

from __future__ import annotations

import enum
import math
from decimal import Decimal
from types import MappingProxyType
from typing import Any

import pytest

from swarmkit.conditions import compile_condition


class _Opaque:
    """An object of a type the language does not know."""


class _Tier(enum.StrEnum):
    GOLD = "gold"


class _Level(enum.IntEnum):
    HIGH = 3


_MISSING: Any = object()

# One representative per kind; equal representatives are chosen to equal each other.
KINDS: dict[str, Any] = {
    "missing": _MISSING,
    "null": None,
    "bool": True,
    "int": 1,
    "float": 1.0,
    "str": "a",
    "list": [1],
    "tuple": (1,),
    "dict": {"a": 1},
    "bytes": b"a",
    "set": {1},
    "decimal": Decimal(1),
    "object": _Opaque(),
}
# Pairs of kinds whose representatives are equal; every other pair is unequal.
EQUAL_KINDS = {
    frozenset(pair)
    for pair in [
        ("missing",),
        ("missing", "null"),
        ("null",),
        ("bool",),
        ("int",),
        ("int", "float"),
        ("float",),
        ("str",),
        ("list",),
        ("list", "tuple"),
        ("tuple",),
        ("dict",),
        ("bytes",),
    ]
}
# Kinds whose representatives are ordered among themselves: numbers, and strings.
ORDER_GROUP = {"int": "number", "float": "number", "str": "str"}
LOW = {"int": 1, "float": 1.5, "str": "a"}
HIGH = {"int": 2, "float": 2.5, "str": "b"}
PAIRS = [(left, right) for left in KINDS for right in KINDS]


def _state(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not _MISSING}


def _holds(expression: str, state: Any) -> bool:
    return compile_condition(expression)(state)


@pytest.mark.parametrize(("left", "right"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_equality_of_every_pair_of_kinds(left: str, right: str) -> None:
    """`==` holds exactly for the equal kinds, and `!=` is always its negation."""
    state = _state(x=KINDS[left], y=KINDS[right])
    expected = frozenset({left, right}) in EQUAL_KINDS
    assert _holds("x == y", state) is expected
    assert _holds("x != y", state) is (not expected)


@pytest.mark.parametrize(("left", "right"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_ordering_of_every_pair_of_kinds(left: str, right: str) -> None:
    """`< <= > >=` hold only between two numbers or two strings."""
    state = _state(x=LOW.get(left, KINDS[left]), y=HIGH.get(right, KINDS[right]))
    group = ORDER_GROUP.get(left)
    ordered = group is not None and group == ORDER_GROUP.get(right)
    assert _holds("x < y", state) is ordered
    assert _holds("x <= y", state) is ordered
    assert _holds("x > y", state) is False
    assert _holds("x >= y", state) is False


SELF_EQUAL = {kind for kind in KINDS if frozenset({kind}) in EQUAL_KINDS}
HASHABLE = {kind for kind, value in KINDS.items() if kind != "missing" and value.__hash__}


def _haystacks(needle: Any) -> dict[str, Any]:
    value = None if needle is _MISSING else needle
    hashable = getattr(value, "__hash__", None) is not None
    return {
        "list": [value],
        "tuple": (value,),
        "set": {value} if hashable else set(),
        "dict": {value: 0} if hashable else {},
        "str": "xa",
        "int": 1,
        "null": None,
        "bytes": b"xa",
        "object": _Opaque(),
    }


IN_PAIRS = [(needle, hay) for needle in KINDS for hay in _haystacks(None)]


@pytest.mark.parametrize(("needle", "hay"), IN_PAIRS, ids=[f"{a}-in-{b}" for a, b in IN_PAIRS])
def test_membership_of_every_kind_in_every_haystack(needle: str, hay: str) -> None:
    """`in` finds elements of lists, tuples and sets, keys of dicts, substrings of strings."""
    value = KINDS[needle]
    haystack = _haystacks(value)[hay]
    if hay in ("list", "tuple"):
        expected = needle in SELF_EQUAL
    elif hay in ("set", "dict"):
        expected = needle in SELF_EQUAL and (needle == "missing" or needle in HASHABLE)
    elif hay == "str":
        expected = needle == "str"
    else:
        expected = False
    state = _state(x=value, y=haystack)
    assert _holds("x in y", state) is expected
    assert _holds("x not in y", state) is (not expected)


TRUTHINESS = [
    (_MISSING, False),
    (None, False),
    (True, True),
    (False, False),
    (0, False),
    (1, True),
    (-1, True),
    (0.0, False),
    (-0.0, False),
    (math.nan, True),
    (math.inf, True),
    ("", False),
    (" ", True),
    ("0", True),
    ("false", True),
    ([], False),
    ([0], True),
    ([None], True),
    ((), False),
    ({}, False),
    ({"a": None}, True),
    (b"", False),
    (b"\x00", True),
    (set(), False),
    ({0}, True),
    (Decimal(0), False),
    (Decimal(1), True),
    (_Opaque(), True),
    (MappingProxyType({}), False),
    (_Level.HIGH, True),
]


@pytest.mark.parametrize(("value", "expected"), TRUTHINESS, ids=repr)
def test_truthiness_of_a_bare_path(value: Any, expected: bool) -> None:
    """A path alone is true when its value is truthy: null, zero and empties are false."""
    assert _holds("x", _state(x=value)) is expected
    assert _holds("not x", _state(x=value)) is (not expected)


CASES: list[tuple[str, dict[str, Any], bool]] = [
    # Numbers compare as doubles across int and float, bool never being a number.
    ("x == 5", {"x": 5.0}, True),
    ("x == 5.0", {"x": 5}, True),
    ("x == 1", {"x": True}, False),
    ("true == 1", {}, False),
    ("x == 0", {"x": False}, False),
    ("x == false", {"x": 0}, False),
    ("x == false", {"x": None}, False),
    ("x != null", {"x": False}, True),
    ("x == y", {"x": 0, "y": None}, False),
    ("x == y", {"x": 0.0, "y": -0.0}, True),
    ("x == x", {"x": math.nan}, False),
    ("x != x", {"x": math.nan}, True),
    ("x < y", {"x": math.nan, "y": 1}, False),
    ("x > 1", {"x": math.inf}, True),
    ("x == 9007199254740993", {"x": 9007199254740992}, True),
    ("x < y", {"x": 9007199254740992, "y": 9007199254740993}, False),
    ("x == y", {"x": 2**64 - 1, "y": 2**64 - 2}, True),
    ("x >= y", {"x": 1, "y": 1.0}, True),
    ("x > y", {"x": True, "y": False}, False),
    ("x == y", {"x": 10**400, "y": 10**401}, False),
    ("x > 1000000.0", {"x": 10**400}, True),
    ("x < 1.5", {"x": -(10**400)}, True),
    # Strings: code point order, no normalisation, no case folding.
    ("x < y", {"x": "B", "y": "a"}, True),
    ("x < y", {"x": "", "y": "a"}, True),
    ("x < y", {"x": "a", "y": "ab"}, True),
    ("x <= 'a'", {"x": "a"}, True),
    ("x < y", {"x": "é", "y": "z"}, False),
    ("x == y", {"x": "é", "y": "e\u0301"}, False),
    ("x == 'a'", {"x": b"a"}, False),
    ("x == y", {"x": b"a", "y": b"a"}, True),
    # Structures compare strictly and in order.
    ("x == y", {"x": [1], "y": [1.0]}, False),
    ("x == y", {"x": [True], "y": [1]}, False),
    ("x == y", {"x": [1, 2], "y": [1]}, False),
    ("x == y", {"x": [2**53 + 1], "y": [2**53]}, False),
    ("x == y", {"x": [math.nan], "y": [math.nan]}, False),
    ("x == y", {"x": [0.0], "y": [-0.0]}, True),
    ("x == y", {"x": (), "y": []}, True),
    ("x == y", {"x": [], "y": {}}, False),
    ("x == y", {"x": {"a": 1, "b": 2}, "y": {"b": 2, "a": 1}}, False),
    ("x == y", {"x": {"a": [1, {"b": 2}]}, "y": {"a": [1, {"b": 2}]}}, True),
    ("x == y", {"x": {"a": [1, {"b": 2}]}, "y": {"a": [1, {"b": 2.0}]}}, False),
    ("x == y", {"x": {1: 2}, "y": {1: 2}}, True),
    ("x == y", {"x": {1: 2}, "y": {"1": 2}}, False),
    ("x == 1", {"x": [1]}, False),
    # Types the language does not know are equal to nothing, themselves included.
    ("x == 1", {"x": Decimal(1)}, False),
    ("x != 1", {"x": Decimal(1)}, True),
    ("x == y", {"x": {1}, "y": {1}}, False),
    # Subclasses of known types behave as their base.
    ("x == 'gold'", {"x": _Tier.GOLD}, True),
    ("x == 3", {"x": _Level.HIGH}, True),
    ("x > 2", {"x": _Level.HIGH}, True),
    ("x.y == 1", {"x": type("D", (dict,), {})(y=1)}, True),
    # Membership.
    ("x in y", {"x": 1, "y": [1.0]}, True),
    ("x in y", {"x": 1.0, "y": (1,)}, True),
    ("x in y", {"x": 2**53 + 1, "y": [2.0**53]}, True),
    ("x in y", {"x": True, "y": [1]}, False),
    ("x in y", {"x": 1, "y": [True]}, False),
    ("x in y", {"x": [1], "y": [[1.0]]}, False),
    ("x in y", {"x": [1], "y": [[1]]}, True),
    ("x in y", {"x": math.nan, "y": [math.nan]}, False),
    ("x in y", {"x": 0, "y": [-0.0]}, True),
    ("'urgent' in tags", {"tags": ["a", "urgent"]}, True),
    ("'urgent' in tags", {"tags": ("urgent",)}, True),
    ("'urgent' in tags", {"tags": ["urgentx"]}, False),
    ("'urgent' in tags", {"tags": [_Tier.GOLD, "urgent"]}, True),
    ("'gold' in tags", {"tags": [_Tier.GOLD]}, True),
    ("'urgent' in tags", {"tags": "very urgent"}, True),
    ("'urgent' in tags", {"tags": {"urgent": 1}}, True),
    ("'urgent' in tags", {"tags": frozenset({"urgent"})}, True),
    ("'urgent' in tags", {"tags": None}, False),
    ("x in y", {"x": "ab", "y": ["a", "b"]}, False),
    ("x in y", {"x": "", "y": "abc"}, True),
    ("x in y", {"x": "é", "y": "cafe\u0301"}, False),
    ("x in y", {"x": 1, "y": "1"}, False),
    ("x in y", {"x": 1, "y": {1: "a"}}, True),
    ("x in y", {"x": 1.0, "y": {1: "a"}}, True),
    ("x in y", {"x": "1", "y": {1: "a"}}, False),
    ("x in y", {"x": 1, "y": {"1": "a"}}, False),
    ("x in y", {"x": [1], "y": {(1,): "a"}}, True),
    ("x in y", {"x": True, "y": {1}}, False),
    ("x in y", {"x": "a", "y": b"cat"}, False),
    ("x in y", {"x": b"a", "y": [b"a"]}, True),
    ("z in y", {"y": [None]}, True),
    # Paths: missing and through non-mappings are null.
    ("x == null", {}, True),
    ("x == y", {}, True),
    ("x != y", {}, False),
    ("x.y == null", {"x": 5}, True),
    ("x.y != 1", {"x": "s"}, True),
    ("x.y.z == null", {"x": {"y": [1]}}, True),
    ("x.y", {"x": [1]}, False),
    ("'y' in x", {"x": {"y": None}}, True),
    ("x.y", {"x": {"y": None}}, False),
    ("x . y", {"x": {"y": 1}}, True),
    # Deliberately unlike swarmstate, which reads a path through a nested proxy as null.
    ("x.y == 1", {"x": MappingProxyType({"y": 1})}, True),
    # Logic yields bools, and `not` binds looser than a comparison.
    ("(x or y) == true", {"x": 0, "y": "a"}, True),
    ("(x and y) == y", {"x": 1, "y": 1}, False),
    ("(x == 1) == true", {"x": 1}, True),
    ("(x == 1) == 1", {"x": 1}, False),
    ("not x == 1", {"x": 1}, False),
    ("not x == 1", {"x": 2}, True),
    ("not not x", {"x": 5}, True),
    ("x and y or z", {"z": 1}, True),
    ("x or y and z", {"x": 1}, True),
    ("true or false and false", {}, True),
    ("not true or true", {}, True),
    ("not (true or true)", {}, False),
    ("user.tier == 'gold' or (priority > 3 and 'urgent' in tags)", {"priority": 4}, False),
    (
        "user.tier == 'gold' or (priority > 3 and 'urgent' in tags)",
        {"user": {"tier": "silver"}, "priority": 5, "tags": ["urgent"]},
        True,
    ),
]


@pytest.mark.parametrize(("expression", "state", "expected"), CASES)
def test_semantics_of_specific_cases(
    expression: str, state: dict[str, Any], expected: bool
) -> None:
    """Each case means what swarmstate makes it mean (or, for foreign types, is false)."""
    assert _holds(expression, state) is expected


STATES: list[Any] = [
    {"x": 1},
    MappingProxyType({"x": 1}),
    type("D", (dict,), {})(x=1),
]


@pytest.mark.parametrize("state", STATES, ids=lambda state: type(state).__name__)
def test_any_mapping_works_as_a_state(state: Any) -> None:
    """A dict, a read-only proxy and a dict subclass are all read the same way."""
    assert _holds("x == 1", state)


@pytest.mark.parametrize("state", [None, [1], 1, "x", {1}], ids=repr)
def test_anything_else_is_an_empty_state(state: Any) -> None:
    """`None`, and anything that is not a mapping, is read as an empty state."""
    assert _holds("x == null", state)
    assert not _holds("x", state)
