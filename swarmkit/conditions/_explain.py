"""Reports what a condition saw: the value each of its paths resolved to, and its result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from swarmkit.conditions._ast import PathKey, path_keys, path_text
from swarmkit.conditions._compile import Condition


@dataclass(frozen=True, kw_only=True)
class PathValue:
    """What one path of a condition read from the state."""

    path: str
    """The path as text, e.g. ``user.tier``."""
    value: object
    """The value found there; ``None`` when the path leads nowhere."""
    found: bool
    """Whether every step of the path existed; a missing path reads as null."""

    def __str__(self) -> str:
        """As an explanation prints it: ``user.tier='gold'``, or ``user.tier missing``."""
        return f"{self.path}={shown(self.value)}" if self.found else f"{self.path} missing"


@dataclass(frozen=True, kw_only=True)
class ConditionTrace:
    """One evaluation of a condition against a state."""

    source: str
    """The condition as written."""
    result: bool
    """Whether it held."""
    values: tuple[PathValue, ...]
    """Each distinct path it reads, with what that path resolved to."""


_SHOWN_LIMIT = 200
"""The longest value text an explanation prints."""


def trace_condition(condition: Condition, state: Mapping[str, object] | None) -> ConditionTrace:
    """Evaluate ``condition`` on ``state`` and record what each of its paths resolved to."""
    values = tuple(_resolve(state, keys) for keys in path_keys(condition.tree))
    return ConditionTrace(source=condition.source, result=condition(state), values=values)


def shown(value: object) -> str:
    """A value as an explanation prints it: its repr, cut short; never raises."""
    name = type(value).__name__  # type() is safe where value.__class__ may lie or fail
    try:
        text = repr(value)
    except ValueError:  # an int past str()'s 4,300-digit limit, perhaps inside a container
        if isinstance(value, int) and type(value) is not bool:
            return f"<int of {int.bit_length(value)} bits, too long to print>"
        return f"<{name} holding a number too long to print>"
    except RecursionError:
        return f"<{name} nested too deeply to print>"
    except Exception:
        return f"<{name} whose repr() failed>"
    if not isinstance(text, str):
        return f"<{name} whose repr() is not text>"
    return text if len(text) <= _SHOWN_LIMIT else text[: _SHOWN_LIMIT - 3] + "..."


def _resolve(state: object, keys: tuple[PathKey, ...]) -> PathValue:
    try:
        value: object = state if isinstance(state, Mapping) else {}
        for key in keys:
            found, value = _lookup(value, key)
            if not found:
                return PathValue(path=path_text(keys), value=None, found=False)
    except Exception:  # a foreign object on the path misbehaved: the path leads nowhere
        return PathValue(path=path_text(keys), value=None, found=False)
    return PathValue(path=path_text(keys), value=value, found=True)


def _lookup(container: object, key: PathKey) -> tuple[bool, object]:
    if isinstance(container, dict):
        # The base methods, so a defaultdict is read, never written to.
        if dict.__contains__(container, key):
            return True, dict.__getitem__(container, key)
        return False, None
    if isinstance(container, Mapping):
        try:
            return True, container[key]
        except Exception:  # missing, or a foreign mapping that fails: not found
            return False, None
    if not (isinstance(container, list | tuple | str) and isinstance(key, int)):
        return False, None
    if -len(container) <= key < len(container):
        return True, container[key]
    return False, None
