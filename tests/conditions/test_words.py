"""A message's words as rules see them: lower case, split at anything not a letter or digit."""

from __future__ import annotations

import pytest

from swarmkit.conditions._words import message_words
from swarmkit.messages import message_facts


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Refund my Invoice #42, please!", ("refund", "my", "invoice", "42", "please")),
        ("REFUND refund Refund", ("refund",)),
        ("Straße-Café", ("straße", "café")),
        ("don't_do-that", ("don", "t", "do", "that")),
        ("日本語 テキスト", ("日本語", "テキスト")),
        ("tab\tnew\nline\u00a0nbsp", ("tab", "new", "line", "nbsp")),
        ("", ()),
        ("  ...!!!  ", ()),
        ("e-mail: ana@example.com", ("e", "mail", "ana", "example", "com")),
    ],
)
def test_words_are_lower_case_and_split_at_anything_not_a_letter_or_digit(
    text: str, words: tuple[str, ...]
) -> None:
    """The documented split, table-driven, Unicode letters and digits kept whole."""
    assert message_words(text) == words


def test_a_huge_message_of_many_distinct_characters_splits_without_error() -> None:
    """A hostile text of 20,000 distinct code points, ten times over, splits without error."""
    text = "".join(chr(code) for code in range(0x4E00, 0x4E00 + 20_000)) + " end"
    words = message_words(text * 10)
    assert words[-1] == "end"


def test_a_redacted_message_gives_no_text_facts() -> None:
    """Text holding a redacted value, or no text at all, leaves both facts null."""
    empty = {"user_message": None, "user_words": None}
    assert message_facts('{"api_key": "[redacted]"} refund') == empty
    assert message_facts(None) == empty
    assert message_facts("Refund") == {"user_message": "Refund", "user_words": ("refund",)}


def test_an_ascii_text_splits_as_the_same_text_with_a_non_ascii_letter() -> None:
    """Every ASCII character splits the same on the ASCII path as on the Unicode one."""
    text = "".join(f"W{chr(code)}x" for code in range(128))
    with_letter = message_words(text + " é")
    assert with_letter[-1] == "é"
    assert message_words(text) == with_letter[:-1]
    assert message_words("a\x1fb\x85c") == ("a", "b", "c")
