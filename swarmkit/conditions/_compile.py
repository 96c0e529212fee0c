"""Compiles a syntax tree once into Python closures specialised by the shape of each node.

The hot shapes, a path compared with a constant or a constant searched in a path, get
closures of their own that read the state with direct dict lookups and fall back to the
general rules of ``_values`` only for values of unusual types.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, assert_never

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
    path_comparison,
    path_keys,
    path_text,
)
from swarmkit.conditions._lexer import tokenize
from swarmkit.conditions._parser import parse
from swarmkit.conditions._table import any_match, decision_table
from swarmkit.conditions._values import (
    COMPARISONS,
    EXACT_LIMIT,
    UNDEFINED,
    PathGetter,
    State,
    adapt_state,
    arithmetic,
    contains,
    equals,
    index,
    is_number,
    negate,
    path_getter,
    truthy,
)
from swarmkit.exceptions import ConditionSyntaxError

MAX_EXPRESSION_LENGTH: Final = 1_000_000
"""Longest condition accepted, in characters."""

Predicate = Callable[[State], bool]
Reader = Callable[[State], object]

_FAST_ORDER: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_MAY_BE_UNDEFINED: Final = (Arithmetic, Negate, Index)


@dataclass(frozen=True, kw_only=True)
class Condition:
    """A compiled ``when`` condition: call it with a state to test it."""

    source: str
    """The condition exactly as written."""
    paths: tuple[str, ...]
    """The state paths it reads, in order of first appearance, e.g. ``("user.tier",)``."""
    tree: Expr = field(repr=False, compare=False)
    """The syntax tree it was compiled from."""
    roots: frozenset[str] = field(repr=False, compare=False)
    """The top-level state keys it reads."""
    _test: Predicate = field(repr=False, compare=False)
    """The compiled closure; it expects a dict and may let a foreign object's error out."""

    def __call__(self, state: Mapping[str, object] | None = None) -> bool:
        """Whether the condition holds; never raises, whatever the state holds."""
        try:
            data = state if type(state) is dict else adapt_state(state, self.roots)
            return self._test(data)
        except RecursionError:
            # The caller's stack was nearly full: the answer is not "false", it is unknown
            # here. A fresh thread has a whole stack, and conditions are capped in depth.
            return on_fresh_stack(self._test, state, self.roots)
        except Exception:  # only a foreign object misbehaving inside the state gets here
            return False

    def __reduce__(self) -> tuple[Callable[[str], Condition], tuple[str]]:
        # Closures do not pickle; the source is the whole truth, so recompile it.
        return compile_condition, (self.source,)

    def __copy__(self) -> Condition:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Condition:
        return self


def on_fresh_stack(test: Predicate, state: object, roots: frozenset[str]) -> bool:
    """``test`` of the state, evaluated on a thread of its own with an empty stack."""
    outcome = [False]

    def evaluate() -> None:
        try:
            data = state if type(state) is dict else adapt_state(state, roots)
            outcome[0] = bool(test(data))
        except Exception:  # with a whole stack, only a misbehaving foreign object gets here
            outcome[0] = False

    worker = threading.Thread(target=evaluate, name="swarmkit-condition")
    worker.start()
    worker.join()
    return outcome[0]


def compile_condition(source: str) -> Condition:
    """Parse and compile ``source``; raise ``ConditionSyntaxError`` if it is not valid."""
    if not isinstance(source, str):
        raise TypeError(f"a condition must be a str, not {type(source).__name__}")
    _check_size(source)
    tokens = tokenize(source)
    if len(tokens) == 1:  # nothing but blanks before the end
        raise ConditionSyntaxError("empty condition", expression=source, position=0)
    try:
        tree = parse(source, tokens)
        test = _predicate(tree)
    except RecursionError:  # only if the caller's own stack is already nearly full
        raise ConditionSyntaxError(
            "condition nested too deeply for the current stack", expression=source, position=0
        ) from None
    keys = path_keys(tree)
    return Condition(
        source=source,
        paths=tuple(path_text(path) for path in keys),
        tree=tree,
        roots=frozenset(str(path[0]) for path in keys),
        _test=test,
    )


def _check_size(source: str) -> None:
    if len(source) > MAX_EXPRESSION_LENGTH:
        raise ConditionSyntaxError(
            f"condition is {len(source)} characters long; the limit is {MAX_EXPRESSION_LENGTH}",
            expression=source,
            position=MAX_EXPRESSION_LENGTH,
        )


# Predicates: closures returning a bool.


def compile_tree(tree: Expr) -> Predicate:
    """The closure testing ``tree``; it expects a dict, like ``Condition._test``."""
    return _predicate(tree)


def _predicate(node: Expr) -> Predicate:
    match node:
        case Literal(value=value):
            return _constant_predicate(truthy(value))
        case Path(keys=keys):
            return _path_truthy(*path_getter(keys))
        case Compare():
            return _compare(node)
        case Not(operand=operand):
            return _negation(_predicate(operand))
        case And(operands=operands):
            general = _all(tuple(_predicate(operand) for operand in operands))
            bounds = _bounds_of_one_path(operands)
            if bounds is None:
                return general
            return _number_range(*path_getter(bounds[0]), bounds[1], general)
        case Or(operands=operands):
            tests = tuple(_predicate(operand) for operand in operands)
            texts = _texts_of_one_path(operands)
            if texts is not None:
                return _text_choice(*path_getter(texts[0]), frozenset(texts[1]), _any(tests))
            table = decision_table(list(zip(operands, tests, strict=True)), _predicate)
            return _any(tests) if table is None else any_match(table)
        case ListDisplay() | Index() | Negate() | Arithmetic():
            read = _value(node)
            return lambda state: truthy(read(state))
        case _:
            assert_never(node)


def _constant_predicate(result: bool) -> Predicate:
    return (lambda state: True) if result else (lambda state: False)


def _path_truthy(get: PathGetter, arg: Any) -> Predicate:
    def test(state: State) -> bool:
        value = get(state, arg)
        if value.__class__ is bool:
            return value
        return truthy(value)

    return test


def _negation(inner: Predicate) -> Predicate:
    return lambda state: not inner(state)


def _all(tests: tuple[Predicate, ...]) -> Predicate:
    if len(tests) == 2:
        first, second = tests
        return lambda state: first(state) and second(state)

    def test(state: State) -> bool:
        # A flat loop: a long chain costs no stack, and no generator on every call.
        for each in tests:  # noqa: SIM110
            if not each(state):
                return False
        return True

    return test


def _any(tests: tuple[Predicate, ...]) -> Predicate:
    if len(tests) == 2:
        first, second = tests
        return lambda state: first(state) or second(state)

    def test(state: State) -> bool:
        for each in tests:  # noqa: SIM110
            if each(state):
                return True
        return False

    return test


def _texts_of_one_path(
    operands: tuple[Expr, ...],
) -> tuple[tuple[PathKey, ...], list[str]] | None:
    """``(path, texts)`` when every operand is ``path == 'text'`` on one path (three or more)."""
    if len(operands) < 3:
        return None
    keys: tuple[PathKey, ...] | None = None
    texts: list[str] = []
    for operand in operands:
        found = path_comparison(operand)
        if found is None or found[0] != "==":
            return None
        _, path, constant = found
        if not isinstance(constant.value, str) or (keys is not None and path.keys != keys):
            return None
        keys = path.keys
        texts.append(constant.value)
    assert keys is not None
    return keys, texts


def _bounds_of_one_path(
    operands: tuple[Expr, ...],
) -> tuple[tuple[PathKey, ...], tuple[tuple[Callable[[Any, Any], bool], int | float], ...]] | None:
    """``(path, ((order, number), ...))`` when every operand orders one path against a number
    (``score >= 80 and score < 90``), else None."""
    keys: tuple[PathKey, ...] | None = None
    bounds: list[tuple[Callable[[Any, Any], bool], int | float]] = []
    for operand in operands:
        found = path_comparison(operand)
        if found is None or found[0] not in _FAST_ORDER:
            return None
        op, path, constant = found
        number = constant.value
        if isinstance(number, bool) or not is_number(number) or not abs(number) < EXACT_LIMIT:
            return None
        if keys is not None and path.keys != keys:
            return None
        keys = path.keys
        bounds.append((_FAST_ORDER[op], number))
    assert keys is not None
    return keys, tuple(bounds)


def _number_range(
    get: PathGetter,
    arg: Any,
    bounds: tuple[tuple[Callable[[Any, Any], bool], int | float], ...],
    general: Predicate,
) -> Predicate:
    # A band on one path: read it once; a value that is not a plain number goes term by term
    # (a missing one orders with nothing).
    if len(bounds) == 2:
        (low, low_number), (high, high_number) = bounds

        def between(state: State) -> bool:
            value = get(state, arg)
            kind = value.__class__
            if kind is int or kind is float:
                return low(value, low_number) and high(value, high_number)
            return value is not None and general(state)

        return between

    def test(state: State) -> bool:
        value = get(state, arg)
        kind = value.__class__
        if kind is int or kind is float:
            for order, number in bounds:  # noqa: SIM110
                if not order(value, number):
                    return False
            return True
        return value is not None and general(state)

    return test


def _text_choice(get: PathGetter, arg: Any, texts: frozenset[str], general: Predicate) -> Predicate:
    # path == 'a' or path == 'b' or ...: one set lookup for a str; anything else term by term.
    def test(state: State) -> bool:
        value = get(state, arg)
        if value.__class__ is str:
            return value in texts
        return value is not None and general(state)

    return test


# Comparisons.


def _compare(node: Compare) -> Predicate:
    found = path_comparison(node)
    if found is not None:
        op, path, constant = found
        special = _path_against_constant(op, path_getter(path.keys), constant.value)
        return special if special is not None else _generic_compare(op, path, constant)
    left, right = node.left, node.right
    if isinstance(left, Literal) and isinstance(right, Path) and isinstance(left.value, str):
        inside = _string_in_path(path_getter(right.keys), left.value)
        return inside if node.op == "in" else _negation(inside)
    return _generic_compare(node.op, left, right)


def _generic_compare(op: str, left: Expr, right: Expr) -> Predicate:
    compare = COMPARISONS[op]
    read_left, read_right = _value(left), _value(right)
    if not (isinstance(left, _MAY_BE_UNDEFINED) or isinstance(right, _MAY_BE_UNDEFINED)):
        return lambda state: compare(read_left(state), read_right(state))

    def test(state: State) -> bool:
        a, b = read_left(state), read_right(state)
        if a is UNDEFINED or b is UNDEFINED:
            return False  # failed arithmetic makes every comparison false, != included
        return compare(a, b)

    return test


def _path_against_constant(
    op: str, getter: tuple[PathGetter, Any], constant: Constant
) -> Predicate | None:
    get, arg = getter
    if constant is None or isinstance(constant, bool):
        return _identity_compare(op, get, arg, constant)
    if isinstance(constant, str):
        return _string_compare(op, get, arg, constant)
    if is_number(constant) and abs(constant) < EXACT_LIMIT:
        return _number_compare(op, get, arg, constant)
    if isinstance(constant, tuple) and op in ("in", "not in"):
        found = _path_in_constants(get, arg, constant)
        return found if op == "in" else _negation(found)
    return None


def _identity_compare(
    op: str, get: PathGetter, arg: Any, constant: bool | None
) -> Predicate | None:
    # null, true and false each equal only themselves, and a missing path is null.
    if op == "==":
        return lambda state: get(state, arg) is constant
    if op == "!=":
        return lambda state: get(state, arg) is not constant
    if op in _FAST_ORDER:
        return lambda state: False  # null and booleans are never ordered
    return None


def _string_compare(op: str, get: PathGetter, arg: Any, text: str) -> Predicate | None:
    if op == "==":
        return _string_equals(get, arg, text)
    if op == "!=":
        return _negation(_string_equals(get, arg, text))
    if op in _FAST_ORDER:
        return _string_order(_FAST_ORDER[op], COMPARISONS[op], get, arg, text)
    return None


def _string_equals(get: PathGetter, arg: Any, text: str) -> Predicate:
    def test(state: State) -> bool:
        value = get(state, arg)
        if value is None:  # missing paths are common in routing: answer them first
            return False
        if value.__class__ is str:
            return value == text
        return isinstance(value, str) and str.__eq__(value, text)

    return test


def _string_order(
    order: Callable[[Any, Any], bool],
    general: Callable[[object, object], bool],
    get: PathGetter,
    arg: Any,
    text: str,
) -> Predicate:
    def test(state: State) -> bool:
        value = get(state, arg)
        if value.__class__ is str:
            return order(value, text)
        return value is not None and general(value, text)

    return test


def _number_compare(op: str, get: PathGetter, arg: Any, number: int | float) -> Predicate | None:
    if op == "==":
        return _number_equals(get, arg, number)
    if op == "!=":
        return _negation(_number_equals(get, arg, number))
    if op in _FAST_ORDER:
        return _number_order(_FAST_ORDER[op], COMPARISONS[op], get, arg, number)
    return None


def _number_equals(get: PathGetter, arg: Any, number: int | float) -> Predicate:
    def test(state: State) -> bool:
        value: float = get(state, arg)
        if value is None:
            return False
        kind = value.__class__
        if kind is int or kind is float:
            return value == number
        return is_number(value) and equals(value, number)

    return test


def _number_order(
    order: Callable[[Any, Any], bool],
    general: Callable[[object, object], bool],
    get: PathGetter,
    arg: Any,
    number: int | float,
) -> Predicate:
    def test(state: State) -> bool:
        value = get(state, arg)
        kind = value.__class__
        if kind is int or kind is float:
            return order(value, number)
        return value is not None and general(value, number)

    return test


def _string_in_path(getter: tuple[PathGetter, Any], text: str) -> Predicate:
    get, arg = getter

    def test(state: State) -> bool:
        haystack = get(state, arg)
        if haystack is None:
            return False
        kind = haystack.__class__
        if kind is list or kind is tuple:
            if text not in haystack:
                return False
            # Confirm the hit is a string, as only a string equals a string here.
            found = haystack[haystack.index(text)]
            return found.__class__ is str or contains(text, haystack)
        if kind is str or kind is dict:
            return text in haystack
        return contains(text, haystack)

    return test


def _path_in_constants(get: PathGetter, arg: Any, constants: tuple[Constant, ...]) -> Predicate:
    if not all(type(item) is str for item in constants):
        return lambda state: contains(get(state, arg), constants)
    texts = frozenset(constants)

    def test(state: State) -> bool:
        value = get(state, arg)
        if value.__class__ is str:
            return value in texts
        return contains(value, constants)

    return test


# Values: closures returning whatever the expression evaluates to.


def _value(node: Expr) -> Reader:
    match node:
        case Literal(value=value):
            return lambda state: value
        case Path(keys=keys):
            get, arg = path_getter(keys)
            return lambda state: get(state, arg)
        case ListDisplay(items=items):
            readers = tuple(_value(item) for item in items)
            return lambda state: tuple(read(state) for read in readers)
        case Index(target=target, key=key):
            read_target, read_key = _value(target), _value(key)
            return lambda state: index(read_target(state), read_key(state))
        case Negate(operand=operand):
            read = _value(operand)
            return lambda state: negate(read(state))
        case Arithmetic(operands=operands, operators=operators):
            return _arithmetic(tuple(_value(operand) for operand in operands), operators)
        case Compare() | Not() | And() | Or():
            return _predicate(node)
        case _:
            assert_never(node)


def _arithmetic(readers: tuple[Reader, ...], operators: tuple[str, ...]) -> Reader:
    first, rest = readers[0], tuple(zip(operators, readers[1:], strict=True))

    def read(state: State) -> object:
        result = first(state)
        for op, each in rest:
            result = arithmetic(op, result, each(state))
        return result

    return read
