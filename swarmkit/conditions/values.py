"""What values mean in the condition language, as functions: equality, membership, order,
truthiness. A tool that reasons about conditions (``swarm.check()`` is one) uses these, so it
agrees with the interpreter by construction."""

from swarmkit.conditions._values import (
    COMPARISONS,
    contains,
    equals,
    greater,
    greater_equal,
    is_number,
    less,
    less_equal,
    not_contains,
    not_equals,
    truthy,
)

__all__ = [
    "COMPARISONS",
    "contains",
    "equals",
    "greater",
    "greater_equal",
    "is_number",
    "less",
    "less_equal",
    "not_contains",
    "not_equals",
    "truthy",
]
