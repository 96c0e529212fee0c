"""A run's token usage as AG-UI reports it on its last event: one entry per provider and model."""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any

from swarmkit.events import Event, ModelCallFinished, ModelCallStarted, SubRunEvent
from swarmkit.models import Usage


class UsageTally:
    """Adds up the usage of the model calls a run's events tell of, its sub-runs' included."""

    def __init__(self) -> None:
        self._calls: dict[tuple[str, str, int], tuple[str | None, str | None]] = {}
        self._totals: dict[tuple[str | None, str | None], Usage] = {}

    def add(self, event: Event, scope: str = "") -> None:
        """Count ``event`` if it finishes a model call (``scope``: the sub-run it is from)."""
        kind = type(event)
        if kind is ModelCallStarted:
            started: ModelCallStarted = event  # type: ignore[assignment]
            self._calls[scope, started.agent, started.turn] = (started.provider, started.model)
        elif kind is ModelCallFinished:
            self._finished(event, scope)  # type: ignore[arg-type]
        elif kind is SubRunEvent:
            sub: SubRunEvent = event  # type: ignore[assignment]
            self.add(sub.event, sub.session_id)

    def _finished(self, event: ModelCallFinished, scope: str) -> None:
        provider, model = self._calls.pop((scope, event.agent, event.turn), (None, None))
        usage = event.usage
        if usage.reported or usage.prompt_tokens or usage.completion_tokens:
            key = (provider, event.response_model or model)
            counted = self._totals.get(key)
            self._totals[key] = usage if counted is None else counted + usage

    def entries(self) -> list[dict[str, Any]] | None:
        """The usage so far, per provider and model; None when no call reported any."""
        if not self._totals:
            return None
        return [_entry(provider, model, usage) for (provider, model), usage in self._totals.items()]

    def entries_json(self) -> str | None:
        """``entries()`` as a JSON array, written directly; None when no call reported any."""
        if not self._totals:
            return None
        written = [_entry_json(p, m, usage) for (p, m), usage in self._totals.items()]
        return f"[{','.join(written)}]"


def _entry(provider: str | None, model: str | None, usage: Usage) -> dict[str, Any]:
    """One AG-UI usage entry (wire form): cache reads and writes are parts of the input, as in
    swarmkit."""
    entry: dict[str, Any] = {}
    if provider is not None:
        entry["provider"] = provider
    if model is not None:
        entry["model"] = model
    entry["inputTokens"] = usage.prompt_tokens
    entry["outputTokens"] = usage.completion_tokens
    entry["totalTokens"] = usage.prompt_tokens + usage.completion_tokens
    entry["cachedInputTokens"] = usage.cache_read_tokens
    entry["cacheWriteInputTokens"] = usage.cache_write_tokens
    return entry


_TOKENS = (
    '"inputTokens":%d,"outputTokens":%d,"totalTokens":%d,'
    '"cachedInputTokens":%d,"cacheWriteInputTokens":%d}'
)
"""The token counts of a usage entry as JSON, to its end (``%`` formats whole numbers fastest)."""


def _entry_json(provider: str | None, model: str | None, usage: Usage) -> str:
    """``_entry`` as JSON, written directly (the SSE form's)."""
    named = "{" if provider is None else '{"provider":' + encode_basestring(provider) + ","
    if model is not None:
        named += '"model":' + encode_basestring(model) + ","
    given, made = usage.prompt_tokens, usage.completion_tokens
    counts = (given, made, given + made, usage.cache_read_tokens, usage.cache_write_tokens)
    return named + _TOKENS % counts
