"""The closures that read one path and answer from a decision table's stored values.

Strings and numbers equal to a constant are found by dict; between the sorted constants of
an ordered group, by one bisect; null, true, false and NaN have one stored answer each; a
value of any other kind (a subclass, a container, an object) gets ``unknown``, so each test
decides for it. What is stored is a group's candidates, or (settled) an answer itself.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from swarmkit.conditions._ast import PathKey
from swarmkit.conditions._values import State, path_getter, step

_MISS: Final = object()
UNSETTLED: Final = object()
"""What a settled lookup returns for a value it has no stored answer for."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Kind:
    """How a group answers the values of one kind (strings or numbers)."""

    points: dict[Any, Any]
    """Constant -> candidates for a value equal to it."""
    other: Any
    """Any for a value equal to no constant, when only equality is asked."""
    bounds: list[Any] | None
    """The sorted constants, when order is asked (else None)."""
    gaps: list[Any]
    """Any for a value strictly between two bounds (or past either end): for a value
    equal to no constant, ``gaps[bisect_left(bounds, value)]``."""


def value_lookup(
    path: tuple[PathKey, ...], text: Kind, number: Kind, singles: tuple[Any, ...]
) -> Callable[[State], Any]:
    """Reads the path and returns what ``text``, ``number`` or ``singles`` (NaN, null, true,
    false, anything else) store for its value: candidates, or a settled answer."""
    get, arg = path_getter(path)
    text_points, text_other, text_bounds, text_gaps = _unpacked(text)
    number_points, number_other, number_bounds, number_gaps = _unpacked(number)
    nan, none, true, false, unknown = singles

    def lookup(state: State) -> Any:
        value = get(state, arg)
        kind = value.__class__
        if kind is str:
            found = text_points.get(value, _MISS)
            if found is not _MISS:
                return found
            if text_bounds is None:
                return text_other
            return text_gaps[bisect_left(text_bounds, value)]
        if kind is int or kind is float:
            found = number_points.get(value, _MISS)
            if found is not _MISS:
                return found
            if number_bounds is None:
                return number_other
            if value != value:  # noqa: PLR0124 - NaN, the one number unequal to itself
                return nan
            return number_gaps[bisect_left(number_bounds, value)]
        if value is None:
            return none
        if kind is bool:
            return true if value else false
        return unknown  # a subclass, a container or an object: each test decides

    return lookup


def _unpacked(kind: Kind) -> tuple[Any, Any, Any, Any]:
    return kind.points, kind.other, kind.bounds, kind.gaps


def value_chooser(
    path: tuple[PathKey, ...],
    text: Kind,
    number: Kind,
    singles: tuple[Any, ...],
    around: tuple[Callable[[Any], State], Callable[[State], object]],
) -> Callable[[Any], object]:
    """``value_lookup`` of settled answers as a whole chooser: the body repeats the lookup's
    on purpose, since on a node whose edges all test one path the call saved is a third of
    a route. A two-step path (``order.total``) is read here too, through dicts."""
    get, arg = path_getter(path[:1] if len(path) == 2 else path)
    inner = path[1] if len(path) == 2 else None
    text_points, text_other, text_bounds, text_gaps = _unpacked(text)
    number_points, number_other, number_bounds, number_gaps = _unpacked(number)
    (nan, none, true, false, _), (prepare, recover) = singles, around

    def choose(state: Any) -> object:
        if state.__class__ is not dict:
            state = prepare(state)
        try:
            value = get(state, arg)
            if inner is not None and value is not None:
                value = get(value, inner) if value.__class__ is dict else step(value, inner)
        except Exception:  # a foreign object in the state misbehaved: go carefully
            return recover(state)
        kind = value.__class__
        if kind is str:
            found = text_points.get(value, _MISS)
            if found is _MISS:
                found = text_gaps[bisect_left(text_bounds, value)] if text_bounds else text_other
        elif kind is int or kind is float:
            found = number_points.get(value, _MISS)
            if found is not _MISS:
                pass
            elif number_bounds is None:
                found = number_other
            elif value != value:  # noqa: PLR0124 - NaN, the one number unequal to itself
                found = nan
            else:
                found = number_gaps[bisect_left(number_bounds, value)]
        elif value is None:
            found = none
        elif kind is bool:
            found = true if value else false
        else:  # a subclass, a container or an object: each test decides
            return recover(state)
        return recover(state) if found is UNSETTLED else found

    return choose
