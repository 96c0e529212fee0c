"""swarm_factory: marks a function that builds a Swarm, so the `swarmkit` command may call it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from swarmkit.swarm import Swarm

_MARK = "__swarmkit_swarm_factory__"

_Factory = TypeVar("_Factory", bound="Callable[[], Swarm]")


def swarm_factory(function: _Factory) -> _Factory:
    """Mark a function with no arguments that returns a Swarm.

    ``swarmkit run app:build`` calls ``build()`` only when it carries this mark: the command
    never calls an arbitrary function it was pointed at.
    """
    setattr(function, _MARK, True)
    return function


def is_swarm_factory(value: object) -> bool:
    """Whether ``value`` was marked with [swarm_factory][swarmkit.factory.swarm_factory]."""
    return callable(value) and getattr(value, _MARK, False) is True
