"""Hostile conditions and states: nothing crashes, recurses too deeply, or raises from a state."""

from __future__ import annotations

import collections
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmkit.conditions import (
    MAX_EXPRESSION_LENGTH,
    MAX_NESTING_DEPTH,
    Condition,
    compile_condition,
)
from swarmkit.exceptions import ConditionSyntaxError


def _rejected(expression: str) -> ConditionSyntaxError:
    with pytest.raises(ConditionSyntaxError) as caught:
        compile_condition(expression)
    return caught.value


# Huge and deeply nested conditions.


def test_a_condition_longer_than_the_cap_is_rejected_before_parsing() -> None:
    """Past MAX_EXPRESSION_LENGTH characters the condition is refused outright."""
    error = _rejected("x" * (MAX_EXPRESSION_LENGTH + 1))
    assert error.position == MAX_EXPRESSION_LENGTH
    assert "limit" in str(error)


def test_an_or_chain_of_100k_terms_is_flat() -> None:
    """A 100,000-term `or` compiles and evaluates without touching the recursion limit."""
    condition = compile_condition(" or ".join(["a"] * 99_999 + ["b"]))
    assert condition({"b": 1})
    assert not condition({"c": 1})


def test_an_and_chain_of_20k_terms_is_flat() -> None:
    """A 20,000-term `and` compiles and evaluates without touching the recursion limit."""
    condition = compile_condition(" and ".join(f"x{i % 7}" for i in range(20_000)))
    assert condition({f"x{i}": 1 for i in range(7)})
    assert not condition({f"x{i}": 1 for i in range(6)})


def test_an_arithmetic_chain_of_20k_terms_is_flat() -> None:
    """A 20,000-term sum is one flat node too."""
    assert compile_condition(" + ".join(["1"] * 20_000) + " == 20000")({})


@pytest.mark.parametrize(
    "expression",
    [
        "(" * 50_000 + "x" + ")" * 50_000,
        "[" * 50_000 + "x" + "]" * 50_000,
        "not " * 50_000 + "x",
        "x" + "[x" * 20_000 + "]" * 20_000,
        "(" * 50_000,
        "(x or " * 20_000 + "y" + ")" * 20_000,
    ],
    ids=["parentheses", "lists", "nots", "indexes", "unclosed", "nested-or"],
)
def test_deep_nesting_is_a_syntax_error_not_a_recursion_error(expression: str) -> None:
    """Nesting past MAX_NESTING_DEPTH is refused with a clear message."""
    error = _rejected(expression)
    assert "nested too deeply" in str(error) or "never closed" in str(error)


def test_nesting_up_to_the_limit_is_accepted() -> None:
    """MAX_NESTING_DEPTH levels of brackets and of `not` both compile."""
    depth = MAX_NESTING_DEPTH
    assert compile_condition("(" * depth + "x" + ")" * depth)({"x": 1})
    assert compile_condition("not " * (depth - 1) + "x")({"x": 0})
    _rejected("(" * (depth + 1) + "x" + ")" * (depth + 1))
    _rejected("not " * depth + "x")


def test_nesting_is_at_least_as_deep_as_the_reference_allows() -> None:
    """swarmstate accepts 12 parenthesised `or`/`and` levels and 60 `not`s; so do we."""
    assert compile_condition("(" * 12 + "x or (y and z)" + ")" * 12)({"x": 1})
    assert compile_condition("not " * 60 + "x")({"x": 1})
    assert compile_condition("(not " * 11 + "x" + ")" * 11)({})


def test_a_long_chain_of_unary_minus_folds_into_one_constant() -> None:
    """`- - - ... 1` is folded as it is read, so it costs no depth."""
    assert compile_condition("-" * 20_000 + "1 == 1")({})


def test_a_path_of_20k_steps_is_read_without_recursion() -> None:
    """Long dotted and indexed paths parse in linear time and read iteratively."""
    state: Any = 1
    for _ in range(20_000):
        state = {"k": state}
    assert compile_condition(".".join(["k"] * 20_000) + " == 1")(state)
    nested: Any = 1
    for _ in range(20_000):
        nested = [nested]
    assert compile_condition("x" + "[0]" * 20_000 + " == 1")({"x": nested})


def test_a_string_literal_of_750k_characters() -> None:
    """Long strings with many escapes lex in linear time."""
    text = "a'\\" * 150_000
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    assert compile_condition(f"x == '{escaped}'")({"x": text})


# Odd characters.

UNICODE = [
    ("x == '\x00'", {"x": "\x00"}, True),
    ("x == '\ud800'", {"x": "\ud800"}, True),
    ("x == '\U0010ffff'", {"x": "\U0010ffff"}, True),
    ("x == '\u202e'", {"x": "\u202e"}, True),
    ("\U0001d465\U0001d466 == 1", {"\U0001d465\U0001d466": 1}, True),
    ("e\u0301 == 1", {"e\u0301": 1}, True),
    ("é == 1", {"e\u0301": 1}, False),
    ("عدد > 1", {"عدد": 2}, True),
    ("x == 'ﷺ'", {"x": "ﷺ"}, True),
]


@pytest.mark.parametrize(("expression", "state", "expected"), UNICODE)
def test_odd_unicode_in_names_and_strings(
    expression: str, state: dict[str, Any], expected: bool
) -> None:
    """NUL, lone surrogates, non-BMP and right-to-left text are fine inside strings and names."""
    assert compile_condition(expression)(state) is expected


@pytest.mark.parametrize(
    ("expression", "position"),
    [("x\x00", 1), ("\ud800", 0), ("x == \ud800", 5), ("\u202ex", 0), ("x\ufeff", 1)],
    ids=["nul", "surrogate", "surrogate-value", "rtl-override", "bom"],
)
def test_odd_characters_outside_strings_are_syntax_errors(expression: str, position: int) -> None:
    """A control, format or surrogate character outside a string is pointed at."""
    assert _rejected(expression).position == position


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_compiles_or_raises_a_syntax_error(text: str) -> None:
    """Whatever the text, compiling either succeeds or raises ConditionSyntaxError."""
    try:
        condition = compile_condition(text)
    except ConditionSyntaxError as error:
        assert 0 <= error.position <= len(text)
    else:
        assert isinstance(condition({}), bool)


_TOKENS = ["x", "y.z", "1", "-2.5", "'s'", "true", "null", "==", "!=", "<", ">=", "in", "not"]
_TOKENS += ["and", "or", "(", ")", "[", "]", ",", ".", "+", "-", "*", "/", "%", " "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=25))
def test_any_token_soup_compiles_or_raises_a_syntax_error(tokens: list[str]) -> None:
    """Random sequences of real tokens never raise anything but ConditionSyntaxError."""
    try:
        condition = compile_condition(" ".join(tokens))
    except ConditionSyntaxError:
        return
    assert isinstance(condition({"x": [1], "y": {"z": "s"}}), bool)


# Hostile states.


class _Explosive:
    """Raises from every operation a condition could try on it."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __bool__(self) -> bool:
        raise RuntimeError("bool")

    def __len__(self) -> int:
        raise RuntimeError("len")

    def __iter__(self) -> Iterator[object]:
        raise RuntimeError("iter")

    def __lt__(self, other: object) -> bool:
        raise RuntimeError("lt")

    def __float__(self) -> float:
        raise RuntimeError("float")


class _ExplosiveMapping(Mapping[str, object]):
    """A mapping that fails on every read."""

    def __getitem__(self, key: str) -> object:
        raise RuntimeError("getitem")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("iter")

    def __len__(self) -> int:
        raise RuntimeError("len")


class _ExplosiveStr(str):
    """A string subclass whose own comparisons fail."""

    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")


_EXPRESSIONS = [
    "x",
    "not x",
    "x == 'a'",
    "x != 'a'",
    "x == 1",
    "x < 1",
    "x > 'a'",
    "x == y",
    "x in y",
    "'a' in x",
    "1 in x",
    "x in ['a', 'b']",
    "x in [1, 2]",
    "x.y == 1",
    "x[0] == 1",
    "x + 1 == 2",
    "-x == 1",
]
_HOSTILE_VALUES: list[Any] = [
    _Explosive(),
    [_Explosive()],
    {"y": _Explosive()},
    _ExplosiveMapping(),
    _ExplosiveStr("a"),
    [_ExplosiveStr("a")],
    10**5000,
    -(10**5000),
    float("nan"),
    {1, 2},
    frozenset({"a"}),
    b"a",
    bytearray(b"a"),
    range(3),
    object(),
    type,
    len,
]


@pytest.mark.parametrize("value", _HOSTILE_VALUES, ids=lambda value: type(value).__name__)
@pytest.mark.parametrize("expression", _EXPRESSIONS)
def test_values_that_raise_never_escape(expression: str, value: Any) -> None:
    """Whatever a value does when compared, iterated or tested, the condition answers."""
    condition = compile_condition(expression)
    for state in ({"x": value}, {"x": value, "y": value}, {"x": "a", "y": value}):
        assert isinstance(condition(state), bool)


def test_a_state_mapping_that_raises_reads_as_empty() -> None:
    """A mapping whose reads fail is a state in which every path is null."""
    assert compile_condition("x == null")(_ExplosiveMapping())
    assert not compile_condition("x")(_ExplosiveMapping())


def test_a_defaultdict_state_is_never_written_to() -> None:
    """Reading a missing key never creates it, at any level."""
    inner: collections.defaultdict[str, Any] = collections.defaultdict(list)
    state: collections.defaultdict[str, Any] = collections.defaultdict(list, {"x": inner})
    assert compile_condition("y == null and x.z == null and x['w'] == null")(state)
    assert set(state) == {"x"}
    assert not inner


def test_deeply_nested_state_values_compare_without_recursion() -> None:
    """Equality walks nested data with a loop, not the call stack."""
    left: Any = 1
    right: Any = 1
    for _ in range(100_000):
        left, right = [left], [right]
    condition = compile_condition("x == y")
    assert condition({"x": left, "y": right})
    assert not condition({"x": left, "y": [right]})


def test_self_referencing_state_values_compare_and_terminate() -> None:
    """A list that contains itself still compares, without looping forever."""
    loop: list[Any] = [1]
    loop.append(loop)
    other: list[Any] = [1]
    other.append(other)
    assert compile_condition("x == y")({"x": loop, "y": other})
    assert compile_condition("x in y")({"x": loop, "y": [other]})


def test_huge_state_is_read_only_where_the_condition_looks() -> None:
    """A condition reads only its own paths, so the size of the rest of the state is free."""
    state = {f"k{i}": list(range(10)) for i in range(100_000)}
    state["tier"] = "gold"  # type: ignore[assignment]
    assert compile_condition("tier == 'gold'")(state)


def test_a_condition_is_a_plain_value() -> None:
    """Compiling twice gives equal conditions; nothing about the state is remembered."""
    first, second = compile_condition("x == 1"), compile_condition("x == 1")
    assert isinstance(first, Condition)
    assert first == second
    assert first({"x": 1}) and not first({"x": 2})
