"""Which keys are secret, and what a redacted value looks like."""

from __future__ import annotations

import json

import pytest

from swarmkit.ui._redact import REDACTED, is_secret_key, redact


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("api_token", True),
        ("accessToken", True),
        ("X-Api-Key", True),
        ("db_password", True),
        ("APIKey", True),
        ("auth", True),
        ("session.cookie", True),
        ("aws_credentials", True),
        ("prompt_tokens", False),
        ("max_tokens", False),
        ("monkey", False),
        ("keyboard", False),
        ("session_id", False),
        ("author", False),
    ],
)
def test_a_key_is_secret_when_a_whole_word_of_it_is(key: str, secret: bool) -> None:
    """Words split at _ - . and camelCase; usage figures and look-alikes are not secret."""
    assert is_secret_key(key) is secret


def test_redact_replaces_values_under_secret_keys_at_any_depth() -> None:
    """Nested mappings and lists are walked; other values stay as they are."""
    value = {"user": {"password": "p", "name": "n"}, "items": [{"apiKey": "k"}], "total_tokens": 3}

    assert redact(value) == {
        "user": {"password": REDACTED, "name": "n"},
        "items": [{"apiKey": REDACTED}],
        "total_tokens": 3,
    }


def test_redact_reaches_into_json_held_in_a_string() -> None:
    """Tool arguments and results are JSON text; their secret keys are redacted too."""
    text = json.dumps({"token": "t", "query": "q"})

    assert json.loads(redact(text)) == {"token": REDACTED, "query": "q"}
    assert redact("not json {") == "not json {"
