"""Redaction for pages: swarmkit's rules for secret keys, also inside JSON held in strings."""

from __future__ import annotations

from typing import Any

from swarmkit.redaction import REDACTED, Redactor

__all__ = ["REDACTED", "is_secret_key", "redact"]

_RULES = Redactor()


def is_secret_key(key: object) -> bool:
    """Whether ``key`` has a secret word as a whole word (split at _ - . and camelCase)."""
    return _RULES.is_secret(key)


def redact(value: Any) -> Any:
    """``value`` with every secret key's value replaced, also inside JSON held in strings."""
    return _RULES.value(value, json_strings=True)
