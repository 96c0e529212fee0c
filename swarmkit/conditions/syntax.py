"""The syntax tree of a condition, for tools that read conditions (``swarm.check()`` is one).

A compiled ``Condition`` keeps its tree; these are its node types (a closed union, ``Expr``)
and the helpers to walk it. The tree is built by the parser and never by hand.
"""

from swarmkit.conditions._ast import (
    And,
    Arithmetic,
    Compare,
    Constant,
    Expr,
    Index,
    ListDisplay,
    Literal,
    Negate,
    Not,
    Or,
    Path,
    PathKey,
    children,
    path_comparison,
    path_keys,
    path_text,
)

__all__ = [
    "And",
    "Arithmetic",
    "Compare",
    "Constant",
    "Expr",
    "Index",
    "ListDisplay",
    "Literal",
    "Negate",
    "Not",
    "Or",
    "Path",
    "PathKey",
    "children",
    "path_comparison",
    "path_keys",
    "path_text",
]
