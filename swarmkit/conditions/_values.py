"""What values mean to a condition: truthiness, equality, order, membership, arithmetic.

Every public function here is total: whatever the state holds, it returns a value and
never raises. Values of types the language does not know (sets, Decimals, arbitrary objects)
are unequal to everything and unordered; a set is still a haystack for ``in``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, TypeGuard

from swarmkit.conditions._ast import PathKey

# The 64-bit integer range that state values and arithmetic results must stay in.
INT_MIN: Final = -(2**63)
INT_LIMIT: Final = 2**64
# Below 2**53 in magnitude a number compares the same exactly as it does as a double,
# so such constants can use Python's own comparison operators.
EXACT_LIMIT: Final = 2**53

_SEQUENCES = (list, tuple)
_COLLECTIONS = (list, tuple, set, frozenset)


class _Undefined:
    """The result of arithmetic that failed; every comparison involving it is false."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False


UNDEFINED: Final = _Undefined()

State = dict[str, object]
# A path is read as get(state, arg): dict.get with the key for one step, a walker otherwise.
PathGetter = Callable[[State, Any], Any]

_dict_get: Final[Callable[[Any, Any], Any]] = dict.get
_EMPTY: Final[State] = {}


def is_number(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is an int or float; a bool is never a number."""
    kind = type(value)
    if kind is int or kind is float:
        return True
    return isinstance(value, int | float) and kind is not bool


def as_float(number: Any) -> float:
    """A number as a double; an int too big for one becomes an infinity."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def compare_numbers(
    order: Callable[[Any, Any], bool], left: int | float, right: int | float
) -> bool:
    """Numbers compare as 64-bit doubles, as in the reference, so int/float mix freely.

    That is lossy above 2**53 (9007199254740993 == 9007199254740992); an int too big for
    a double at all is compared exactly instead.
    """
    try:
        return order(float(left), float(right))
    except OverflowError:
        return order(left, right)


def truthy(value: object) -> bool:
    """Falsy: null, false, zero, and empty strings, bytes, lists and mappings; NaN is true."""
    if value is UNDEFINED:
        return False
    try:
        return bool(value)
    except Exception:  # a foreign object whose __bool__ or __len__ fails is false
        return False


def equals(left: object, right: object) -> bool:
    """``==``: numbers compare numerically at the top level, everything else structurally."""
    if is_number(left) and is_number(right):
        return compare_numbers(operator.eq, left, right)
    try:
        return _same(left, right)
    except Exception:  # a foreign mapping whose iteration fails is unequal
        return False


def _kind(value: object) -> str | None:
    kind = _KINDS.get(type(value))
    if kind is not None:
        return kind
    for base, name in _BASE_KINDS:
        if isinstance(value, base):
            return name
    return None


_KINDS: dict[type, str] = {
    type(None): "null",
    bool: "bool",
    int: "int",
    float: "float",
    str: "str",
    bytes: "bytes",
    list: "sequence",
    tuple: "sequence",
    dict: "mapping",
}
# Order matters: bool before int, because True is an int to isinstance.
_BASE_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "bool"),
    (int, "int"),
    (float, "float"),
    (str, "str"),
    (bytes, "bytes"),
    (_SEQUENCES, "sequence"),
    (Mapping, "mapping"),
)


def _same(left: object, right: object) -> bool:
    # Iterative, so deep data cannot exhaust the stack; pairs of containers already
    # being compared are assumed equal, so self-referencing data terminates.
    pending = [(left, right)]
    seen: set[tuple[int, int]] = set()
    while pending:
        a, b = pending.pop()
        kind = _kind(a)
        if kind is None or kind != _kind(b):
            return False
        if kind in ("sequence", "mapping"):
            if (id(a), id(b)) not in seen:
                seen.add((id(a), id(b)))
                if not _push_children(kind, a, b, pending):
                    return False
        elif not _same_scalar(kind, a, b):
            return False
    return True


def _same_scalar(kind: str, a: Any, b: Any) -> bool:
    # The base-class methods ignore any __eq__ a subclass may define.
    if kind == "null":
        return True
    base = _SCALAR_BASES[kind]
    return base.__eq__(a, b) is True


_SCALAR_BASES: dict[str, Any] = {
    "bool": int,
    "int": int,
    "float": float,
    "str": str,
    "bytes": bytes,
}


def _push_children(kind: str, a: Any, b: Any, pending: list[tuple[object, object]]) -> bool:
    if kind == "sequence":
        items_a, items_b = list(a), list(b)
        if len(items_a) != len(items_b):
            return False
        pending.extend(zip(items_a, items_b, strict=True))
        return True
    # Mappings are equal only with equal items in the same order, as in the reference.
    pairs_a, pairs_b = list(a.items()), list(b.items())
    if len(pairs_a) != len(pairs_b):
        return False
    for (key_a, value_a), (key_b, value_b) in zip(pairs_a, pairs_b, strict=True):
        pending.append((key_a, key_b))
        pending.append((value_a, value_b))
    return True


def not_equals(left: object, right: object) -> bool:
    """``!=`` is exactly ``not ==``, so a type mismatch makes it true."""
    return not equals(left, right)


def less(left: object, right: object) -> bool:
    """``<``: only number/number or string/string are ordered."""
    if is_number(left) and is_number(right):
        return compare_numbers(operator.lt, left, right)
    if isinstance(left, str) and isinstance(right, str):
        return str.__lt__(left, right)
    return False


def less_equal(left: object, right: object) -> bool:
    """``<=``: only number/number or string/string are ordered."""
    if is_number(left) and is_number(right):
        return compare_numbers(operator.le, left, right)
    if isinstance(left, str) and isinstance(right, str):
        return str.__le__(left, right)
    return False


def greater(left: object, right: object) -> bool:
    """``>`` is ``<`` with the operands swapped."""
    return less(right, left)


def greater_equal(left: object, right: object) -> bool:
    """``>=`` is ``<=`` with the operands swapped."""
    return less_equal(right, left)


def contains(needle: object, haystack: object) -> bool:
    """``in``: an element of a list, tuple or set, a substring of a string, a mapping's key."""
    if isinstance(haystack, str):
        return isinstance(needle, str) and str.__contains__(haystack, needle)
    try:
        if isinstance(haystack, _COLLECTIONS):
            return _contains_element(needle, haystack)
        if isinstance(haystack, Mapping):
            return _contains_key(needle, haystack)
    except Exception:  # a foreign collection whose iteration fails holds nothing
        return False
    return False


def _contains_element(needle: object, haystack: Collection[object]) -> bool:
    # For a str needle the C scan rules a miss out quickly; a hit is still confirmed,
    # because only a string may equal a string here.
    if type(needle) is str and needle not in haystack:
        return False
    return any(equals(needle, element) for element in haystack)


def _contains_key(needle: object, haystack: Mapping[object, object]) -> bool:
    if type(needle) is str and type(haystack) is dict:
        return dict.__contains__(haystack, needle)
    return any(equals(needle, key) for key in haystack)


def not_contains(needle: object, haystack: object) -> bool:
    """``not in`` is exactly ``not (needle in haystack)``."""
    return not contains(needle, haystack)


COMPARISONS: Final[Mapping[str, Callable[[object, object], bool]]] = {
    "==": equals,
    "!=": not_equals,
    "<": less,
    "<=": less_equal,
    ">": greater,
    ">=": greater_equal,
    "in": contains,
    "not in": not_contains,
}
"""Each comparison operator of the language, as the function that decides it."""


def step(container: object, key: object) -> object:
    """One path step, ``container.key`` or ``container[key]``; null when it leads nowhere."""
    if isinstance(container, dict):
        try:
            return dict.get(container, key)
        except TypeError:  # an unhashable key
            return None
    if isinstance(container, Mapping):
        return _mapping_get(container, key)
    if isinstance(container, list | tuple | str) and type(key) is int:
        return container[key] if -len(container) <= key < len(container) else None
    return None


def _mapping_get(mapping: Mapping[object, object], key: object) -> object:
    try:
        return mapping[key]
    except Exception:  # missing, unhashable, or a foreign mapping that fails: all null
        return None


def index(container: object, key: object) -> object:
    """``container[key]`` for a computed key: a string or an int, never a bool."""
    if container is UNDEFINED or key is UNDEFINED:
        return UNDEFINED
    if isinstance(key, str) or (isinstance(key, int) and type(key) is not bool):
        return step(container, key)
    return None


def negate(value: Any) -> object:
    """Unary minus; anything but a number is undefined."""
    if not is_number(value):
        return UNDEFINED
    return _checked(-value, value, value)


def arithmetic(op: str, left: Any, right: Any) -> object:
    """``+ - * / %`` with Python's meaning; a failure is undefined, never an exception."""
    if is_number(left) and is_number(right):
        return _number_arithmetic(op, left, right)
    if op == "+" and isinstance(left, str) and isinstance(right, str):
        return str.__add__(left, right)
    return UNDEFINED


def _number_arithmetic(op: str, left: int | float, right: int | float) -> object:
    try:
        if op == "+":
            result = left + right
        elif op == "-":
            result = left - right
        elif op == "*":
            result = left * right
        elif op == "/":
            result = left / right
        else:
            result = left % right
    except (ZeroDivisionError, OverflowError):
        return UNDEFINED
    return _checked(result, left, right)


def _checked(result: int | float, left: int | float, right: int | float) -> object:
    # Overflow: an int outside 64 bits, or an infinity/NaN made from finite numbers.
    if isinstance(result, int):
        return result if INT_MIN <= result < INT_LIMIT else UNDEFINED
    if math.isfinite(result) or not (_finite(left) and _finite(right)):
        return result
    return UNDEFINED


def _finite(number: int | float) -> bool:
    return isinstance(number, int) or math.isfinite(number)


# Reading the state.


def adapt_state(state: object, roots: frozenset[str]) -> State:
    """The dict closures read: the state itself, or the needed keys of any other mapping."""
    if isinstance(state, dict):
        return state
    if isinstance(state, Mapping):
        return {root: step(state, root) for root in roots}
    return _EMPTY  # None, or something that is not a mapping: an empty state


def path_getter(keys: tuple[PathKey, ...]) -> tuple[PathGetter, Any]:
    """How to read a path: ``get(state, arg)``; one step is a plain ``dict.get``."""
    if len(keys) == 1:
        return _dict_get, keys[0]
    return _READERS.get(len(keys), _read_many), keys


def _read_two(state: State, keys: tuple[PathKey, PathKey]) -> object:
    first, second = keys
    value = _dict_get(state, first)
    if value.__class__ is dict:
        return _dict_get(value, second)
    return None if value is None else step(value, second)


def _read_three(state: State, keys: tuple[PathKey, PathKey, PathKey]) -> object:
    first, second, third = keys
    value = _dict_get(state, first)
    if value.__class__ is dict:
        value = _dict_get(value, second)
        if value.__class__ is dict:
            return _dict_get(value, third)
    return _read_many(state, keys)


def _read_four(state: State, keys: tuple[PathKey, PathKey, PathKey, PathKey]) -> object:
    first, second, third, fourth = keys
    value = _dict_get(state, first)
    if value.__class__ is dict:
        value = _dict_get(value, second)
        if value.__class__ is dict:
            value = _dict_get(value, third)
            if value.__class__ is dict:
                return _dict_get(value, fourth)
    return _read_many(state, keys)


def _read_many(state: State, keys: tuple[PathKey, ...]) -> object:
    value: object = state
    for key in keys:
        if value.__class__ is dict:
            value = _dict_get(value, key)
        elif value is None:
            return None
        else:
            value = step(value, key)
    return value


# Unrolled walks for the common depths: each saves the loop's overhead on every call.
_READERS: Final[dict[int, PathGetter]] = {2: _read_two, 3: _read_three, 4: _read_four}
