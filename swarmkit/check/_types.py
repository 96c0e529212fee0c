"""What a condition path can hold: kinds of JSON values read from a context_type's fields."""

from __future__ import annotations

import datetime
import enum
import types
import typing
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from swarmkit.conditions.syntax import PathKey

ANY_KIND = frozenset({"str", "number", "bool", "null", "list", "mapping"})
"""Every kind of JSON value."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Declared:
    """What a path's value can be, as far as the declarations say."""

    kinds: frozenset[str] = ANY_KIND
    """JSON kinds: ``str``, ``number``, ``bool``, ``null``, ``list``, ``mapping``."""
    values: tuple[Any, ...] | None = None
    """When the declaration lists them (``Literal[...]``, an Enum), every value it may take."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Undeclared:
    """A path step the declarations do not have."""

    name: str
    """The missing field."""
    known: tuple[str, ...]
    """The fields declared at that level (for a hint)."""
    depth: int
    """How many steps of the path were declared before it."""


UNKNOWN = Declared()
"""Nothing is known (no declaration, or one the check does not read)."""


def resolve(annotation: Any, keys: Sequence[PathKey]) -> Declared | Undeclared:
    """Follow ``keys`` from ``annotation`` (a model, or a type) to what the last step holds."""
    current = annotation
    for depth, key in enumerate(keys):
        current = _unwrap_optional(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            fields = current.model_fields
            if not isinstance(key, str) or key not in fields:
                if current.model_config.get("extra") == "allow":
                    return UNKNOWN  # the model keeps keys it does not declare
                return Undeclared(name=str(key), known=tuple(fields), depth=depth)
            current = fields[key].annotation
            continue
        step = _step(current, key)
        if step is None:
            return UNKNOWN
        current = step
    return kinds_of(current)


def kinds_of(annotation: Any) -> Declared:
    """The JSON kinds (and listed values) a value of ``annotation`` takes in its JSON form."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        values = typing.get_args(annotation)
        return Declared(kinds=frozenset(_kind(v) for v in values), values=values)
    if origin in (typing.Union, types.UnionType):
        parts = [kinds_of(arg) for arg in typing.get_args(annotation)]
        listed = [p.values for p in parts]
        kinds = frozenset().union(*(p.kinds for p in parts))
        if any(v is None for v in listed):
            return Declared(kinds=kinds)
        return Declared(kinds=kinds, values=tuple(x for v in listed for x in v or ()))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        members = tuple(member.value for member in annotation)
        return Declared(kinds=frozenset(_kind(v) for v in members), values=members)
    return Declared(kinds=_plain_kinds(origin or annotation))


def _plain_kinds(annotation: Any) -> frozenset[str]:
    if annotation is type(None) or annotation is None:
        return frozenset({"null"})
    if not isinstance(annotation, type):
        return ANY_KIND
    for base, kind in _KINDS:
        if issubclass(annotation, base):
            return frozenset({kind})
    return ANY_KIND


_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "bool"),
    (int, "number"),
    (float, "number"),
    (str, "str"),
    (datetime.date, "str"),
    (datetime.time, "str"),
    (uuid.UUID, "str"),
    (BaseModel, "mapping"),
    (Mapping, "mapping"),
    (dict, "mapping"),
    (list, "list"),
    (tuple, "list"),
    (set, "list"),
    (frozenset, "list"),
)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "str"
    if isinstance(value, tuple | list):
        return "list"
    return "mapping"


def _unwrap_optional(annotation: Any) -> Any:
    """``X | None`` as ``X`` (a missing path and null read alike); other unions stay."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _step(annotation: Any, key: PathKey) -> Any | None:
    """What one step into a container type holds; None when the check cannot tell."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, Sequence, set, frozenset) and args and isinstance(key, int):
        return args[0]
    if origin in (dict, Mapping) and len(args) == 2:
        return args[1]
    return None
