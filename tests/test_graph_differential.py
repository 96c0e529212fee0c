"""Differential tests: wherever swarmstate (the reference) returns a result, we return it too.

Expressions stay small: swarmstate crashes the process on very long `or` chains.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmkit.graph import HandoffGraph

swarmstate = pytest.importorskip("swarmstate")

_NAMES = ["a", "b", "x", "tags", "tier", "TRUE", "Null", "none_", "café", "_k", "x1"]
_NODES = ["n0", "n1", "n2", "n3"]

# State values of the types swarmstate can read; no nested non-dict mappings, where we
# deliberately differ.
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.sampled_from([0, 1, -1, 3, 2**53, 2**53 + 1, 2**63 - 1, 2**64 - 1])
    | st.floats()
    | st.sampled_from([0.0, -0.0, 1.0, 1.5, 3.0, 2.0**53, 0.1])
    | st.text(alphabet="ab A'\"\\é😀\n", max_size=4)
    | st.sampled_from(["a", "b", "urgent", "gold", ""])
    | st.binary(max_size=2)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=3)
        | st.tuples(children, children)
        | st.dictionaries(st.sampled_from(_NAMES), children, max_size=3)
    ),
    max_leaves=6,
)
_STATES = st.dictionaries(st.sampled_from(_NAMES), _VALUES, max_size=5)

_STRING_PIECES = ["a", "b", "A", " ", "é", "urgent", "gold", "😀", "1"]
_STRING_PIECES += ["\\n", "\\t", "\\\\", "\\q", "\\r", "\\'", '\\"']


@st.composite
def _strings(draw: st.DrawFn) -> str:
    quote = draw(st.sampled_from(["'", '"']))
    pieces = draw(st.lists(st.sampled_from(_STRING_PIECES), max_size=3))
    body = "".join(pieces).replace(quote, "\\" + quote) if quote not in "".join(pieces) else ""
    return quote + body + quote


_NUMBERS = st.sampled_from(
    [
        *("0", "1", "-1", "3", "007", "10", "9007199254740993", "9007199254740992", "-0"),
        *("-9223372036854775808", "9223372036854775807", "0.0", "-0.0", "1.5", "0.1"),
        *("3.00", "9007199254740992.0", "100000000000000000000000.0"),
    ]
)
_KEYWORDS = st.sampled_from(["true", "True", "false", "False", "null", "none", "None"])


@st.composite
def _paths(draw: st.DrawFn) -> str:
    names = draw(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3))
    return draw(st.sampled_from([".", " . ", ". "])).join(names)


_ATOMS = _paths() | _strings() | _NUMBERS | _KEYWORDS
_OPERATORS = st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in"])
_COMPARISONS = st.tuples(_ATOMS, _OPERATORS, _ATOMS).map(" ".join)
_EXPRESSIONS = st.recursive(
    _COMPARISONS | _ATOMS,
    lambda inner: (
        inner.map(lambda e: f"not {e}")
        | inner.map(lambda e: f"({e})")
        | st.tuples(inner, st.sampled_from([" and ", " or ", "and ", " or\t"]), inner).map("".join)
    ),
    max_leaves=5,
)


def _reference_route(graph: Any, node: str, state: dict[str, Any]) -> tuple[bool, Any]:
    try:
        return True, graph.route(node, state)
    except (TypeError, ValueError, UnicodeError):  # a state the reference cannot read
        return False, None


@settings(max_examples=250, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_NODES), st.sampled_from(_NODES), st.none() | _EXPRESSIONS),
        max_size=6,
    ),
    st.lists(_STATES, min_size=1, max_size=4),
)
def test_routes_agree_with_swarmstate(
    edges: list[tuple[str, str, str | None]], states: list[dict[str, Any]]
) -> None:
    """On random graphs, conditions and states, route gives swarmstate's answer."""
    ours, theirs = HandoffGraph(on_cycle="allow"), swarmstate.HandoffGraph(on_cycle="allow")
    for source, target, when in edges:
        try:
            theirs.add_edge(source, target, when=when)
        except ValueError:
            continue  # where the reference refuses a condition, we may accept it (seed 004)
        ours.add_edge(source, target, when=when)
    assert (ours.nodes(), len(ours), ours.is_dag()) == (
        theirs.nodes(),
        len(theirs),
        theirs.is_dag(),
    )
    for node in [*_NODES, "unknown"]:
        assert ours.edges(node) == theirs.edges(node)
        for state in states:
            answered, expected = _reference_route(theirs, node, state)
            if answered:
                assert ours.route(node, state) == expected, (node, ours.edges(node), state)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_NODES), st.sampled_from(_NODES)), max_size=10))
def test_cycle_checks_agree_with_swarmstate(edges: list[tuple[str, str]]) -> None:
    """Under on_cycle='error', the same edges are refused, and the graphs stay equal."""
    ours, theirs = HandoffGraph(), swarmstate.HandoffGraph()
    for source, target in edges:
        try:
            theirs.add_edge(source, target)
        except ValueError:
            with pytest.raises(ValueError, match="cycle"):
                ours.add_edge(source, target)
        else:
            ours.add_edge(source, target)
        assert ours.nodes() == theirs.nodes()
        assert [ours.edges(node) for node in _NODES] == [theirs.edges(node) for node in _NODES]
        assert ours.is_dag() and theirs.is_dag()


_SOUP = [
    "x", "y", "a.b", "x . y", "1", "-1", "1.5", "-0.5", "'s'", '"t"', "true", "None", "null",
    "==", "!=", "<", "<=", ">", ">=", "in", "not", "and", "or", "(", ")", ".", "-", "=", "!",
    "[", "]", ",", "+", "*", "1.", "1e3", "TRUE", "And", " ", "\t", "\n", "\x0b", "\x1c",
    "\xa0", "\u2028", "\u200b", "é", "_", "01", "''", "\\", "\u0661", "x\u0661", "\u0345", "\x00",
]  # fmt: skip
_SAMPLE_STATES: list[dict[str, Any]] = [
    {},
    {"x": 1, "y": [1, "s"], "a": {"b": "s"}},
    {"x": "s", "y": "xs", "TRUE": 0},
    {"x": None, "y": 0.5, "a": {"b": -1}},
    {"x": [], "y": {"x": 1}, "And": True},
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_SOUP), min_size=1, max_size=7).map("".join))
def test_everything_swarmstate_accepts_we_accept_with_the_same_meaning(text: str) -> None:
    """Token soup: whenever the reference accepts a condition, we accept it and agree."""
    theirs = swarmstate.HandoffGraph()
    try:
        theirs.add_edge("n", "t", when=text)
    except ValueError:
        return
    ours = HandoffGraph()
    ours.add_edge("n", "t", when=text)
    for state in _SAMPLE_STATES:
        assert ours.route("n", state) == theirs.route("n", state), state


@pytest.mark.parametrize("expression", ["x ==", "(a", "a and", "'open", "a ~ b", ""])
def test_syntax_errors_start_with_invalid_condition_in_both(expression: str) -> None:
    """Code that matches swarmstate's "invalid condition" text matches ours too."""
    with pytest.raises(ValueError, match=r"^invalid condition") as theirs:
        swarmstate.HandoffGraph().add_edge("a", "b", when=expression)
    with pytest.raises(ValueError, match=r"^invalid condition") as ours:
        HandoffGraph().add_edge("a", "b", when=expression)
    assert theirs.type is ValueError
    assert "^" in str(ours.value).splitlines()[-1]


def _nested(depth: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(depth):
        value = {"k": value}
    return {"x": value}


class _Ticket:
    """An arbitrary object a caller might put in the state."""


@pytest.mark.parametrize(
    "state",
    [
        pytest.param({"x": {"k": _Ticket()}}, id="arbitrary-object"),
        pytest.param(_nested(200), id="deeper-than-128"),
    ],
)
def test_inputs_that_raise_in_swarmstate_route_here(state: dict[str, Any]) -> None:
    """The README's "raises there, works here" list: arbitrary objects, very deep values."""
    theirs = swarmstate.HandoffGraph()
    theirs.add_edge("a", "b", when="x.k == 1")
    theirs.add_edge("a", "c")
    with pytest.raises((TypeError, ValueError)):
        theirs.route("a", state)
    ours = HandoffGraph()
    ours.add_edge("a", "b", when="x.k == 1")
    ours.add_edge("a", "c")
    assert ours.route("a", state) == "c"


class _Text(str):
    """A str subclass, which conditions compare as the text it holds."""


_VALUES_TRIED: list[Any] = [None, True, False, 0, 1, 2, 3, 3.0, 1.5, -1, float("nan"), "", "a", "b"]
_VALUES_TRIED += [_Text("a"), [3], {"a": 1}, 2**60]


@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_every_comparison_alone_or_in_a_band_routes_like_swarmstate(op: str) -> None:
    """A key against each kind of constant, either side, alone or in a band, routes as
    swarmstate does."""
    constants = ["1", "3", "1.5", "-1", "'a'", "''", "null", "true", "9007199254740993"]
    for constant in constants:
        for when in (
            f"a {op} {constant}",
            f"{constant} {op} a",
            f"x.a {op} {constant}",
            f"a {op} {constant} and a > -1",
            f"a {op} {constant} and -1 < a and 3 >= a",
        ):
            ours, theirs = HandoffGraph(), swarmstate.HandoffGraph()
            for number, other in enumerate((when, "b == 'zz'", "c != c", "d > 100")):
                ours.add_edge("n", f"t{number}", when=other)
                theirs.add_edge("n", f"t{number}", when=other)
            for value in _VALUES_TRIED:
                for state in ({"a": value}, {"x": {"a": value}}, {}):
                    answered, expected = _reference_route(theirs, "n", state)
                    if answered:
                        assert ours.route("n", state) == expected, (when, state)


def test_an_or_chain_of_texts_routes_like_swarmstate() -> None:
    """``tier == 'a' or tier == 'b' or ...`` routes as swarmstate does, a str subclass too."""
    when = "tier == 'a' or tier == 'b' or tier == '' or tier == '1'"
    ours, theirs = HandoffGraph(), swarmstate.HandoffGraph()
    ours.add_edge("n", "hit", when=when)
    theirs.add_edge("n", "hit", when=when)
    for value in _VALUES_TRIED:
        state = {"tier": value}
        answered, expected = _reference_route(theirs, "n", state)
        if answered:
            assert ours.route("n", state) == expected, state
    assert ours.route("n", {"tier": _Text("b")}) == "hit"
