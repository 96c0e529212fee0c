"""What a journal keeps of a step's data: the same data with its secrets hidden."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from swarmkit.journal._digest import tool_content_shown
from swarmkit.redaction import Redactor

OWN_NOTES = frozenset({"shadow"})
"""Notes made of the run's own values alone, fresh for the note (a shadow rule's verdict: an
agent, a turn, rule names or their digest, indices, a token count): no secret to hide, no
caller to share them with, so the journal keeps them as given, with no copy."""


def kept(redact: Redactor | None, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` as the journal keeps it (a copy)."""
    clean = dict(data)
    if redact is None:
        return clean
    # Secrets enter a run through the caller's context, tools' updates and arguments,
    # payloads and the decisions a person is asked for.
    for key in _SECRET_CARRIERS.intersection(clean):
        clean[key] = redact.value(clean[key])
    if "arguments" in clean or "proposed_arguments" in clean:
        # Most records (a run's start and end, an agent's start, a model call) hold neither:
        # the membership tests above cost no call.
        _hide_arguments(redact, clean, data)
    if "request" in clean and not _plain_texts(redact, clean["request"]):
        clean["request"] = redact.in_text(clean["request"])  # it quotes arguments and payloads
    return clean


def _hide_arguments(redact: Redactor, clean: dict[str, Any], data: Mapping[str, Any]) -> None:
    for key in ("arguments", "proposed_arguments"):
        if isinstance(clean.get(key), str):
            clean[key] = redact.json_text(clean[key])
    if isinstance(clean.get("problem"), str) and clean.get("arguments") != data.get("arguments"):
        # A validation problem quotes the values it refused, a secret one among them.
        clean["problem"] = _QUOTED_INPUT.sub("", clean["problem"])


def _plain_texts(redact: Redactor, summary: object) -> bool:
    """Whether a request's summary (text, and lists and dicts of it) holds no text that may
    quote a secret: then it is kept as it is, not copied. It is built for its record alone."""
    if type(summary) is str:
        return not redact.may_hold_secret(summary)
    items: Iterable[object]
    if type(summary) is dict:
        items = summary.values()
    elif type(summary) is list:
        items = summary
    else:
        return type(summary) is int or summary is None
    # A loop, not all() over a generator: each item would cost a resumption.
    for item in items:
        if type(item) is str:
            if redact.may_hold_secret(item):
                return False
        elif not _plain_texts(redact, item):
            return False
    return True


def outcome_shown(redact: Redactor, outcome: dict[str, Any]) -> dict[str, Any]:
    """A tool's outcome with secrets in its text hidden (a JSON result's secret keys)."""
    content = outcome.get("content")
    if not isinstance(content, str):
        return outcome
    shown = tool_content_shown(redact, content)
    return outcome if shown == content else {**outcome, "content": shown}


def response_shown(redact: Redactor, response: dict[str, Any]) -> dict[str, Any]:
    """A model's response with secrets in the arguments of its tool calls hidden."""
    calls = response.get("tool_calls")
    if not calls:
        return response
    shown = [
        {**call, "arguments": hidden}
        if isinstance(arguments := call.get("arguments"), str)
        and (hidden := redact.json_text(arguments)) is not arguments
        else call
        for call in calls
    ]
    # Copied only when an argument hid something: the response is built for its record alone.
    changed = any(s is not c for s, c in zip(shown, calls, strict=True))
    return {**response, "tool_calls": shown} if changed else response


_SECRET_CARRIERS = frozenset({"context", "outcome", "payload", "pending"})

_QUOTED_INPUT = re.compile(r" \(got .*?\)(?=; |\. Expected a JSON object|$)", re.DOTALL)
"""The refused value a problem quotes: `` (got "sk-...")`` before the next problem or the end."""
