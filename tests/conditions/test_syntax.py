"""How conditions are written: literals, names, whitespace, precedence, and syntax errors."""

from __future__ import annotations

from typing import Any

import pytest

from swarmkit.conditions import compile_condition
from swarmkit.exceptions import ConditionSyntaxError, ConfigurationError


def _holds(expression: str, state: Any = None) -> bool:
    return compile_condition(expression)(state)


LITERALS: list[tuple[str, dict[str, Any], bool]] = [
    # Keyword spellings; any other casing is a plain name.
    ("true", {}, True),
    ("True", {}, True),
    ("false", {}, False),
    ("False", {}, False),
    ("null", {}, False),
    ("none", {}, False),
    ("None", {}, False),
    ("none == null", {}, True),
    ("null == None", {}, True),
    ("true == True", {}, True),
    ("TRUE", {"TRUE": 1}, True),
    ("TRUE", {}, False),
    ("Null", {"Null": 1}, True),
    ("NULL == null", {}, True),
    ("True", {"True": 0}, True),
    ("OR", {"OR": 1}, True),
    ("Not", {"Not": 1}, True),
    ("In", {"In": 1}, True),
    # Numbers.
    ("-1 == x", {"x": -1}, True),
    ("007 == 7", {}, True),
    ("1.50 == 1.5", {}, True),
    ("00.5 == 0.5", {}, True),
    ("-0 == 0", {}, True),
    ("-0.0 == 0", {}, True),
    ("-1.5 == x", {"x": -1.5}, True),
    ("-9223372036854775808 == x", {"x": -(2**63)}, True),
    ("9223372036854775807 == x", {"x": 2**63 - 1}, True),
    ("0.1000000000000000055511151231257827 == 0.1", {}, True),
    ("x == " + "1" * 400 + ".0", {"x": float("inf")}, True),
    ("0", {}, False),
    ("0.0", {}, False),
    ("-0.0", {}, False),
    ("1", {}, True),
    # Strings: \n and \t are escapes, any other escaped character stands for itself.
    ("''", {}, False),
    ("'abc'", {}, True),
    ("'a' == \"a\"", {}, True),
    ("x == 'a\\nb'", {"x": "a\nb"}, True),
    ("x == 'a\\tb'", {"x": "a\tb"}, True),
    ("x == 'a\\'b'", {"x": "a'b"}, True),
    ('x == "a\\"b"', {"x": 'a"b'}, True),
    ('x == "a\\\'b"', {"x": "a'b"}, True),
    ("x == 'a\\\\b'", {"x": "a\\b"}, True),
    ("x == 'a\\qb'", {"x": "aqb"}, True),
    ("x == 'a\\rb'", {"x": "arb"}, True),
    ("x == 'a\\0'", {"x": "a0"}, True),
    ("x == 'a\\u0041'", {"x": "au0041"}, True),
    ("x == 'a\\x41'", {"x": "ax41"}, True),
    ("x == 'a\\é'", {"x": "aé"}, True),
    ("x == 'a\nb'", {"x": "a\nb"}, True),
    ("x == 'a\x00b'", {"x": "a\x00b"}, True),
    ("x == 'é😀'", {"x": "é😀"}, True),
    ('x == "it\'s"', {"x": "it's"}, True),
    # Names: letters, marks and digits of any script; dots may have spaces around them.
    ("café", {"café": 1}, True),
    ("日本", {"日本": 1}, True),
    ("ǅ", {"ǅ": 1}, True),
    ("\uff21\uff22", {"\uff21\uff22": 1}, True),
    ("x²", {"x²": 1}, True),
    ("x\u0661", {"x\u0661": 1}, True),
    ("_x", {"_x": 1}, True),
    ("x1", {"x1": 1}, True),
    ("x\u0345", {"x\u0345": 1}, True),
    ("\u0345in", {"\u0345in": 1}, True),
    ("\u24b6", {"\u24b6": 1}, True),
    ("\U0001d465", {"\U0001d465": 1}, True),
    ("x . y", {"x": {"y": 1}}, True),
    ("x .y", {"x": {"y": 1}}, True),
    ("x. y", {"x": {"y": 1}}, True),
    ("x.y.z", {"x": {"y": {"z": 1}}}, True),
    # Whitespace is Unicode White_Space, around any token.
    (" x == 1 ", {"x": 1}, True),
    ("x\t==\t1", {"x": 1}, True),
    ("x\n==\r1", {"x": 1}, True),
    ("x\x0b==\x0c1", {"x": 1}, True),
    ("x\x85==\xa01", {"x": 1}, True),
    ("x\u2028==\u30001", {"x": 1}, True),
    ("x==1and y==2", {"x": 1, "y": 2}, True),
]


@pytest.mark.parametrize(("expression", "state", "expected"), LITERALS)
def test_literals_names_and_whitespace(
    expression: str, state: dict[str, Any], expected: bool
) -> None:
    """Literals, keywords, names and whitespace read as in swarmstate."""
    assert _holds(expression, state) is expected


PRECEDENCE = [
    # (expression, the same with explicit parentheses)
    ("not a == b", "not (a == b)"),
    ("a or b and c", "a or (b and c)"),
    ("not a and b", "(not a) and b"),
    ("a and not b or c", "(a and (not b)) or c"),
    ("not not a", "not (not a)"),
    ("a == b or c", "(a == b) or c"),
    ("a + b * c == d", "(a + (b * c)) == d"),
    ("a - b - c == d", "((a - b) - c) == d"),
    ("-a * b == c", "((-a) * b) == c"),
    ("a in b and c", "(a in b) and c"),
    ("a not in b or c", "(a not in b) or c"),
]
STATES: list[dict[str, Any]] = [
    {},
    {"a": 1, "b": 1, "c": 0, "d": 2},
    {"a": 0, "b": 2, "c": 1, "d": 1},
    {"a": 2, "b": [2], "c": 3, "d": -1},
    {"a": "x", "b": "xy", "c": None},
]


@pytest.mark.parametrize(("expression", "grouped"), PRECEDENCE)
def test_precedence_matches_explicit_parentheses(expression: str, grouped: str) -> None:
    """Operators group as the table says: not below comparisons, and below or, etc."""
    for state in STATES:
        assert _holds(expression, state) is _holds(grouped, state), state


ERRORS = [
    # (expression, 0-based column of the caret, a phrase of the message)
    ("", 0, "empty condition"),
    ("   ", 0, "empty condition"),
    ("x ==", 4, "expected a value"),
    ("x = 1", 2, "'=='"),
    ("x =< 1", 2, "'=='"),
    ("!x", 0, "'not'"),
    ("x && y", 2, "'and'"),
    ("x || y", 2, "'or'"),
    ("(x", 0, "never closed"),
    ("[1, 2", 0, "never closed"),
    ("x)", 1, "unmatched"),
    ("()", 1, "expected a value"),
    ("x == 1 == 1", 7, "chained"),
    ("x < 2 < 3", 6, "chained"),
    ("x in y in z", 7, "chained"),
    ("'abc", 0, "unterminated"),
    ("x == 'a\\", 5, "unterminated"),
    ("1.5.3", 0, "invalid number"),
    ("9223372036854775808", 0, "64-bit range"),
    ("-9223372036854775809", 1, "64-bit range"),
    ("99999999999999999999999", 0, "64-bit range"),
    ("x.", 2, "expected a name"),
    ("x..y", 2, "expected a name"),
    ("x.true", 2, "expected a name"),
    ("x.in", 2, "expected a name"),
    (".x", 0, "expected a value"),
    ("1x", 1, "expected an operator"),
    ("1e3 == 1000", 1, "expected an operator"),
    ("1. == 1", 1, "literal cannot be followed"),
    ("'a'[0]", 3, "literal cannot be indexed"),
    ("x == not y", 5, "'not'"),
    ("x y", 2, "expected an operator"),
    ("x 'y'", 2, "expected an operator"),
    ("and", 0, "expected a value"),
    ("x and", 5, "expected a value"),
    ("x not y", 2, "'in'"),
    ("x is 1", 2, "expected an operator"),
    ("x <> 1", 3, "expected a value"),
    ("$", 0, "unexpected character"),
    ("x$", 1, "unexpected character"),
    ("\u0661", 0, "unexpected character"),
    ("a\x00", 1, "unexpected character"),
    ("x\u200b== 1", 1, "unexpected character"),
    ("x\x1c== 1", 1, "unexpected character"),
    ("\ufeffx", 0, "unexpected character"),
    ("x == 0x10", 6, "expected an operator"),
    ("1, 2", 1, "','"),
]


@pytest.mark.parametrize(("expression", "position", "phrase"), ERRORS)
def test_syntax_errors_point_at_the_column(expression: str, position: int, phrase: str) -> None:
    """Invalid conditions raise ConditionSyntaxError with the column and a helpful message."""
    with pytest.raises(ConditionSyntaxError) as caught:
        compile_condition(expression)
    error = caught.value
    assert error.position == position
    assert error.expression == expression
    assert phrase in str(error)


def test_syntax_error_message_shows_a_caret_under_the_column() -> None:
    """The message repeats the expression with a caret under the offending column."""
    with pytest.raises(ConditionSyntaxError) as caught:
        compile_condition("tier == 'gold' and and")
    assert str(caught.value).endswith("\n  tier == 'gold' and and\n                     ^")


def test_syntax_errors_are_value_errors_in_the_error_tree() -> None:
    """Code catching ValueError, as seed 000 documents, catches our syntax errors."""
    with pytest.raises(ValueError, match="expected a value"):
        compile_condition("x ==")
    assert issubclass(ConditionSyntaxError, ConfigurationError)


@pytest.mark.parametrize("value", [1, None, b"x == 1", ["x"]], ids=repr)
def test_a_condition_that_is_not_a_string_is_a_type_error(value: Any) -> None:
    """Only str is a condition; anything else is a TypeError, as in swarmstate."""
    with pytest.raises(TypeError, match="str"):
        compile_condition(value)
