"""Turns condition text into tokens, each with the column it starts at."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from swarmkit.exceptions import ConditionSyntaxError

KEYWORDS: dict[str, tuple[str, object]] = {
    "and": ("and", None),
    "or": ("or", None),
    "not": ("not", None),
    "in": ("in", None),
    "true": ("constant", True),
    "True": ("constant", True),
    "false": ("constant", False),
    "False": ("constant", False),
    "null": ("constant", None),
    "none": ("constant", None),
    "None": ("constant", None),
}
"""Words with a meaning of their own; any other spelling (``TRUE``, ``And``) is a plain name."""

# Unicode White_Space, which is not quite str.isspace(): U+001C..U+001F are not blanks here.
_SPACE = r"[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*"
# Leading blanks are part of each match, so a typical token costs one regex call.
_TOKEN = re.compile(
    rf"{_SPACE}(?:"
    r"(?P<name>[^\W\d]\w*)"
    r"|(?P<op>==|!=|<=|>=|[<>()\[\],.+\-*/%])"
    r"|(?P<number>[0-9]+(?:\.[0-9]+)*)"
    r"|(?P<quote>['\"])"
    r"|(?P<end>\Z))"
)
_BLANKS = re.compile(_SPACE)
# Unrolled loops: linear time on long strings, no backtracking.
_STRING_BODY = {
    "'": re.compile(r"[^'\\]*(?:\\.[^'\\]*)*'", re.DOTALL),
    '"': re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL),
}
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPED = {"n": "\n", "t": "\t"}
_NAME_MARKS = frozenset({"Mn", "Mc", "Cn"})
# Circled and squared Latin letters count as letters in Unicode's Alphabetic property.
_LETTER_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))
_HINTS = {
    "=": "a single '=' is not a comparison; use '=='",
    "!": "use 'not' for negation and '!=' for inequality",
    "&": "use 'and' instead of '&' or '&&'",
    "|": "use 'or' instead of '|' or '||'",
}


class Token(NamedTuple):
    """One token; a named tuple because long conditions make hundreds of thousands of them."""

    kind: str
    """``name``, ``int``, ``float``, ``string``, ``constant``, a keyword, an operator, ``end``."""
    position: int
    """0-based column of the token's first character."""
    text: str
    """The token as written."""
    value: object = None
    """The decoded value of a literal or the name itself; ``None`` otherwise."""


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens ending with an ``end`` token; raise on a stray character."""
    tokens: list[Token] = []
    append, match_at = tokens.append, _TOKEN.match
    position = 0
    while True:
        match = match_at(text, position)
        if match is None:  # no token starts at the first non-blank character
            token = _irregular_token(text, _BLANKS.match(text, position).end())  # type: ignore[union-attr]
        elif match.lastgroup == "name":
            token = _name_token(text, match.start("name"), match.end())
        elif match.lastgroup == "end":
            append(Token("end", len(text), ""))
            return tokens
        else:
            token = _other_token(text, match)
        append(token)
        position = token.position + len(token.text)


def _other_token(text: str, match: re.Match[str]) -> Token:
    kind = match.lastgroup or ""
    start, word = match.start(kind), match[kind]
    if kind == "op":
        return Token(word, start, word)
    if kind == "number":
        return _number_token(text, start, word)
    return _string_token(text, start)


def _irregular_token(text: str, position: int) -> Token:
    char = text[position]
    if _starts_name(char):
        return _name_token(text, position, _name_end(text, position + 1))
    hint = _HINTS.get(char, f"unexpected character {char!r}")
    raise ConditionSyntaxError(hint, expression=text, position=position)


def _number_token(text: str, start: int, word: str) -> Token:
    if word.count(".") > 1:
        message = f"invalid number {shorten(word)!r}"
        raise ConditionSyntaxError(message, expression=text, position=start)
    if "." in word:
        return Token("float", start, word, float(word))
    digits = word.lstrip("0") or "0"
    # Longer than any 64-bit integer: keep int() away from huge digit strings.
    value = int(digits) if len(digits) <= 20 else 1 << 64
    return Token("int", start, word, value)


def _name_token(text: str, start: int, end: int) -> Token:
    if end < len(text) and not text[end].isascii():
        end = _name_end(text, end)  # the regex stops at marks, which names may hold
    word = text[start:end]
    keyword = KEYWORDS.get(word)
    if keyword is None:
        return Token("name", start, word, word)
    kind, value = keyword
    return Token(kind, start, word, value)


def _string_token(text: str, start: int) -> Token:
    quote = text[start]
    match = _STRING_BODY[quote].match(text, start + 1)
    if match is None:
        raise ConditionSyntaxError("unterminated string literal", expression=text, position=start)
    raw = text[start : match.end()]
    body = raw[1:-1]
    if "\\" in body:
        body = _ESCAPE.sub(lambda escape: _ESCAPED.get(escape[1], escape[1]), body)
    return Token("string", start, raw, body)


def shorten(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters for an error message."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_name(text: str) -> bool:
    """Whether ``text`` reads as one plain name (not a keyword) in a condition."""
    if not text or text in KEYWORDS or not _starts_name(text[0]):
        return False
    return _name_end(text, 1) == len(text)


def _name_end(text: str, end: int) -> int:
    length = len(text)
    while end < length and _continues_name(text[end]):
        end += 1
    return end


def _starts_name(char: str) -> bool:
    if char == "_" or char.isalpha():
        return True
    if char.isascii():
        return False
    return unicodedata.category(char) in _NAME_MARKS or _is_letter_symbol(char)


def _continues_name(char: str) -> bool:
    if char.isascii():
        return char == "_" or char.isalnum()
    return char.isalnum() or _starts_name(char) or unicodedata.category(char) == "No"


def _is_letter_symbol(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _LETTER_SYMBOLS)
