"""The public face of a compiled condition: compile_condition, Condition, trace_condition."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from types import MappingProxyType

import pytest

from swarmkit.conditions import (
    Condition,
    ConditionTrace,
    PathValue,
    compile_condition,
    trace_condition,
)
from swarmkit.conditions._ast import And, Compare, Literal, Path


def test_a_condition_keeps_its_source_exactly() -> None:
    """`source` is the text as written, spacing included."""
    assert compile_condition("  x  ==  1 ").source == "  x  ==  1 "


def test_paths_lists_each_path_read_once_in_order() -> None:
    """`paths` are the distinct state paths, in order of first appearance."""
    condition = compile_condition("b.c == 1 or a > 2 and b.c != 3 or 'x' in d['k y'][0]")
    assert condition.paths == ("b.c", "a", "d['k y'][0]")
    assert condition.roots == frozenset({"a", "b", "d"})


def test_paths_of_a_condition_without_paths_are_empty() -> None:
    """A condition on constants reads nothing from the state."""
    assert compile_condition("1 + 1 == 2").paths == ()


def test_the_tree_is_a_closed_frozen_syntax_tree() -> None:
    """The compiled tree is made of frozen nodes; `and` chains are one flat node."""
    tree = compile_condition("a == 1 and b and c").tree
    assert tree == And(
        operands=(
            Compare(op="==", left=Path(keys=("a",)), right=Literal(value=1)),
            Path(keys=("b",)),
            Path(keys=("c",)),
        )
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        tree.operands = ()  # type: ignore[misc]


def test_a_condition_is_frozen() -> None:
    """Attributes of a condition cannot be reassigned."""
    condition = compile_condition("x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        condition.source = "y"  # type: ignore[misc]


def test_conditions_compare_and_hash_by_source() -> None:
    """Two compilations of one text are equal and hash alike; different texts differ."""
    assert compile_condition("x == 1") == compile_condition("x == 1")
    assert hash(compile_condition("x == 1")) == hash(compile_condition("x == 1"))
    assert compile_condition("x == 1") != compile_condition("x==1")


def test_calling_a_condition_accepts_any_state() -> None:
    """A dict, any mapping, or None (an empty state) may be passed."""
    condition = compile_condition("x == 1")
    assert condition({"x": 1})
    assert condition(MappingProxyType({"x": 1}))
    assert not condition(None)
    assert not condition()


def test_a_condition_pickles_by_recompiling_its_source() -> None:
    """Pickling keeps only the source; loading compiles it again."""
    condition = compile_condition("user.tier == 'gold'")
    loaded = pickle.loads(pickle.dumps(condition))
    assert loaded == condition
    assert loaded({"user": {"tier": "gold"}})


def test_copies_of_a_condition_are_the_condition() -> None:
    """A condition is immutable, so copying returns it."""
    condition = compile_condition("x")
    assert copy.copy(condition) is condition
    assert copy.deepcopy(condition) is condition


def test_repr_shows_source_and_paths() -> None:
    """The repr says what the condition is and what it reads."""
    assert repr(compile_condition("a.b > 1")) == "Condition(source='a.b > 1', paths=('a.b',))"


def test_trace_reports_each_path_value_and_the_result() -> None:
    """`trace_condition` records what each path resolved to and whether it was found."""
    condition = compile_condition("user.tier == 'gold' or priority > 3 or tags[5]")
    result = trace_condition(condition, {"user": {"tier": "silver"}, "priority": 5, "tags": []})
    assert result == ConditionTrace(
        source=condition.source,
        result=True,
        values=(
            PathValue(path="user.tier", value="silver", found=True),
            PathValue(path="priority", value=5, found=True),
            PathValue(path="tags[5]", value=None, found=False),
        ),
    )


def test_trace_tells_a_null_value_from_a_missing_path() -> None:
    """A path holding null is found; a path that leads nowhere is not."""
    condition = compile_condition("a == null and b.c == null")
    values = trace_condition(condition, {"a": None, "b": 5}).values
    assert values == (
        PathValue(path="a", value=None, found=True),
        PathValue(path="b.c", value=None, found=False),
    )


def test_trace_of_a_state_that_is_not_a_mapping_finds_nothing() -> None:
    """As with evaluation, a state that is not a mapping is empty."""
    trace = trace_condition(compile_condition("x"), [1])  # type: ignore[arg-type]
    assert trace.values == (PathValue(path="x", value=None, found=False),)
    assert trace.result is False


def test_a_condition_is_a_condition_instance() -> None:
    """compile_condition returns the public Condition type."""
    assert isinstance(compile_condition("x"), Condition)
