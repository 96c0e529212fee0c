"""Hostile values: construction arguments of the wrong kind, and states that fight routing."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from swarmkit import (
    Agent,
    ConfigurationError,
    HandoffGraph,
    ModelSettings,
    OpenAIModel,
    RetryPolicy,
    Swarm,
    Timeouts,
)
from swarmkit.testing import ScriptedModel, text

# -- construction ------------------------------------------------------------------------------

_AGENT = Agent(name="a", instructions="Be brief.")

# Untyped aliases: these cases pass what the annotations forbid, as untyped callers do.
_Swarm: Any = Swarm
_Agent: Any = Agent
_OpenAIModel: Any = OpenAIModel
_RetryPolicy: Any = RetryPolicy
_ModelSettings: Any = ModelSettings

CONSTRUCTIONS: list[Any] = [
    pytest.param(
        lambda: _Swarm([_AGENT], "a", model=42),
        "model= must be a Model (e.g. OpenAIModel('gpt-4o')), a model name such as 'gpt-4o', "
        "or None; got int 42",
        id="swarm-model-int",
    ),
    pytest.param(
        lambda: _Swarm([_AGENT], "a", model=""),
        "model= must be a Model (e.g. OpenAIModel('gpt-4o')), a model name such as 'gpt-4o', "
        "or None; got str ''",
        id="swarm-model-empty",
    ),
    pytest.param(
        lambda: _Swarm([_Agent(name="a", instructions="x", model=42)], "a"),
        "agent 'a': model must be a Model (e.g. OpenAIModel('gpt-4o')), a model name such as "
        "'gpt-4o', or None; got int",
        id="agent-model-int",
    ),
    pytest.param(
        lambda: _Swarm([_AGENT], "a", model="gpt-4o", journal="runs.sqlite"),
        "journal= must be a Journal, e.g. SQLiteJournal('runs.sqlite') or InMemoryJournal(); "
        "got str 'runs.sqlite'",
        id="journal-path",
    ),
    pytest.param(
        lambda: _OpenAIModel("gpt-4o", client="x"),
        "client= must be an openai.AsyncOpenAI, got str; or pass base_url=/api_key= and let "
        "OpenAIModel build one",
        id="client-str",
    ),
    pytest.param(
        lambda: _OpenAIModel(42),
        "OpenAIModel needs a model name as a non-empty string, got 42; e.g. OpenAIModel('gpt-4o')",
        id="openai-model-int",
    ),
    pytest.param(
        lambda: _OpenAIModel("gpt-4o", retry=3),
        "retry= must be a RetryPolicy, got int; e.g. retry=RetryPolicy(max_attempts=3)",
        id="retry-int",
    ),
    pytest.param(
        lambda: _OpenAIModel("gpt-4o", timeout=5, timeouts=Timeouts()),
        "pass either timeout= (the whole-response deadline) or timeouts=, not both",
        id="timeout-twice",
    ),
    pytest.param(
        lambda: _OpenAIModel("gpt-4o", timeout="5"),
        "timeout must be a positive finite number of seconds, got '5'; e.g. timeout=30.0, or "
        "pass timeouts=Timeouts(...)",
        id="timeout-str",
    ),
    pytest.param(
        lambda: _RetryPolicy(max_attempts=2.5),
        "RetryPolicy(max_attempts=...) must be a whole number of attempts, at least 1; got 2.5 "
        "(e.g. max_attempts=3)",
        id="retry-attempts-float",
    ),
    pytest.param(
        lambda: _RetryPolicy(max_attempts=True),
        "RetryPolicy(max_attempts=...) must be a whole number of attempts, at least 1; got True "
        "(e.g. max_attempts=3)",
        id="retry-attempts-bool",
    ),
    pytest.param(
        lambda: _RetryPolicy(initial_backoff="1"),
        "RetryPolicy(initial_backoff=...) must be a finite number of seconds, not negative; "
        "got '1'",
        id="retry-backoff-str",
    ),
    pytest.param(
        lambda: _RetryPolicy(max_backoff=float("nan")),
        "RetryPolicy(max_backoff=...) must be a finite number of seconds, not negative; got nan",
        id="retry-backoff-nan",
    ),
    pytest.param(
        lambda: _ModelSettings(temperature="hot"),
        "ModelSettings(temperature=...) must be a number such as 0.7, or None; got 'hot'",
        id="settings-temperature",
    ),
    pytest.param(
        lambda: _ModelSettings(top_p=float("inf")),
        "ModelSettings(top_p=...) must be a number such as 0.7, or None; got inf",
        id="settings-top_p",
    ),
    pytest.param(
        lambda: _ModelSettings(max_tokens=2.5),
        "ModelSettings(max_tokens=...) must be a whole number of 1 or more; got 2.5",
        id="settings-max_tokens-float",
    ),
    pytest.param(
        lambda: _ModelSettings(max_tokens=0),
        "ModelSettings(max_tokens=...) must be a whole number of 1 or more; got 0",
        id="settings-max_tokens-zero",
    ),
    pytest.param(
        lambda: _ModelSettings(seed="7"),
        "ModelSettings(seed=...) must be a whole number; got '7'",
        id="settings-seed",
    ),
    pytest.param(
        lambda: _ModelSettings(tool_choice=3),
        "ModelSettings(tool_choice=...) must be 'auto', 'required', 'none', a tool's name or "
        "None; got 3",
        id="settings-tool_choice",
    ),
    pytest.param(
        lambda: _ModelSettings(parallel_tool_calls="yes"),
        "ModelSettings(parallel_tool_calls=...) must be True, False or None; got 'yes'",
        id="settings-parallel",
    ),
    pytest.param(
        lambda: _ModelSettings(extra_body=[("a", 1)]),
        "ModelSettings(extra_body=...) must be a dict of JSON fields with str keys; got [('a', 1)]",
        id="settings-extra_body",
    ),
    pytest.param(
        lambda: _Agent(name="a", instructions="x", model_settings={"temperature": 0}),
        "agent 'a': model_settings must be a ModelSettings, e.g. ModelSettings(temperature=0.2); "
        "got dict",
        id="agent-settings-dict",
    ),
]


@pytest.mark.parametrize(("build", "message"), CONSTRUCTIONS)
def test_a_wrong_argument_is_refused_at_construction(
    build: Callable[[], object], message: str
) -> None:
    """A ConfigurationError (a ValueError) whose message says what to pass."""
    with pytest.raises(ConfigurationError) as caught:
        build()

    assert str(caught.value).splitlines()[0] == message


async def test_a_journal_path_given_to_run_is_refused() -> None:
    """run(journal="path") is the same ConfigurationError, before any model call."""
    model = ScriptedModel(text("never"))
    swarm = Swarm([_AGENT], "a", model=model)

    with pytest.raises(ConfigurationError) as caught:
        await swarm.run("hi", journal="runs.sqlite")  # type: ignore[arg-type]

    assert str(caught.value).startswith("journal= must be a Journal, e.g. SQLiteJournal(")
    assert model.requests == []


# -- hostile states ----------------------------------------------------------------------------


class _Misbehaving(RuntimeError):
    """What every hostile value raises."""


def _boom(*args: object) -> Any:
    raise _Misbehaving("boom")


class BadInt(int):
    """An int whose every conversion and comparison raises."""

    __index__ = __int__ = __float__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _boom
    __hash__ = __repr__ = __str__ = __bool__ = __add__ = __neg__ = __mod__ = _boom


class BadFloat(float):
    """A float whose every conversion and comparison raises."""

    __float__ = __eq__ = __ne__ = __lt__ = __gt__ = __hash__ = __repr__ = __bool__ = _boom
    __add__ = __neg__ = __mod__ = _boom


class FakeStr:
    """Claims to be a str, hashes like 'billing', and raises when compared."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str

    def __hash__(self) -> int:
        return hash("billing")

    __eq__ = __repr__ = __len__ = _boom


class BrokenClass:
    """An object whose ``__class__`` raises."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise _Misbehaving("no class")

    __repr__ = _boom


class FakeDict:
    """Claims to be a dict without being one."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return dict


class Colliding:
    """A dict key hashing like ``category`` whose ``__eq__`` raises once armed."""

    armed = False

    def __hash__(self) -> int:
        return hash("category")

    def __eq__(self, other: object) -> bool:
        if Colliding.armed:
            raise _Misbehaving("collision")
        return self is other


def _nested_list(depth: int) -> object:
    value: object = []
    for _ in range(depth):
        value = [value]
    return value


def _nested_dict(depth: int) -> object:
    value: object = {}
    for _ in range(depth):
        value = {"tier": value}
    return value


HUGE = 10**5000
DEEP = 200_000

HOSTILE_VALUES: list[Any] = [
    pytest.param(BadInt(3), id="bad-int"),
    pytest.param(BadFloat(2.5), id="bad-float"),
    pytest.param(FakeStr(), id="fake-str"),
    pytest.param(BrokenClass(), id="broken-class"),
    pytest.param(FakeDict(), id="fake-dict"),
    pytest.param(HUGE, id="huge-int"),
    pytest.param(-HUGE, id="huge-negative-int"),
    pytest.param([HUGE], id="huge-int-in-list"),
    pytest.param(_nested_list(DEEP), id="deep-list"),
    pytest.param(_nested_dict(DEEP), id="deep-dict"),
    pytest.param(float("nan"), id="nan"),
]

CONDITION_SETS = [
    pytest.param(["category == 'billing'", "category == 'support'"], id="table"),
    pytest.param(["n > 2", "n == 3"], id="two-tests"),
    pytest.param(["n + 1 > 2", "-n < 0", "n % 2 == 1"], id="arithmetic"),
    pytest.param(["user.tier in ['gold', 'plat']", "'x' in items", "items[0] == 1"], id="paths"),
    pytest.param(
        ["category == 'billing'", "category == 'support'", "n >= 1 and n <= 10 or category"],
        id="mixed",
    ),
    pytest.param(["category", "not category", "category == n", "items == [1, 2]"], id="truth"),
]


def _graph(conditions: list[str]) -> HandoffGraph:
    graph = HandoffGraph(on_cycle="allow")
    for number, when in enumerate(conditions):
        graph.add_edge("a", f"t{number}", when=when)
    graph.add_edge("a", "fallback")
    return graph


def _states(value: object) -> list[object]:
    return [
        {"category": value},
        {"n": value},
        {"user": {"tier": value}},
        {"items": value},
        {"category": value, "n": value, "items": [value]},
        value,
    ]


def _check_total(graph: HandoffGraph, state: object) -> None:
    """route, route_edge, explain and str(explain) all return, and agree on the target."""
    target = graph.route("a", state)  # type: ignore[arg-type]
    edge = graph.route_edge("a", state)  # type: ignore[arg-type]
    explanation = graph.explain("a", state)  # type: ignore[arg-type]
    described = str(explanation)
    assert target in {e.target for e in graph.edge_list("a")}
    assert edge is not None and edge.target == target
    assert described.splitlines()[0] == "route from 'a':"


@pytest.mark.parametrize("conditions", CONDITION_SETS)
@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_routing_never_raises_on_a_hostile_value(conditions: list[str], value: object) -> None:
    """Every hostile value, in every place a condition reads, on every shape of router."""
    graph = _graph(conditions)
    for state in _states(value):
        _check_total(graph, state)


def test_a_colliding_key_whose_eq_raises_does_not_break_routing() -> None:
    """A key hashing like the path's key, whose __eq__ raises on the collision, reads as absent."""
    state = {Colliding(): 1, "n": 3}
    Colliding.armed = True
    try:
        for conditions in (["category == 'billing'", "category == 'x'"], ["n == 3"], ["category"]):
            _check_total(_graph(conditions), state)
    finally:
        Colliding.armed = False


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param(HUGE, "n=<int of 16610 bits, too long to print>", id="huge-int"),
        pytest.param([HUGE], "n=<list holding a number too long to print>", id="huge-in-list"),
        pytest.param(_nested_list(DEEP), "n=<list nested too deeply to print>", id="deep"),
        pytest.param(BadInt(3), "n=<BadInt whose repr() failed>", id="bad-repr"),
        pytest.param("x" * 1000, "n='" + "x" * 196 + "...", id="long"),
    ],
)
def test_an_explanation_prints_what_it_cannot_repr(value: object, shown: str) -> None:
    """str(explain(...)) names a value it cannot print instead of raising."""
    graph = _graph(["n == 1"])

    lines = str(graph.explain("a", {"n": value})).splitlines()

    assert lines[1].startswith("  1. -> 't0' when n == 1 did not match (")
    assert shown in lines[1]


def _at_depth(depth: int, work: Callable[[], object]) -> object:
    return work() if depth == 0 else _at_depth(depth - 1, work)


@pytest.mark.parametrize(
    "when",
    [
        pytest.param("(" * 90 + "n == 1" + ")" * 90, id="brackets"),
        pytest.param(" and ".join(["n == 1"] * 60), id="conjunction"),
        pytest.param("not " * 98 + "n == 1", id="negations"),
    ],
)
def test_a_deep_condition_with_little_stack_left_gives_the_right_answer(when: str) -> None:
    """However little stack the caller left, route answers as it does with a whole stack."""
    graph = HandoffGraph()
    graph.add_edge("a", "deep", when=when)
    graph.add_edge("a", "other", when="n == 2")
    expected = graph.route("a", {"n": 1})
    limit = sys.getrecursionlimit()
    answers = set()
    for depth in range(limit - 120, limit):
        try:
            answers.add(_at_depth(depth, lambda: graph.route("a", {"n": 1})))
            answers.add(_at_depth(depth, lambda: graph.explain("a", {"n": 1}).target))
        except RecursionError:
            continue  # the caller's own recursion ran out before routing began

    assert expected == "deep"
    assert answers == {expected}
