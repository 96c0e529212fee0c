"""One-line text for a terminal, on the standard library: the listing commands need no more."""

from __future__ import annotations

import re


def plural(count: int, noun: str) -> str:
    """``1 model call``, ``2 model calls``: a count with its noun in agreement."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


_SURROGATE = re.compile("[\ud800-\udfff]")


def displayable(text: str) -> str:
    """``text`` as a terminal can take it: each lone surrogate shown as U+FFFD.

    Journals keep text that is not valid Unicode exactly; only what is printed is replaced.
    """
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def one_line(text: str, *, limit: int = 120) -> str:
    """``text`` on one line, whitespace folded, cut with an ellipsis past ``limit``."""
    flat = " ".join(displayable(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
