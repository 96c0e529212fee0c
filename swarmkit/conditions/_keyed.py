"""Which tests a decision table can answer: a path compared with plain constants.

A test is *keyed* on a path when all it does is compare that path with null, booleans,
strings or numbers that compare exactly as doubles (with ``and``, ``or``, ``not`` around);
what it says of any value then follows from ``holds``, the language's own comparisons.
An ``and`` with a keyed part is split into that part and the rest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from swarmkit.conditions._ast import (
    And,
    Compare,
    Expr,
    Literal,
    Not,
    Or,
    Path,
    PathKey,
    path_comparison,
)
from swarmkit.conditions._values import COMPARISONS, EXACT_LIMIT, State

Predicate = Callable[[State], bool]


def _plain(value: object) -> bool:
    """Constants whose comparisons the table can answer by region: null, booleans, strings,
    and numbers that compare exactly as doubles."""
    if value is None or isinstance(value, bool | str):
        return True
    return isinstance(value, int | float) and abs(value) < EXACT_LIMIT


def keyed_path(tree: Expr) -> tuple[PathKey, ...] | None:
    """The one path ``tree`` reads, when all it does is compare that path with plain
    constants (with ``and``, ``or``, ``not`` around); None otherwise."""
    match tree:
        case Compare():
            found = path_comparison(tree)
            if found is None:
                return None
            op, path, literal = found
            value = literal.value
            if op in ("in", "not in"):
                plain = isinstance(value, tuple) and all(_plain(item) for item in value)
            else:
                plain = _plain(value)
            return path.keys if plain else None
        case Not(operand=operand):
            return keyed_path(operand)
        case And(operands=operands) | Or(operands=operands):
            paths = {keyed_path(operand) for operand in operands}
            return paths.pop() if len(paths) == 1 else None
        case _:
            return None


def needle_of(tree: Expr) -> tuple[tuple[PathKey, ...], str] | None:
    """``(path, text)`` for ``'text' in path``."""
    if isinstance(tree, Compare) and tree.op == "in":
        left, right = tree.left, tree.right
        if isinstance(left, Literal) and isinstance(right, Path) and type(left.value) is str:
            return right.keys, left.value
    return None


def _candidate_paths(tree: Expr) -> list[tuple[PathKey, ...]]:
    whole = keyed_path(tree)
    if whole is not None:
        return [whole]
    if not isinstance(tree, And):
        return []
    found = (keyed_path(operand) for operand in tree.operands)
    return list(dict.fromkeys(path for path in found if path is not None))


def path_preference(trees: Iterable[Expr]) -> dict[tuple[PathKey, ...], int]:
    """Rank of each path an ``and`` may be keyed on: the most shared first, then the first seen."""
    counts: Counter[tuple[PathKey, ...]] = Counter()
    for tree in trees:
        counts.update(_candidate_paths(tree))
    return {path: rank for rank, (path, _) in enumerate(counts.most_common())}


def split_keyed(
    tree: Expr, preferred: dict[tuple[PathKey, ...], int], compile_tree: Callable[[Expr], Predicate]
) -> tuple[tuple[PathKey, ...], Expr, Predicate | None] | None:
    """``(path, key part, compiled rest)`` of a test keyed on one path, or None."""
    paths = _candidate_paths(tree)
    if not paths:
        return None
    path = min(paths, key=preferred.__getitem__)
    if not isinstance(tree, And) or keyed_path(tree) is not None:
        return path, tree, None
    key = [operand for operand in tree.operands if keyed_path(operand) == path]
    rest = [operand for operand in tree.operands if keyed_path(operand) != path]
    return path, _joined(key), compile_tree(_joined(rest))


def _joined(operands: list[Expr]) -> Expr:
    return operands[0] if len(operands) == 1 else And(operands=tuple(operands))


def holds(tree: Expr, value: object) -> bool:
    """What a keyed test says of a path holding ``value``, by the language's own rules."""
    match tree:
        case Compare():
            found = path_comparison(tree)
            assert found is not None
            op, _, literal = found
            return COMPARISONS[op](value, literal.value)
        case Not(operand=operand):
            return not holds(operand, value)
        case And(operands=operands):
            return all(holds(operand, value) for operand in operands)
        case Or(operands=operands):
            return any(holds(operand, value) for operand in operands)
        case _:
            raise AssertionError(f"not a keyed test: {tree!r}")


def constants_of(tree: Expr) -> list[tuple[str, object]]:
    """``(operator, constant)`` of every comparison in a keyed test."""
    match tree:
        case Compare():
            found = path_comparison(tree)
            assert found is not None
            op, _, literal = found
            items = literal.value if isinstance(literal.value, tuple) else (literal.value,)
            return [(op, item) for item in items]
        case Not(operand=operand):
            return constants_of(operand)
        case And(operands=operands) | Or(operands=operands):
            return [pair for operand in operands for pair in constants_of(operand)]
        case _:
            raise AssertionError(f"not a keyed test: {tree!r}")
