"""Input mappings: a rule handoff's payload read from the state when the rule fires."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from swarmkit._run._state import RunState, rule_state
from swarmkit.bounds import load_json

_MISSING = object()


def mapped_payload(mapping: Mapping[str, str], state: RunState) -> dict[str, Any]:
    """Each field's value at its path: the last tool's output first, then the rules' state.

    A path that neither holds leaves its field out, so the payload's validation names it.
    """
    sources = [_last_tool_output(state), rule_state(state)]
    payload: dict[str, Any] = {}
    for field, path in mapping.items():
        for source in sources:
            value = _lookup(source, path.split("."))
            if value is not _MISSING:
                payload[field] = value
                break
    return payload


def _last_tool_output(state: RunState) -> Any:
    text = state.last_tool.output
    if text is None:
        return None
    try:
        return load_json(text)
    except ValueError:
        return None


def _lookup(value: Any, parts: Sequence[str]) -> Any:
    for part in parts:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value
