"""Builds the syntax tree from tokens with an explicit stack, so no input can recurse deeply.

Precedence, loosest first: ``or``, ``and``, ``not``, comparisons (``== != < <= > >= in
not in``, never chained), ``+ -``, ``* / %``, unary ``-``, then ``.name`` and ``[key]``.
Chains of ``and``, ``or`` and one arithmetic level become single flat nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, cast

from swarmkit.conditions._ast import (
    And,
    Arithmetic,
    ArithmeticOp,
    Compare,
    CompareOp,
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
)
from swarmkit.conditions._lexer import Token, shorten
from swarmkit.conditions._values import UNDEFINED, negate
from swarmkit.exceptions import ConditionSyntaxError

MAX_NESTING_DEPTH: Final = 100
"""Deepest nesting of brackets, and of operators inside one another, a condition may have."""

_INT_MAX = 2**63 - 1
_COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">=", "in"})
# Binary operators: token kind -> (group, precedence).
_BINARY: dict[str, tuple[str, int]] = {
    "or": ("or", 1),
    "and": ("and", 2),
    **dict.fromkeys(_COMPARISONS, ("compare", 4)),
    "+": ("sum", 5),
    "-": ("sum", 5),
    "*": ("product", 6),
    "/": ("product", 6),
    "%": ("product", 6),
}
_NOT_PRECEDENCE = 3
_NEGATE_PRECEDENCE = 7
_CHAINS = frozenset({"or", "and", "sum", "product"})
_OPENERS = frozenset({"paren", "list", "index"})
_LITERALS = frozenset({"int", "float", "string", "constant"})


class _Operand:
    """A value on the stack; a path grows in place, so a long path costs linear time."""

    __slots__ = ("_node", "depth", "keys", "postfix")

    def __init__(self, node: Expr, depth: int, postfix: bool) -> None:
        self._node: Expr | None = node
        self.depth = depth
        self.postfix = postfix  # may be followed by .name or [key]: not after a bare literal
        self.keys = list(node.keys) if isinstance(node, Path) else None

    @property
    def node(self) -> Expr:
        if self._node is None:
            self._node = Path(keys=tuple(self.keys or ()))
        return self._node

    def extend(self, key: PathKey) -> None:
        assert self.keys is not None
        self.keys.append(key)
        self._node = None


@dataclass(kw_only=True, slots=True)
class _Pending:
    """An operator or an open bracket waiting on the stack for its operands."""

    group: str
    """``or``/``and``/``compare``/``sum``/``product``, ``not``/``negate``, or an opener."""
    precedence: int
    """Binding strength; 0 for brackets, which nothing reduces past."""
    position: int
    """Column of the operator or bracket, for error messages."""
    ops: list[str] = field(default_factory=list)
    """The operators of a chain, in order; a chain of n operators has n + 1 operands."""
    items: int = 0
    """For a list literal: the elements completed so far."""


def parse(text: str, tokens: list[Token]) -> Expr:
    """Parse the tokens of ``text`` into one expression or raise ``ConditionSyntaxError``."""
    return _Parser(text, tokens).run()


class _Parser:
    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.at = 0
        self.operands: list[_Operand] = []
        self.pending: list[_Pending] = []
        self.openers = 0

    def run(self) -> Expr:
        expect_operand = True
        while True:
            token = self.tokens[self.at]
            self.at += 1
            if expect_operand:
                expect_operand = self.operand_position(token)
            elif token.kind == "end":
                return self.finish(token)
            else:
                expect_operand = self.operator_position(token)

    def fail(self, message: str, position: int) -> ConditionSyntaxError:
        return ConditionSyntaxError(message, expression=self.text, position=position)

    # Where a value is expected; returns whether a value is still expected.

    def operand_position(self, token: Token) -> bool:
        kind = token.kind
        if kind == "name":
            self.operands.append(_Operand(Path(keys=(token.text,)), 1, True))
        elif kind in _LITERALS:
            self.push_literal(token)
        elif kind in ("(", "["):
            return self.open(token)
        elif kind == "]" and self.can_close_list():
            return self.close_bracket(token)
        elif kind == "not":
            self.push_not(token)
            return True
        elif kind == "-":
            self.pending.append(
                _Pending(group="negate", precedence=_NEGATE_PRECEDENCE, position=token.position)
            )
            return True
        else:
            raise self.fail(f"expected a value, found {_describe(token)}", token.position)
        return False

    def push_literal(self, token: Token) -> None:
        value = cast(Constant, token.value)
        if token.kind == "int":
            # -9223372036854775808 is one literal, as in the reference: a '-' just before
            # a value can only be a unary minus.
            negated = self.at >= 2 and self.tokens[self.at - 2].kind == "-"
            if cast(int, value) > _INT_MAX + negated:
                raise self.fail(
                    f"integer {shorten(token.text)} is out of the 64-bit range", token.position
                )
        self.operands.append(_Operand(Literal(value=value), 1, False))

    def push_not(self, token: Token) -> None:
        # 'not' binds looser than comparisons, so it cannot be an operand of one: x == not y.
        if self.pending and self.pending[-1].precedence > _NOT_PRECEDENCE:
            raise self.fail("'not' cannot appear here; add parentheses", token.position)
        self.pending.append(
            _Pending(group="not", precedence=_NOT_PRECEDENCE, position=token.position)
        )

    def open(self, token: Token, group: str | None = None) -> bool:
        self.openers += 1
        if self.openers > MAX_NESTING_DEPTH:
            raise self.fail(_too_deep(), token.position)
        group = group or ("paren" if token.kind == "(" else "list")
        self.pending.append(_Pending(group=group, precedence=0, position=token.position))
        return True

    def can_close_list(self) -> bool:
        # [] and a trailing comma, [a, b,], are the only places ']' may follow no value.
        return bool(self.pending) and self.pending[-1].group == "list"

    # Where an operator is expected; returns whether a value is expected next.

    def operator_position(self, token: Token) -> bool:
        kind = token.kind
        if kind == "not":
            kind = self.not_in(token)
        if kind in _BINARY or kind == "not in":
            self.binary(kind, token.position)
            return True
        if kind == ".":
            self.member(token)
            return False
        if kind == "[":
            return self.open_index(token)
        if kind == ")":
            self.close_paren(token)
            return False
        if kind == "]":
            return self.close_bracket(token)
        if kind == ",":
            return self.comma(token)
        raise self.fail(f"expected an operator, found {_describe(token)}", token.position)

    def not_in(self, token: Token) -> str:
        if self.tokens[self.at].kind != "in":
            raise self.fail("expected 'in' after 'not'", token.position)
        self.at += 1
        return "not in"

    def binary(self, op: str, position: int) -> None:
        group, precedence = _BINARY.get(op, ("compare", 4))
        while self.pending and self.pending[-1].precedence >= precedence:
            top = self.pending[-1]
            if top.precedence == precedence and group in _CHAINS and top.group == group:
                top.ops.append(op)
                return
            if top.precedence == precedence and group == "compare":
                raise self.fail("comparisons cannot be chained; join them with 'and'", position)
            self.reduce()
        self.pending.append(
            _Pending(group=group, precedence=precedence, position=position, ops=[op])
        )

    def member(self, token: Token) -> None:
        if not self.operands[-1].postfix:
            raise self.fail("a literal cannot be followed by '.'", token.position)
        name = self.tokens[self.at]
        if name.kind != "name":
            raise self.fail("expected a name after '.'", name.position)
        self.at += 1
        self.postfix(token, Literal(value=name.text))

    def open_index(self, token: Token) -> bool:
        if not self.operands[-1].postfix:
            raise self.fail("a literal cannot be indexed", token.position)
        return self.open(token, "index")

    def postfix(self, token: Token, key: Expr, key_depth: int = 0) -> None:
        target = self.operands[-1]
        if not target.postfix:
            raise self.fail(f"a literal cannot be followed by {token.text!r}", token.position)
        constant = _path_key(key)
        if target.keys is not None and constant is not None:
            target.extend(constant)  # x.a[0]["b"] stays one flat Path node
            return
        self.operands.pop()
        depth = 1 + max(target.depth, key_depth)
        self.push(Index(target=target.node, key=key), depth, token.position, postfix=True)

    def close_paren(self, token: Token) -> None:
        opener = self.reduce_to_opener(token)
        if opener.group != "paren":
            raise self.fail(
                f"expected ']' to close the '[' at column {opener.position + 1}", token.position
            )
        self.operands[-1].postfix = True

    def close_bracket(self, token: Token) -> bool:
        opener = self.reduce_to_opener(token)
        if opener.group == "paren":
            raise self.fail(
                f"expected ')' to close the '(' at column {opener.position + 1}", token.position
            )
        if opener.group == "list":
            self.finish_list(opener, token)
        else:
            key = self.operands.pop()
            self.postfix(token, key.node, key.depth)
        return False

    def comma(self, token: Token) -> bool:
        opener = self.reduce_to_opener(token)
        if opener.group != "list":
            raise self.fail("',' is only allowed between the elements of a list", token.position)
        opener.items += 1
        self.pending.append(opener)
        self.openers += 1
        return True

    def reduce_to_opener(self, token: Token) -> _Pending:
        while self.pending and self.pending[-1].group not in _OPENERS:
            self.reduce()
        if not self.pending:
            raise self.fail(f"unmatched {token.text!r}", token.position)
        self.openers -= 1
        return self.pending.pop()

    def finish_list(self, opener: _Pending, token: Token) -> None:
        previous = self.tokens[self.at - 2].kind
        count = opener.items + (0 if previous in ("[", ",") else 1)
        items = self.pop_operands(count)
        depth = 1 + max((item.depth for item in items), default=0)
        nodes = tuple(item.node for item in items)
        node: Expr
        if all(isinstance(item, Literal) for item in nodes):
            node = Literal(value=tuple(cast(Literal, item).value for item in nodes))
        else:
            node = ListDisplay(items=nodes)
        self.push(node, depth, opener.position, postfix=True)

    def finish(self, token: Token) -> Expr:
        while self.pending:
            if self.pending[-1].group in _OPENERS:
                opener = self.pending[-1]
                closer = ")" if opener.group == "paren" else "]"
                raise self.fail(f"this bracket is never closed with {closer!r}", opener.position)
            self.reduce()
        return self.operands[-1].node

    # Building nodes.

    def reduce(self) -> None:
        top = self.pending.pop()
        if top.group == "not":
            (operand,) = self.pop_operands(1)
            self.push(Not(operand=operand.node), operand.depth + 1, top.position)
        elif top.group == "negate":
            (operand,) = self.pop_operands(1)
            self.push(*_negated(operand), top.position)
        else:
            operands = self.pop_operands(len(top.ops) + 1)
            depth = 1 + max(operand.depth for operand in operands)
            nodes = tuple(operand.node for operand in operands)
            self.push(_binary_node(top.group, top.ops, nodes), depth, top.position)

    def pop_operands(self, count: int) -> list[_Operand]:
        if count == 0:
            return []
        taken = self.operands[-count:]
        del self.operands[-count:]
        return taken

    def push(self, node: Expr, depth: int, position: int, *, postfix: bool = False) -> None:
        if depth > MAX_NESTING_DEPTH:
            raise self.fail(_too_deep(), position)
        self.operands.append(_Operand(node, depth, postfix))


def _too_deep() -> str:
    return f"condition nested too deeply (the limit is {MAX_NESTING_DEPTH} levels)"


def _describe(token: Token) -> str:
    if token.kind == "end":
        return "the end of the condition"
    if token.kind == "name":
        return f"the name {shorten(token.text)!r}"
    if token.kind in ("int", "float", "string"):
        return shorten(token.text)
    return repr(token.text)


def _path_key(key: Expr) -> PathKey | None:
    if isinstance(key, Literal):
        value = key.value
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
    return None


def _negated(operand: _Operand) -> tuple[Expr, int]:
    node = operand.node
    if isinstance(node, Literal) and not isinstance(node.value, bool | tuple | str | None):
        value = negate(node.value)
        if value is not UNDEFINED:
            return Literal(value=cast(Constant, value)), operand.depth
    return Negate(operand=node), operand.depth + 1


def _binary_node(group: str, ops: list[str], nodes: tuple[Expr, ...]) -> Expr:
    if group == "or":
        return Or(operands=_flatten(Or, nodes))
    if group == "and":
        return And(operands=_flatten(And, nodes))
    if group == "compare":
        left, right = nodes
        return Compare(op=cast(CompareOp, ops[0]), left=left, right=right)
    return Arithmetic(operands=nodes, operators=tuple(cast(list[ArithmeticOp], ops)))


def _flatten(kind: type[And] | type[Or], nodes: tuple[Expr, ...]) -> tuple[Expr, ...]:
    flat: list[Expr] = []
    for node in nodes:
        if isinstance(node, kind):
            flat.extend(node.operands)
        else:
            flat.append(node)
    return tuple(flat)
