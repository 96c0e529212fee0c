"""A message's words as rules see them: lower case, split at anything not a letter or digit.

A message's words are its text lower-cased (``str.lower``) and split at every character that
is not a letter or a digit in Unicode's sense (``str.isalnum``): ``"Refund my Invoice #42,
please!"`` is ``('refund', 'my', 'invoice', '42', 'please')``; ``"Straße-Café"`` is
``('straße', 'café')``; an apostrophe or an underscore splits too (``"don't"`` is ``don``,
``t``). Each word is kept once, in the order it first appears. The split is one pass over the
text (no regular expression), so its time is linear in the message's length.
"""

from __future__ import annotations

from typing import Final

_TABLE_LIMIT: Final = 1 << 16


class _Table(dict[int, int]):
    """The translate table: a letter or digit maps to itself, anything else to a space."""

    def __missing__(self, code: int) -> int:
        mapped = code if chr(code).isalnum() else 32
        if len(self) < _TABLE_LIMIT:  # a hostile text of a million distinct characters
            self[code] = mapped
        return mapped


_TABLE: Final = _Table({code: code if chr(code).isalnum() else 32 for code in range(128)})
_ASCII_TABLE: Final = bytes(code if chr(code).isalnum() else 32 for code in range(128)) + bytes(
    [32] * 128
)
"""The same table for an ASCII text's bytes, which ``bytes.translate`` reads at C speed."""


def message_words(text: str) -> tuple[str, ...]:
    """The words of ``text``: lower-cased, split at anything not a letter or digit, each kept
    once in the order it first appears (see the module docs)."""
    if text.isascii():  # most messages: a byte table, not a dict lookup a character
        return tuple(dict.fromkeys(text.lower().encode().translate(_ASCII_TABLE).decode().split()))
    return tuple(dict.fromkeys(text.lower().translate(_TABLE).split()))
