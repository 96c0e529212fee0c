"""The closed syntax tree of a condition: frozen nodes, one per construct of the language."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal as TypingLiteral
from typing import TypeAlias, assert_never

from swarmkit.conditions._lexer import is_name

Constant: TypeAlias = "bool | int | float | str | tuple[Constant, ...] | None"
"""A constant a literal can hold; list literals of constants fold to tuples of these."""

PathKey: TypeAlias = str | int
"""A key of a path step: a name (``.name``, ``["name"]``) or a list position (``[0]``)."""

CompareOp = TypingLiteral["==", "!=", "<", "<=", ">", ">=", "in", "not in"]
ArithmeticOp = TypingLiteral["+", "-", "*", "/", "%"]

# The operator that means the same with its operands swapped; ``in`` and ``not in`` have none.
_MIRRORED: dict[CompareOp, CompareOp] = {
    "==": "==",
    "!=": "!=",
    "<": ">",
    "<=": ">=",
    ">": "<",
    ">=": "<=",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Literal:
    """A constant: a string, number, ``true``/``false``, ``null`` or a list of constants."""

    kind: TypingLiteral["literal"] = "literal"
    value: Constant
    """The constant itself; a list literal of constants is held as a tuple."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Path:
    """A read from the state: ``user.tier``, ``items[0]``, ``output["key"]``."""

    kind: TypingLiteral["path"] = "path"
    keys: tuple[PathKey, ...]
    """The steps from the state down; the first is always a name."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ListDisplay:
    """A list literal with at least one element that is not a constant: ``[a, b]``."""

    kind: TypingLiteral["list"] = "list"
    items: tuple[Expr, ...]
    """The elements, in order."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Index:
    """Indexing by a computed key: ``items[i]``, ``(a or b)["k"]``."""

    kind: TypingLiteral["index"] = "index"
    target: Expr
    """What is indexed."""
    key: Expr
    """The key or position."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Negate:
    """Unary minus on something that is not a number literal: ``-x``."""

    kind: TypingLiteral["negate"] = "negate"
    operand: Expr
    """The value negated."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Arithmetic:
    """A left-to-right chain of one precedence level: ``a + b - c`` or ``a * b % c``."""

    kind: TypingLiteral["arithmetic"] = "arithmetic"
    operands: tuple[Expr, ...]
    """Two or more operands."""
    operators: tuple[ArithmeticOp, ...]
    """One operator between each pair of neighbouring operands."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Compare:
    """One comparison; comparisons never chain."""

    kind: TypingLiteral["compare"] = "compare"
    op: CompareOp
    """The comparison operator."""
    left: Expr
    """The left operand."""
    right: Expr
    """The right operand."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Not:
    """Boolean negation of the operand's truthiness."""

    kind: TypingLiteral["not"] = "not"
    operand: Expr
    """The negated expression."""


@dataclass(frozen=True, kw_only=True, slots=True)
class And:
    """True when every operand is truthy; a whole chain is one flat node."""

    kind: TypingLiteral["and"] = "and"
    operands: tuple[Expr, ...]
    """Two or more operands, evaluated left to right until one is falsy."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Or:
    """True when any operand is truthy; a whole chain is one flat node."""

    kind: TypingLiteral["or"] = "or"
    operands: tuple[Expr, ...]
    """Two or more operands, evaluated left to right until one is truthy."""


Expr: TypeAlias = (
    Literal | Path | ListDisplay | Index | Negate | Arithmetic | Compare | Not | And | Or
)
"""Any node of the tree: the closed union a walk over a condition matches on."""


def path_keys(tree: Expr) -> list[tuple[PathKey, ...]]:
    """The distinct paths a tree reads, in order of first appearance."""
    found: dict[tuple[PathKey, ...], None] = {}
    pending: list[Expr] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, Path):
            found.setdefault(node.keys)
        else:
            pending.extend(reversed(children(node)))
    return list(found)


def children(node: Expr) -> tuple[Expr, ...]:
    """The node's direct subexpressions, in reading order."""
    match node:
        case Literal() | Path():
            return ()
        case ListDisplay(items=items):
            return items
        case Index(target=target, key=key):
            return (target, key)
        case Negate(operand=operand) | Not(operand=operand):
            return (operand,)
        case Arithmetic(operands=operands) | And(operands=operands) | Or(operands=operands):
            return operands
        case Compare(left=left, right=right):
            return (left, right)
        case _:
            assert_never(node)


def path_comparison(node: Expr) -> tuple[CompareOp, Path, Literal] | None:
    """``(op, path, constant)`` when ``node`` compares a path with a constant, the path first
    (``1 < x`` reads as ``x > 1``); None for anything else, ``'a' in x`` included."""
    if not isinstance(node, Compare):
        return None
    op, left, right = node.op, node.left, node.right
    if isinstance(left, Path) and isinstance(right, Literal):
        return op, left, right
    if isinstance(left, Literal) and isinstance(right, Path) and op in _MIRRORED:
        return _MIRRORED[op], right, left
    return None


def path_text(keys: tuple[PathKey, ...]) -> str:
    """How a path is shown, as it could be written: ``user.tier``, ``items[0]``, ``d['a b']``."""
    parts = [str(keys[0])]
    for key in keys[1:]:
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif is_name(key):
            parts.append(f".{key}")
        else:
            parts.append(f"[{quote(key)}]")
    return "".join(parts)


def quote(text: str) -> str:
    """``text`` as a string literal of the language, which reads back as ``text``."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    return "'" + escaped.replace("\n", "\\n").replace("\t", "\\t") + "'"
