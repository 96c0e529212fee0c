"""Per-key decision tables answer exactly as the plain evaluation does, edge by edge.

The reference here walks the syntax tree with the language's value rules (``_values``) and
takes the first edge that holds; the tables (dicts, bisect, stored answers for null, true,
false and NaN, the walk over a sparse state's keys) must never differ from it.
"""

from __future__ import annotations

import enum
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmkit.conditions import compile_condition, compile_first_match
from swarmkit.conditions._ast import And, Compare, Expr, Literal, Not, Or, Path
from swarmkit.conditions._compile import compile_tree
from swarmkit.conditions._table import SPARSE_FROM, decision_table
from swarmkit.conditions._values import COMPARISONS, step, truthy


def _evaluate(tree: Expr, state: object) -> object:
    """The plain meaning of the shapes these tests build: no closures, no tables."""
    match tree:
        case Literal(value=constant):
            return constant
        case Path(keys=keys):
            found: object = state
            for key in keys:
                found = step(found, key)
            return found
        case Compare(op=op, left=left, right=right):
            return COMPARISONS[op](_evaluate(left, state), _evaluate(right, state))
        case Not(operand=operand):
            return not truthy(_evaluate(operand, state))
        case And(operands=operands):
            return all(truthy(_evaluate(operand, state)) for operand in operands)
        case Or(operands=operands):
            return any(truthy(_evaluate(operand, state)) for operand in operands)
    raise AssertionError(tree)


def _reference(whens: list[str], state: dict[str, Any]) -> int | None:
    for number, when in enumerate(whens):
        if truthy(_evaluate(compile_condition(when).tree, state)):
            return number
    return None


class _Text(str):
    """A str subclass: compared as the text it holds, but never found by the tables."""


class _Level(enum.IntEnum):
    LOW = 1
    HIGH = 90


_CONSTANTS = [
    "0", "1", "-1", "3", "50", "90", "1.5", "-0.0", "0.1", "9007199254740993",
    "'a'", "'b'", "''", "'gold'", "'a\\u0000'", "null", "true", "false", "[1, 'a', null]",
    "['a', 'b']", "[true, 3.0]",
]  # fmt: skip
_VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 3, 3.0, 50, 89.999, 90, 1.5, -0.0, 0.1, 2**53 + 1, 10**400,
    float("nan"), float("inf"), float("-inf"), "", "a", "b", "gold", "a\x00", "z", _Text("a"),
    _Level.HIGH, [], ["a"], ["b", "gold"], ["a", _Text("b")], ("gold",), {"a": 1}, b"a", {1},
]  # fmt: skip
_PATHS = ["a", "b", "x.y"]


@st.composite
def _keyed(draw: st.DrawFn) -> str:
    """A comparison of a path with a constant, either side, or a text searched in a path."""
    path = draw(st.sampled_from(_PATHS))
    constant = draw(st.sampled_from(_CONSTANTS))
    op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in", "needle"]))
    if op == "needle":
        return f"{draw(st.sampled_from(['a', 'b', 'gold', '']))!r} in {path}"
    if op in ("in", "not in"):
        return f"{path} {op} {constant if constant.startswith('[') else f'[{constant}]'}"
    if constant.startswith("["):
        constant = "3"
    return f"{constant} {op} {path}" if draw(st.booleans()) else f"{path} {op} {constant}"


_WHENS = st.recursive(
    _keyed(),
    lambda inner: (
        inner.map(lambda when: f"not ({when})")
        | st.tuples(inner, st.sampled_from([" and ", " or "]), inner).map(
            lambda parts: f"({parts[0]}){parts[1]}({parts[2]})"
        )
    ),
    max_leaves=3,
)
_STATE_VALUES = st.sampled_from(_VALUES)
_INNER = st.fixed_dictionaries({}, optional={"y": _STATE_VALUES}) | _STATE_VALUES
_STATES = st.fixed_dictionaries({}, optional={"a": _STATE_VALUES, "b": _STATE_VALUES, "x": _INNER})


@settings(max_examples=80, deadline=None)
@given(st.lists(_WHENS, min_size=3, max_size=9), st.lists(_STATES, min_size=1, max_size=6))
def test_a_node_routes_to_the_first_edge_the_plain_evaluation_holds(
    whens: list[str], states: list[dict[str, Any]]
) -> None:
    """Random edges on a few paths, random states of every kind: the table's first match is
    the plain evaluation's."""
    choose = compile_first_match(
        [(compile_condition(when), number) for number, when in enumerate(whens)]
    )
    for state in states:
        assert choose(state) == _reference(whens, state), (whens, state)


@settings(max_examples=80, deadline=None)
@given(st.lists(_WHENS, min_size=3, max_size=9), st.lists(_STATES, min_size=1, max_size=6))
def test_an_or_chain_holds_when_the_plain_evaluation_does(
    terms: list[str], states: list[dict[str, Any]]
) -> None:
    """The same terms joined by ``or``: one condition, answered through its own table."""
    condition = compile_condition(" or ".join(f"({term})" for term in terms))
    for state in states:
        assert condition(state) == (_reference(terms, state) is not None), (terms, state)


@pytest.mark.parametrize("path", ["a", "x.a"])
def test_every_value_kind_meets_every_constant_kind_in_a_band_table(path: str) -> None:
    """Bands, equalities and memberships on one path, against every kind of value: exact."""
    whens = [
        "a >= 90",
        "a >= 50 and a < 90",
        "a == 'gold' or a == 1.5",
        "a in [null, true, 'b']",
        "a > 'a' and a <= 'b'",
        "a != 3",
        "a < -1",
    ]
    whens = [when.replace("a ", f"{path} ") for when in whens]
    choose = compile_first_match([(compile_condition(when), when) for when in whens])
    for value in _VALUES:
        for state in ({"a": value}, {"x": {"a": value}}, {"x": value}, {}):
            expected = _reference(whens, state)
            assert choose(state) == (None if expected is None else whens[expected]), state


def test_every_number_across_a_range_of_bands_routes_as_each_edge_says() -> None:
    """Bands on ints and floats: each int from below the lowest bound to past the highest
    (stored one by one), halves between them, and far values (found by bisect)."""
    whens = ["n >= 90", "n > 80.5 and n < 90", "n >= 60 and n <= 80.5", "n == 7", "n < 0"]
    whens += ["n > 10 and n < 20", "n >= 30.25 and n < 31"]
    choose = compile_first_match([(compile_condition(when), when) for when in whens])
    numbers: list[Any] = [*range(-3, 95), *(i / 2 for i in range(-5, 190)), 10**6, -(10**20)]
    for number in numbers:
        expected = _reference(whens, {"n": number})
        assert choose({"n": number}) == (None if expected is None else whens[expected]), number


def test_an_edge_that_is_an_or_of_bands_routes_as_its_terms_say() -> None:
    """One or two edges, each an ``or`` of ranges on one path, then a default: the node is one
    lookup over every term, and routes as the edges tried one by one."""
    ranges = " or ".join(f"(n >= {i * 10} and n < {i * 10 + 5})" for i in range(8))
    for whens in ([ranges], [ranges, "n > 100 or n < -5 or n == 'x'"]):
        branches = [(compile_condition(when), when) for when in whens]
        choose = compile_first_match([*branches, (None, "default")])
        for value in [*_VALUES, *range(-8, 110, 3), 52.5, 99.5]:
            expected = _reference(whens, {"n": value})
            assert choose({"n": value}) == ("default" if expected is None else whens[expected])


def test_edges_keyed_on_equality_and_guarded_by_more_tests() -> None:
    """``region == 'eu' and amount > 10``: keyed on region, the rest tested for that region."""
    whens = [f"region == 'r{i % 4}' and amount > {i * 10}" for i in range(12)]
    whens.append("'vip' in tags")
    choose = compile_first_match(
        [(compile_condition(when), number) for number, when in enumerate(whens)]
    )
    for region in ("r0", "r3", "r9", None, _Text("r1"), 3):
        for amount in (0, 15, 75, 500, "75", None, float("nan")):
            for tags in ([], ["vip"], ["x", _Text("vip")], "vip", None):
                state = {"region": region, "amount": amount, "tags": tags}
                assert choose(state) == _reference(whens, state), state


def test_texts_searched_in_one_list_read_it_once_and_agree() -> None:
    """``'a' in tags``, ``'b' in tags``, ...: lists, tuples, dicts, strings, long lists."""
    whens = ["'b' in tags", "'a' in tags", "'b' in tags", "tags == ['a']", "'c' in tags"]
    choose = compile_first_match(
        [(compile_condition(when), number) for number, when in enumerate(whens)]
    )
    haystacks: list[Any] = [
        [], ["a"], ["c", "a"], ("c",), ["x"] * 100 + ["c"], {"a": 1}, {"c": 1, "b": 2},
        "abc", None, [1, None, ["a"]], [_Text("c")], {_Text("b"): 1}, {"a"},
    ]  # fmt: skip
    for tags in haystacks:
        assert choose({"tags": tags}) == _reference(whens, {"tags": tags}), tags


def test_a_state_with_few_keys_is_walked_by_its_keys() -> None:
    """Edges on many keys, each needing its key: a small state asks only its own keys' tests,
    and still gets the first edge in order (seeded random graphs and states)."""
    generator = random.Random(46)
    keys = [f"k{i}" for i in range(SPARSE_FROM + 4)]
    for _ in range(40):
        whens = [
            generator.choice(
                [
                    f"{key} == 'x'",
                    f"{key} > 3",
                    f"{key} in ['x', 1]",
                    f"'x' in {key}",
                    f"{key} != 1",
                ]
            )
            for key in generator.sample(keys, len(keys))
        ]
        whens += ["other.deep == 1", "k0 == 'x' and k1 > 3"]
        conditions = [compile_condition(when) for when in whens]
        choose = compile_first_match([(c, number) for number, c in enumerate(conditions)])
        for _ in range(20):
            picked = generator.sample(keys, generator.randint(0, 3))
            state = {key: generator.choice([*_VALUES[:20], ["x"]]) for key in picked}
            assert choose(state) == _reference(whens, state), (whens, state)


def test_a_node_of_many_keys_routes_by_each_keys_value() -> None:
    """Edges spread over a few keys (equalities, memberships, != and bands): each key's
    string or number picks the first edge, as edge by edge (seeded random graphs)."""
    generator = random.Random(34)
    texts = ["v0", "v1", "v2", "v3"]
    shapes = ["{k} == '{t}'", "{k} != '{t}'", "{k} in ['{t}', 'v3']", "{k} > {n}", "{k} == {n}"]
    for _ in range(30):
        whens = [
            generator.choice(shapes).format(
                k=generator.choice("abcd"), t=generator.choice(texts), n=generator.randint(0, 4)
            )
            for _ in range(generator.randint(4, 16))
        ]
        choose = compile_first_match([(compile_condition(when), n) for n, when in enumerate(whens)])
        for _ in range(15):
            state = {
                key: generator.choice([*texts, "zz", 2, None, _Text("v1")])
                for key in generator.sample("abcd", generator.randint(0, 4))
            }
            assert choose(state) == _reference(whens, state), (whens, state)


def test_tables_are_built_only_where_they_pay() -> None:
    """Two tests on one path make a table; tests on distinct paths, few of them, do not."""
    shared = [compile_condition(when) for when in ("a > 1", "a < 0", "b == 2")]
    distinct = [compile_condition(when) for when in ("a > 1", "b < 0", "c == 2")]
    assert decision_table([(c.tree, c._test) for c in shared], compile_tree) is not None
    assert decision_table([(c.tree, c._test) for c in distinct], compile_tree) is None


def test_a_huge_chain_on_one_key_keeps_its_plain_tests() -> None:
    """A 3,000-term ``or`` of numbers on one key compiles without a quadratic table."""
    condition = compile_condition(" or ".join(f"x == {i}" for i in range(3_000)))
    assert condition({"x": 2_999})
    assert not condition({"x": 3_000})
