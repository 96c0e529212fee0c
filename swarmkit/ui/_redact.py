"""Redaction for pages: values stored under secret-looking keys never leave the viewer.

A private stand-in until the journal package shares one redaction function (issue 10).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

SECRET_WORDS = frozenset(
    {
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "authorization",
        "auth",
        "cookie",
        "credential",
        "credentials",
    }
)
"""Words that make a key secret when they are a whole word of it."""

REDACTED = "[redacted]"
"""What a page shows instead of a secret value."""

_SEPARATORS = re.compile(r"[_\-.\s]+")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def is_secret_key(key: object) -> bool:
    """Whether ``key`` has a secret word as a whole word (split at _ - . and camelCase)."""
    if not isinstance(key, str):
        return False
    words = (w.lower() for part in _SEPARATORS.split(key) for w in _WORDS.findall(part))
    return any(word in SECRET_WORDS for word in words)


def redact(value: Any) -> Any:
    """``value`` with every secret key's value replaced, also inside JSON held in strings."""
    if isinstance(value, Mapping):
        return {k: REDACTED if is_secret_key(k) else redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return _redact_json_text(value)
    return value


def _redact_json_text(text: str) -> str:
    # Tool arguments and results travel as JSON text; their keys are secret keys too.
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return text
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    cleaned = redact(parsed)
    return text if cleaned == parsed else json.dumps(cleaned, ensure_ascii=False)
