"""Plain-text pieces the console views share: one-line text, token counts, a run's ending."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from swarmkit.console._line import displayable, one_line, plural
from swarmkit.models import Usage
from swarmkit.result import RunResult

__all__ = [
    "compact_json",
    "displayable",
    "one_line",
    "plural",
    "result_lines",
    "tokens",
]


def result_lines(result: RunResult) -> list[str]:
    """How a run ended: the stop reason and its counts, then the error, pending step or answer."""
    lines = [
        f"  stop:   {result.stop_reason} ({result.final_agent} was active) after "
        f"{plural(result.turns, 'model call')}, {plural(len(result.handoffs), 'handoff')}, "
        f"{plural(result.total_usage.total_tokens, 'token')}"
    ]
    if result.limit is not None:
        lines.append(f"  limit:  {result.limit.message} (agent {result.limit.agent})")
    if result.cost is not None:
        lines.append(f"  cost:   {result.cost:g}")
    if result.error is not None:
        lines.append(f"  error:  {one_line(str(result.error), limit=300)}")
    if result.pending is not None:
        pending = result.pending
        what = pending.tool_name or pending.target
        lines.append(f"  waits:  {pending.kind} {what} {compact_json(pending.payload or {})}")
    answer = result.final_output_text or result.final_output
    if answer:
        lines.append(f"  answer: {one_line(str(answer), limit=400)}")
    return lines


def tokens(usage: Usage | Mapping[str, Any]) -> str:
    """Token counts as ``441 tokens (434 in, 7 out)``; ``usage unknown`` when never reported."""
    if isinstance(usage, Usage):
        total, prompt, completion = usage.total_tokens, usage.prompt_tokens, usage.completion_tokens
        reported = usage.reported
    else:
        total = int(usage.get("total_tokens") or 0)
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        reported = usage.get("reported", True) is not False
    if not reported and not total:
        return "usage unknown"
    counts = f"{plural(total, 'token')} ({prompt} in, {completion} out)"
    return counts if reported else f"at least {counts}"


def compact_json(value: object) -> str:
    """``value`` as one line of JSON, for payloads and context."""
    text: str = json.dumps(value, ensure_ascii=False, default=str)
    return text
