"""HandoffGraph: seed 000's API name for name, plus priorities, explain, export and copies."""

from __future__ import annotations

import copy
import dataclasses
import enum
import json
import math
import pickle
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmkit.conditions import PathValue
from swarmkit.exceptions import ConditionSyntaxError, ConfigurationError, GraphCycleError
from swarmkit.graph import GRAPH_FORMAT, GRAPH_VERSION, Edge, HandoffGraph


def _triage() -> HandoffGraph:
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="category == 'billing'")
    graph.add_edge("triage", "support", when="category == 'support'")
    graph.add_edge("triage", "human")
    return graph


def _snapshot(graph: HandoffGraph) -> tuple[Any, ...]:
    return graph.to_dict()["nodes"], graph.to_dict()["edges"], len(graph), graph.is_dag()


# Seed 000, as its page shows it.


def test_the_seed_example_routes_by_category() -> None:
    """The triage example of seed 000 gives the results the page promises."""
    graph = _triage()
    assert graph.route("triage", {"category": "billing"}) == "billing"
    assert graph.route("triage", {"category": "support"}) == "support"
    assert graph.route("triage", {"category": "other"}) == "human"


def test_the_seed_introspection_calls() -> None:
    """nodes, edges, has_node, in, len and is_dag answer as the page shows."""
    graph = _triage()
    assert graph.nodes() == ["billing", "human", "support", "triage"]
    assert graph.edges("triage") == [
        ("billing", "category == 'billing'"),
        ("support", "category == 'support'"),
        ("human", None),
    ]
    assert graph.has_node("triage")
    assert "triage" in graph
    assert "nobody" not in graph
    assert len(graph) == 4
    assert graph.is_dag()


def test_first_true_edge_wins_in_insertion_order() -> None:
    """Edges are tried in the order added; the first whose condition holds is taken."""
    graph = HandoffGraph()
    graph.add_edge("a", "first", when="x > 1")
    graph.add_edge("a", "second", when="x > 0")
    assert graph.route("a", {"x": 2}) == "first"
    assert graph.route("a", {"x": 1}) == "second"


def test_no_matching_edge_routes_to_none() -> None:
    """When no condition holds and there is no default, route returns None."""
    graph = HandoffGraph()
    graph.add_edge("a", "b", when="x == 1")
    assert graph.route("a", {"x": 2}) is None
    assert graph.route("a") is None


def test_edges_after_an_unconditional_edge_are_kept_but_never_taken() -> None:
    """An edge without `when` always matches, so later edges only show in `edges`."""
    graph = HandoffGraph()
    graph.add_edge("a", "default")
    graph.add_edge("a", "never", when="true")
    assert graph.route("a", {}) == "default"
    assert graph.edges("a") == [("default", None), ("never", "true")]


def test_route_from_a_node_without_edges_or_unknown_is_none() -> None:
    """Routing from a leaf or from a name never added returns None; edges() is empty."""
    graph = _triage()
    assert graph.route("billing", {}) is None
    assert graph.route("nobody", {"category": "billing"}) is None
    assert graph.edges("nobody") == []


def test_add_node_is_idempotent_and_edges_add_their_nodes() -> None:
    """add_node adds once; add_edge adds both of its ends."""
    graph = HandoffGraph()
    graph.add_node("solo")
    graph.add_node("solo")
    graph.add_edge("a", "b")
    assert graph.nodes() == ["a", "b", "solo"]
    assert graph.edges("solo") == []


def test_nodes_are_sorted_by_code_point() -> None:
    """nodes() sorts as Python sorts strings, which is the reference's order too."""
    graph = HandoffGraph()
    for name in ["b", "B", "a", "é", "Z", "aa", "_", ""]:
        graph.add_node(name)
    assert graph.nodes() == ["", "B", "Z", "_", "a", "aa", "b", "é"]


def test_duplicate_edges_are_kept() -> None:
    """Adding the same edge twice keeps both, as the reference does."""
    graph = HandoffGraph()
    graph.add_edge("a", "b")
    graph.add_edge("a", "b")
    graph.add_edge("a", "b", when="x")
    assert graph.edges("a") == [("b", None), ("b", None), ("b", "x")]


def test_edges_keep_the_condition_text_as_written() -> None:
    """The `when` text is stored verbatim."""
    graph = HandoffGraph()
    graph.add_edge("a", "b", when="  x  ==  1 ")
    assert graph.edges("a") == [("b", "  x  ==  1 ")]


def test_keyword_names_match_the_seed() -> None:
    """`from_node`, `to`, `when`, `name`, `node`, `state` and `on_cycle` are keywords."""
    graph = HandoffGraph(on_cycle="allow")
    graph.add_edge(from_node="a", to="b", when="x")
    graph.add_node(name="c")
    assert graph.route(node="a", state={"x": 1}) == "b"
    assert graph.edges(node="a") == [("b", "x")]
    assert graph.has_node(node="c")


def test_repr_summarises_the_graph() -> None:
    """The repr counts nodes and edges and names the cycle policy."""
    assert repr(_triage()) == "HandoffGraph(nodes=4, edges=3, on_cycle='error')"


# Argument checking.

_NOT_STR: list[Any] = [1, None, b"a", ["a"]]
_CALLS: list[tuple[str, Callable[[HandoffGraph, Any], object]]] = [
    ("from_node", lambda graph, bad: graph.add_edge(bad, "b")),
    ("to", lambda graph, bad: graph.add_edge("a", bad)),
    ("name", lambda graph, bad: graph.add_node(bad)),
    ("node", lambda graph, bad: graph.route(bad)),
    ("node", lambda graph, bad: graph.route_edge(bad)),
    ("node", lambda graph, bad: graph.edges(bad)),
    ("node", lambda graph, bad: graph.has_node(bad)),
    ("node", lambda graph, bad: bad in graph),
    ("node", lambda graph, bad: graph.explain(bad)),
]


@pytest.mark.parametrize("bad", _NOT_STR, ids=repr)
@pytest.mark.parametrize(("argument", "call"), _CALLS, ids=[name for name, _ in _CALLS])
def test_names_that_are_not_strings_are_type_errors(
    argument: str, call: Callable[[HandoffGraph, Any], object], bad: Any
) -> None:
    """Every method takes node names as str only, raising TypeError as the reference does."""
    graph = _triage()
    with pytest.raises(TypeError, match=argument):
        call(graph, bad)
    assert graph.to_dict() == _triage().to_dict()


@pytest.mark.parametrize("bad", [1, b"x", ["x"]], ids=repr)
def test_a_when_that_is_not_a_string_is_a_type_error(bad: Any) -> None:
    """`when` is a str or None."""
    with pytest.raises(TypeError, match="when"):
        HandoffGraph().add_edge("a", "b", when=bad)


@pytest.mark.parametrize("bad", [True, 1.5, "1", None], ids=repr)
def test_a_priority_that_is_not_an_int_is_a_type_error(bad: Any) -> None:
    """`priority` is an int (not a bool)."""
    with pytest.raises(TypeError, match="priority"):
        HandoffGraph().add_edge("a", "b", priority=bad)


def test_on_cycle_accepts_only_error_or_allow() -> None:
    """A wrong value is a ConfigurationError (a ValueError); a non-str is a TypeError."""
    assert HandoffGraph().on_cycle == "error"
    assert HandoffGraph("allow").on_cycle == "allow"
    with pytest.raises(ConfigurationError, match="'error' or 'allow'"):
        HandoffGraph(on_cycle="ALLOW")
    with pytest.raises(ValueError, match="on_cycle"):
        HandoffGraph(on_cycle="bogus")
    with pytest.raises(TypeError, match="on_cycle"):
        HandoffGraph(on_cycle=None)  # type: ignore[arg-type]


def test_on_cycle_is_read_only() -> None:
    """The policy is fixed at construction."""
    graph = HandoffGraph()
    with pytest.raises(AttributeError):
        graph.on_cycle = "allow"  # type: ignore[misc]


# Cycles and rejected edges.


def test_an_edge_closing_a_cycle_is_rejected_and_named() -> None:
    """With on_cycle='error' the edge is refused with the whole cycle in the error."""
    graph = HandoffGraph()
    graph.add_edge("a", "b")
    graph.add_edge("b", "c")
    before = _snapshot(graph)
    with pytest.raises(GraphCycleError) as caught:
        graph.add_edge("c", "a")
    assert caught.value.cycle == ("c", "a", "b", "c")
    assert "'c' -> 'a' -> 'b' -> 'c'" in str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert _snapshot(graph) == before


def test_a_self_loop_is_a_cycle() -> None:
    """An edge from a node to itself closes a cycle of one."""
    graph = HandoffGraph()
    with pytest.raises(GraphCycleError) as caught:
        graph.add_edge("a", "a")
    assert caught.value.cycle == ("a", "a")
    assert graph.nodes() == []


def test_a_condition_that_does_not_parse_changes_nothing() -> None:
    """A syntax error is raised before the edge or its nodes are added."""
    graph = _triage()
    before = _snapshot(graph)
    with pytest.raises(ConditionSyntaxError):
        graph.add_edge("new", "other", when="x ==")
    with pytest.raises(ConditionSyntaxError):
        graph.add_edge("human", "triage", when="((")  # a syntax error wins over a cycle
    assert _snapshot(graph) == before
    assert "new" not in graph


def test_cycles_are_allowed_when_asked_for() -> None:
    """With on_cycle='allow' loops are accepted and is_dag turns false."""
    graph = HandoffGraph(on_cycle="allow")
    graph.add_edge("a", "b")
    assert graph.is_dag()
    graph.add_edge("b", "a", when="retry")
    assert not graph.is_dag()
    assert graph.route("b", {"retry": True}) == "a"


def test_a_self_loop_when_allowed_is_not_a_dag() -> None:
    """A self-loop is the smallest cycle."""
    graph = HandoffGraph(on_cycle="allow")
    graph.add_edge("a", "a")
    assert not graph.is_dag()
    assert graph.edges("a") == [("a", None)]


def test_diamonds_are_not_cycles() -> None:
    """Two paths to the same node are fine under on_cycle='error'."""
    graph = HandoffGraph()
    for source, target in [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("a", "d")]:
        graph.add_edge(source, target)
    assert graph.is_dag()


# Priorities.


def test_higher_priority_edges_are_tried_first() -> None:
    """Priority orders edges, highest first; `edges` lists them in that order."""
    graph = HandoffGraph()
    graph.add_edge("a", "low", when="x", priority=-1)
    graph.add_edge("a", "normal", when="x")
    graph.add_edge("a", "high", when="x", priority=10)
    graph.add_edge("a", "also-high", when="x", priority=10)
    assert graph.route("a", {"x": 1}) == "high"
    assert [target for target, _ in graph.edges("a")] == ["high", "also-high", "normal", "low"]


def test_default_priorities_keep_insertion_order() -> None:
    """With every priority 0, the order is seed 000's insertion order."""
    graph = HandoffGraph()
    for target in ["c", "a", "b"]:
        graph.add_edge("n", target, when=f"k == '{target}'")
    assert [target for target, _ in graph.edges("n")] == ["c", "a", "b"]


def test_a_prioritised_fallback_placed_last() -> None:
    """Seed 004's pattern: conditional edges at priority 10 beat a default at 0."""
    graph = HandoffGraph()
    graph.add_edge("analyzer", "thorough", priority=0)
    graph.add_edge("analyzer", "fast", when="output.complexity < 5", priority=10)
    assert graph.route("analyzer", {"output": {"complexity": 2}}) == "fast"
    assert graph.route("analyzer", {"output": {"complexity": 9}}) == "thorough"


# The fired edge and explanations.


def test_route_edge_returns_the_edge_that_fired() -> None:
    """route_edge gives the whole edge, so the caller can record which rule decided."""
    graph = _triage()
    edge = graph.route_edge("triage", {"category": "support"})
    assert edge == Edge(source="triage", target="support", when="category == 'support'")
    assert graph.route_edge("triage", {}) == Edge(source="triage", target="human")
    assert graph.route_edge("billing", {}) is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        edge.target = "x"  # type: ignore[misc]


def test_explain_lists_each_edge_tried_with_what_it_saw() -> None:
    """explain says which edges failed, with their path values, and which one fired."""
    explanation = _triage().explain("triage", {"category": "support"})
    assert [trial.edge.target for trial in explanation.trials] == ["billing", "support"]
    assert [trial.matched for trial in explanation.trials] == [False, True]
    assert explanation.trials[0].values == (
        PathValue(path="category", value="support", found=True),
    )
    assert explanation.fired == Edge(
        source="triage", target="support", when="category == 'support'"
    )
    assert explanation.target == "support"


def test_explain_when_nothing_matches() -> None:
    """With no match every edge is tried and nothing fired."""
    graph = HandoffGraph()
    graph.add_edge("a", "b", when="x.y > 1")
    explanation = graph.explain("a", {})
    assert explanation.fired is None
    assert explanation.target is None
    assert explanation.trials[0].values == (PathValue(path="x.y", value=None, found=False),)


def test_explain_of_an_unconditional_edge() -> None:
    """An edge without a condition matches with nothing to report."""
    explanation = _triage().explain("triage", {"category": "x"})
    assert explanation.trials[-1].edge.when is None
    assert explanation.trials[-1].matched
    assert explanation.trials[-1].values == ()


def test_explain_reads_as_text() -> None:
    """str(explanation) is a short human-readable trace."""
    text = str(_triage().explain("triage", {"category": "support"}))
    assert text == (
        "route from 'triage':\n"
        "  1. -> 'billing' when category == 'billing' did not match (category='support')\n"
        "  2. -> 'support' when category == 'support' matched (category='support')\n"
        "  -> 'support'"
    )


def test_explain_agrees_with_route() -> None:
    """For any state, explain's target is route's answer."""
    graph = _triage()
    graph.add_edge("triage", "vip", when="user.tier == 'gold'", priority=1)
    states: list[dict[str, Any]] = [{}, {"category": "billing"}, {"user": {"tier": "gold"}}]
    for state in states:
        assert graph.explain("triage", state).target == graph.route("triage", state)


# Export, import and drawings.


def test_to_dict_is_json_safe_and_round_trips() -> None:
    """to_dict survives JSON and from_dict rebuilds an identical graph."""
    graph = _triage()
    graph.add_node("lonely")
    graph.add_edge("billing", "refunds", when="amount > 100", priority=2)
    data = json.loads(json.dumps(graph.to_dict()))
    assert data["format"] == GRAPH_FORMAT
    assert data["version"] == GRAPH_VERSION
    rebuilt = HandoffGraph.from_dict(data)
    assert rebuilt.to_dict() == graph.to_dict()
    assert rebuilt.route("billing", {"amount": 101}) == "refunds"
    assert "lonely" in rebuilt


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"format": "other", "version": 1},
        {"format": GRAPH_FORMAT, "version": 2},
        {"format": GRAPH_FORMAT, "version": True},
        {"format": GRAPH_FORMAT, "version": 1, "on_cycle": 1},
        {"format": GRAPH_FORMAT, "version": 1, "nodes": "abc"},
        {"format": GRAPH_FORMAT, "version": 1, "nodes": [1]},
        {"format": GRAPH_FORMAT, "version": 1, "edges": [["a", "b"]]},
        {"format": GRAPH_FORMAT, "version": 1, "edges": [{"source": "a"}]},
        {
            "format": GRAPH_FORMAT,
            "version": 1,
            "edges": [{"source": "a", "target": "b", "when": 1}],
        },
        {
            "format": GRAPH_FORMAT,
            "version": 1,
            "edges": [{"source": "a", "target": "b", "priority": "high"}],
        },
    ],
    ids=lambda data: json.dumps(data)[:40],
)
def test_from_dict_rejects_malformed_data(data: Any) -> None:
    """Data that is not a graph of this version raises a ConfigurationError saying why."""
    with pytest.raises(ConfigurationError):
        HandoffGraph.from_dict(data)


def test_from_dict_checks_conditions_and_cycles() -> None:
    """Imported edges are checked as add_edge checks them."""
    base = {"format": GRAPH_FORMAT, "version": 1}
    with pytest.raises(ConditionSyntaxError):
        HandoffGraph.from_dict({**base, "edges": [{"source": "a", "target": "b", "when": "=="}]})
    looped = [{"source": "a", "target": "b"}, {"source": "b", "target": "a"}]
    with pytest.raises(GraphCycleError):
        HandoffGraph.from_dict({**base, "edges": looped})
    assert not HandoffGraph.from_dict({**base, "on_cycle": "allow", "edges": looped}).is_dag()


def test_to_mermaid_labels_edges_with_escaped_conditions() -> None:
    """Mermaid output quotes names and conditions, escaping quotes and markup."""
    graph = HandoffGraph()
    graph.add_edge("a", 'say "hi"', when='x == "a" and y > 1')
    graph.add_edge("a", "b", priority=2)
    assert graph.to_mermaid() == (
        "flowchart TD\n"
        '    n0["a"]\n'
        '    n1["b"]\n'
        '    n2["say #34;hi#34;"]\n'
        '    n0 -->|"(priority 2) always"| n1\n'
        '    n0 -->|"x == #34;a#34; and y #62; 1"| n2\n'
    )


def test_to_dot_labels_edges_with_escaped_conditions() -> None:
    """DOT output escapes quotes, backslashes and newlines in names and labels."""
    graph = HandoffGraph()
    graph.add_edge("a", 'b"\\', when="x == 'q\"'\nor y")
    graph.add_edge("a", "c")
    assert graph.to_dot() == (
        "digraph HandoffGraph {\n"
        '    "a";\n'
        '    "b\\"\\\\";\n'
        '    "c";\n'
        '    "a" -> "b\\"\\\\" [label="x == \'q\\"\'\\nor y"];\n'
        '    "a" -> "c";\n'
        "}\n"
    )


def test_copies_and_pickles_are_independent_and_equal() -> None:
    """copy, deepcopy and pickle give equal graphs that do not share later edits."""
    graph = _triage()
    for clone in (copy.copy(graph), copy.deepcopy(graph), pickle.loads(pickle.dumps(graph))):
        assert clone.to_dict() == graph.to_dict()
        assert clone.route("triage", {"category": "billing"}) == "billing"
        clone.add_edge("triage", "vip", when="vip", priority=5)
        assert clone.route("triage", {"vip": 1}) == "vip"
        assert graph.route("triage", {"vip": 1}) == "human"


def test_a_copy_keeps_the_cycle_policy() -> None:
    """Copies refuse or allow cycles exactly as the original does."""
    graph = HandoffGraph()
    graph.add_edge("a", "b")
    with pytest.raises(GraphCycleError):
        copy.copy(graph).add_edge("b", "a")
    allowing = HandoffGraph(on_cycle="allow")
    pickle.loads(pickle.dumps(allowing)).add_edge("x", "x")


# States.


class _ReadOnly(Mapping[str, object]):
    """A minimal custom mapping."""

    def __init__(self, data: dict[str, object]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> object:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


@pytest.mark.parametrize(
    "state",
    [
        {"category": "billing"},
        MappingProxyType({"category": "billing"}),
        OrderedDict(category="billing"),
        defaultdict(str, category="billing"),
        type("Sub", (dict,), {})(category="billing"),
        _ReadOnly({"category": "billing"}),
    ],
    ids=lambda state: type(state).__name__,
)
def test_any_mapping_is_a_state(state: Mapping[str, object]) -> None:
    """dicts, proxies, subclasses and custom mappings all route the same way."""
    assert _triage().route("triage", state) == "billing"
    assert _triage().route_edge("triage", state) is not None
    assert _triage().explain("triage", state).target == "billing"


@pytest.mark.parametrize("state", [None, [1], "category", 7], ids=repr)
def test_a_state_that_is_not_a_mapping_is_empty(state: Any) -> None:
    """None, and anything else that is not a mapping, routes as an empty state."""
    assert _triage().route("triage", state) == "human"


class _Raising:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no")

    def __hash__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        raise RuntimeError("no")


def test_a_value_that_raises_makes_only_its_own_edge_false() -> None:
    """Route carries on past an edge whose condition tripped over a hostile value."""
    graph = HandoffGraph()
    graph.add_edge("a", "first", when="x == 'q'")
    graph.add_edge("a", "second", when="x")
    graph.add_edge("a", "third", when="y == 1")
    raising = _Raising()
    assert graph.route("a", {"x": raising, "y": 1}) == "third"
    assert graph.route("a", {"x": [raising], "y": 2}) == "second"


_ODD_KEYS = st.integers() | st.floats() | st.booleans() | st.none() | st.tuples(st.integers())
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=5)
    | st.binary(max_size=3)
    | st.decimals(allow_nan=False)
    | st.builds(object)
    | st.builds(_Raising)
    | st.sampled_from([len, type, Decimal("NaN"), 10**400]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.tuples(children, children)
        | st.frozensets(st.integers() | st.text(max_size=2), max_size=3)
        | st.dictionaries(st.sampled_from(["x", "y", "z", "tier"]), children, max_size=3)
        | st.dictionaries(_ODD_KEYS, children, max_size=2)
        | st.dictionaries(st.text(max_size=2), children, max_size=2).map(MappingProxyType)
    ),
    max_leaves=8,
)
_STATES = st.dictionaries(st.sampled_from(["x", "y", "z", "tier"]), _VALUES, max_size=4) | _VALUES


def _robust_graph() -> HandoffGraph:
    graph = HandoffGraph()
    conditions = [
        "x == 'gold'",
        "x != 1",
        "x.y > 2 or 'a' in z",
        "x in y and not z",
        "tier in ['a', 'b'] or x[0] == y",
        "x + 1 > y * 2",
        "x < 'm' and y >= 0.5",
        "x.y.z == null",
        "1 in x",
        "x == y",
    ]
    for number, when in enumerate(conditions):
        graph.add_edge("n", f"t{number}", when=when)
    graph.add_edge("m", "t", when="x == 'a'")
    graph.add_edge("m", "u", when="x == 'b'")
    return graph


_ROBUST = _robust_graph()


@settings(max_examples=400, deadline=None)
@given(_STATES)
def test_route_never_raises_for_any_state(state: Any) -> None:
    """Whatever the state holds, route answers with a target or None."""
    for node in ("n", "m", "missing"):
        assert _ROBUST.route(node, state) in {None, "t", "u", *[f"t{i}" for i in range(10)]}
        assert _ROBUST.explain(node, state).target == _ROBUST.route(node, state)


_FAN_CONSTANTS = st.sampled_from(["'a'", "'b'", "''", "1", "1.0", "-0.0", "0", "2.5", "true"])
_FAN_VALUES = st.sampled_from(
    ["a", "b", "", 1, 1.0, 0, -0.0, 2.5, True, False, None, math.nan, 10**400, [1], "1"]
) | st.builds(str, st.sampled_from(["a", "b"]))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["k", "k.j", "other"]), _FAN_CONSTANTS), max_size=8),
    st.booleans(),
    _FAN_VALUES,
)
def test_a_fan_of_equalities_routes_as_if_tried_one_by_one(
    edges: list[tuple[str, str]], fallback: bool, value: Any
) -> None:
    """Runs of `path == constant` are answered by a lookup that agrees with trying each edge."""
    graph = HandoffGraph()
    for number, (path, constant) in enumerate(edges):
        graph.add_edge("n", f"t{number}", when=f"{path} == {constant}")
    if fallback:
        graph.add_edge("n", "fallback")
    for state in ({"k": value}, {"k": {"j": value}}, {"other": value, "k": "a"}):
        assert graph.route("n", state) == graph.explain("n", state).target, state


class _Tier(enum.StrEnum):
    GOLD = "gold"


class _Level(enum.IntEnum):
    HIGH = 3


def test_a_fan_of_equalities_reads_subclasses_of_str_and_int() -> None:
    """StrEnum and IntEnum values match their constants through the lookup too."""
    graph = HandoffGraph()
    for tier in ["silver", "gold"]:
        graph.add_edge("by-tier", tier, when=f"tier == '{tier}'")
    for level in [1, 3]:
        graph.add_edge("by-level", f"level{level}", when=f"level == {level}")
    assert graph.route("by-tier", {"tier": _Tier.GOLD}) == "gold"
    assert graph.route("by-level", {"level": _Level.HIGH}) == "level3"
    assert graph.route("by-level", {"level": True}) is None


# LLM edges: handoffs the model decides, declared in the graph.


def test_an_llm_edge_is_listed_apart_and_never_routed() -> None:
    """route() and edges() see rules only; llm_edges() lists the model's edges in order."""
    graph = HandoffGraph()
    graph.add_edge("triage", "tech", decided_by="llm")
    graph.add_edge("triage", "billing", decided_by="llm")
    graph.add_edge("triage", "tech", decided_by="llm")  # the same edge twice is one edge
    graph.add_edge("tech", "triage", decided_by="llm")  # closes no cycle: not routed

    assert graph.route("triage", {}) is None
    assert graph.edges("triage") == []
    assert [(e.target, e.decided_by) for e in graph.llm_edges("triage")] == [
        ("tech", "llm"),
        ("billing", "llm"),
    ]
    assert graph.nodes() == ["billing", "tech", "triage"]
    assert graph.is_dag()


def test_an_llm_edge_takes_no_condition_priority_or_mapping() -> None:
    """A condition belongs to a rule: asking for one on an LLM edge says what to fix."""
    graph = HandoffGraph()
    with pytest.raises(ConfigurationError, match="takes no when="):
        graph.add_edge("a", "b", when="x == 1", decided_by="llm")
    with pytest.raises(ConfigurationError, match="takes no when="):
        graph.add_edge("a", "b", priority=2, decided_by="llm")
    with pytest.raises(ConfigurationError, match="decided_by must be 'rule' or 'llm'"):
        graph.add_edge("a", "b", decided_by="model")
    assert len(graph) == 0


def test_llm_edges_survive_export_copy_and_pickle_and_are_drawn_dotted() -> None:
    """to_dict keeps them under their own key (version unchanged); copies keep them too."""
    graph = HandoffGraph()
    graph.add_edge("a", "b", when="x == 1")
    graph.add_edge("a", "c", decided_by="llm")
    data = json.loads(json.dumps(graph.to_dict()))

    assert data["version"] == GRAPH_VERSION
    assert data["llm_edges"] == [{"source": "a", "target": "c"}]
    assert all("llm" not in str(edge) for edge in data["edges"])
    for again in (
        HandoffGraph.from_dict(data),
        copy.copy(graph),
        pickle.loads(pickle.dumps(graph)),
    ):
        assert again.llm_edges() == graph.llm_edges()
        assert again.to_dict() == graph.to_dict()
    assert '-.->|"llm"|' in graph.to_mermaid()
    assert '"a" -> "c" [label="llm", style=dotted];' in graph.to_dot()


def test_explain_lists_the_llm_edges_with_their_descriptions() -> None:
    """explain() shows the rules tried, then the handoffs left to the model; to_dict keeps an
    LLM edge's description; a rule edge takes none."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", "category == 'billing'")
    graph.add_edge("triage", "tech", decided_by="llm", description="Crashes and bugs.")

    explained = graph.explain("triage", {"category": "other"})

    assert [edge.target for edge in explained.llm_edges] == ["tech"]
    assert str(explained).splitlines()[-2:] == [
        "  no edge matched",
        "  the model may hand off to 'tech' (LLM edge): Crashes and bugs.",
    ]
    again = HandoffGraph.from_dict(graph.to_dict())
    assert again.llm_edges() == graph.llm_edges()
    assert again.llm_edges()[0].description == "Crashes and bugs."
    with pytest.raises(ConfigurationError, match="takes no description="):
        graph.add_edge("triage", "sales", "category == 'sales'", description="Sales.")
    with pytest.raises(ConfigurationError, match="declared already"):
        graph.add_edge("triage", "tech", decided_by="llm", description="Other words.")
