"""What a journal keeps of a step's data: the same data with its secrets hidden."""

from __future__ import annotations

import re
from collections.abc import Mapping
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
    for key in ("arguments", "proposed_arguments"):
        if isinstance(clean.get(key), str):
            clean[key] = redact.json_text(clean[key])
    if isinstance(clean.get("problem"), str) and clean.get("arguments") != data.get("arguments"):
        # A validation problem quotes the values it refused, a secret one among them.
        clean["problem"] = _QUOTED_INPUT.sub("", clean["problem"])
    if "request" in clean:  # its rendered turns quote arguments and payloads
        clean["request"] = redact.in_text(clean["request"])
    return clean


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
        {**call, "arguments": redact.json_text(call["arguments"])}
        if isinstance(call.get("arguments"), str)
        else call
        for call in calls
    ]
    return {**response, "tool_calls": shown}


_SECRET_CARRIERS = frozenset({"context", "outcome", "payload", "pending"})

_QUOTED_INPUT = re.compile(r" \(got .*?\)(?=; |\. Expected a JSON object|$)", re.DOTALL)
"""The refused value a problem quotes: `` (got "sk-...")`` before the next problem or the end."""
