"""Findings about one condition: paths nothing declares, and comparisons that never hold."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pydantic import BaseModel

from swarmkit.check._finding import Finding
from swarmkit.check._types import UNKNOWN, Declared, Undeclared, kinds_of, resolve
from swarmkit.conditions.syntax import Compare, Expr, Literal, Path, PathKey, children, path_text
from swarmkit.conditions.values import contains, equals

RESERVED = "swarm"
_ORDERED = frozenset({"number", "str"})
_CONTAINERS = frozenset({"str", "list", "mapping"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Scope:
    """What conditions of one swarm are checked against."""

    context_type: type[BaseModel] | None
    """The swarm's declared context, if any."""
    facts: Mapping[str, Declared]
    """The ``swarm.*`` facts."""


def path_findings(tree: Expr, scope: Scope, where: str) -> Iterator[Finding]:
    """A ``swarm.*`` key that does not exist; a context path the context_type lacks."""
    for node in _nodes(tree):
        if not isinstance(node, Path):
            continue
        resolved = _resolve(node, scope)
        if isinstance(resolved, Undeclared):
            yield _undeclared(node, resolved, scope, where)


def comparison_findings(tree: Expr, scope: Scope, where: str) -> Iterator[Finding]:
    """Comparisons that can never hold for the declared types."""
    for node in _nodes(tree):
        if isinstance(node, Compare):
            why = _never_holds(node, scope)
            if why is not None:
                yield Finding(
                    code="impossible_comparison",
                    severity="error",
                    where=where,
                    message=f"{_show(node)} can never hold: {why}",
                    fix="compare with a value of the declared type, or fix the declaration",
                )


def _nodes(tree: Expr) -> Iterator[Expr]:
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(children(node))


def _resolve(node: Path, scope: Scope) -> Declared | Undeclared:
    keys = node.keys
    if keys[0] == RESERVED:
        if len(keys) == 1:
            return UNKNOWN
        name = keys[1]
        if not isinstance(name, str) or name not in scope.facts:
            return Undeclared(name=str(name), known=tuple(scope.facts), depth=1)
        return scope.facts[name] if len(keys) == 2 else UNKNOWN
    if scope.context_type is None:
        return UNKNOWN
    return _resolve_declared(scope.context_type, keys)


@functools.lru_cache(maxsize=4096)
def _resolve_declared(
    context_type: type[BaseModel], keys: tuple[PathKey, ...]
) -> Declared | Undeclared:
    # Many conditions read the same few paths; pydantic's field tables are slow to walk.
    return resolve(context_type, keys)


def _undeclared(node: Path, missing: Undeclared, scope: Scope, where: str) -> Finding:
    near = difflib.get_close_matches(missing.name, missing.known, n=1)
    hint = f"did you mean {near[0]!r}? " if near else ""
    text = path_text(node.keys)
    if node.keys[0] == RESERVED:
        return Finding(
            code="unknown_swarm_key",
            severity="error",
            where=where,
            message=f"{text!r} reads a swarm fact that does not exist (always null)",
            fix=f"{hint}the swarm facts are {', '.join(sorted(missing.known))}",
        )
    owner = scope.context_type.__name__ if scope.context_type else "the context"
    return Finding(
        code="undeclared_path",
        severity="warning",
        where=where,
        message=f"{text!r}: context_type {owner} declares no field {missing.name!r}",
        fix=f"{hint}declare the field, or correct the path (a tool's update may add it)",
    )


def _declared(node: Expr, scope: Scope) -> Declared:
    if isinstance(node, Literal):
        value = node.value
        return Declared(kinds=kinds_of(type(value)).kinds, values=(value,))
    if isinstance(node, Path):
        resolved = _resolve(node, scope)
        return resolved if isinstance(resolved, Declared) else UNKNOWN
    return UNKNOWN


def _never_holds(node: Compare, scope: Scope) -> str | None:
    left, right = _declared(node.left, scope), _declared(node.right, scope)
    if left is UNKNOWN and right is UNKNOWN:
        return None
    match node.op:
        case "==":
            return _never_equal(left, right)
        case "<" | "<=" | ">" | ">=":
            if not (left.kinds & right.kinds & _ORDERED):
                return f"only two numbers or two strings are ordered ({_kinds(left, right)})"
        case "in":
            return _never_in(left, right)
    return None


def _never_equal(left: Declared, right: Declared) -> str | None:
    if (None,) in (left.values, right.values):
        return None  # a path through an optional field, or a missing one, reads as null
    if not left.kinds & right.kinds:
        return f"the two sides never have the same type ({_kinds(left, right)})"
    listed = left.values is not None and right.values is not None
    if listed and not any(equals(a, b) for a in left.values or () for b in right.values or ()):
        return f"the declared values are {_values(left, right)}"
    return None


def _never_in(needle: Declared, haystack: Declared) -> str | None:
    if not haystack.kinds & _CONTAINERS:
        return f"'in' needs a string, a list or a mapping on its right ({_kinds(needle, haystack)})"
    if haystack.kinds == {"str"} and "str" not in needle.kinds:
        return "only a string is ever in a string"
    single = haystack.values[0] if haystack.values and len(haystack.values) == 1 else None
    needles = needle.values if single is not None else None
    if needles is not None and not any(contains(value, single) for value in needles):
        return f"the declared values are {_values(needle, haystack)}"
    return None


def _kinds(left: Declared, right: Declared) -> str:
    def show(declared: Declared) -> str:
        return "any" if declared is UNKNOWN else " or ".join(sorted(declared.kinds))

    return f"{show(left)} against {show(right)}"


def _values(left: Declared, right: Declared) -> str:
    def show(declared: Declared) -> str:
        return ", ".join(repr(v) for v in declared.values or ())

    return f"{show(left)} against {show(right)}"


def _show(node: Compare) -> str:
    def side(expr: Expr) -> str:
        if isinstance(expr, Path):
            return path_text(expr.keys)
        if isinstance(expr, Literal):
            return repr(expr.value)
        return "(...)"

    return f"'{side(node.left)} {node.op} {side(node.right)}'"
