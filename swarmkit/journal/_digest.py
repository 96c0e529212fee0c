"""Canonical digests of model requests, computed incrementally so long runs stay linear."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any

from swarmkit.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from swarmkit.models import ModelRequest


class RequestDigester:
    """Digests the requests of one run; each message is hashed once, each history extended.

    A digest covers the agent, settings, tools, instructions and every message, so a changed
    prompt, instruction, tool schema or history changes it. An agent's next request usually
    extends its previous one, so the hash of the shared history is resumed, not recomputed.
    The caches keep the hashed objects alive, so an id is never reused during the run.
    """

    def __init__(self, static: PartCache | None = None) -> None:
        self._static = static if static is not None else PartCache()
        self._parts = PartCache()
        self._histories: dict[str, tuple[tuple[Message, ...], Any]] = {}

    def digest(self, request: ModelRequest) -> str:
        """The request's sha256 as hex."""
        head = hashlib.sha256(request.agent.encode())
        head.update(self._static.digest(request.settings))
        for spec in request.tools:
            head.update(self._static.digest(spec))
        if request.output_schema is not None:
            head.update(self._static.digest(request.output_schema))
        if request.messages:
            # The system message is new each call; its text alone identifies it.
            head.update(hashlib.sha256(str(request.messages[0].content).encode()).digest())
        head.update(self._history(request.agent, request.messages[1:]).digest())
        return head.hexdigest()

    def _history(self, agent: str, messages: tuple[Message, ...]) -> Any:
        known, hasher = self._histories.get(agent, ((), None))
        if hasher is None or messages[: len(known)] != known:
            known, hasher = (), hashlib.sha256()
        hasher = hasher.copy()
        for message in messages[len(known) :]:
            hasher.update(self._parts.digest(message))
        self._histories[agent] = (messages, hasher)
        return hasher


class PartCache:
    """Digests of request parts by object identity; a swarm shares one for its tools and settings.

    Entries keep their objects alive, so an id is never reused while cached; past ``limit``
    entries the cache starts over, which bounds it when parts are made afresh each turn.
    """

    def __init__(self, limit: int = 4096) -> None:
        self._entries: dict[int, tuple[object, bytes]] = {}
        self._limit = limit

    def digest(self, item: object) -> bytes:
        """The sha256 of ``item``'s canonical form."""
        cached = self._entries.get(id(item))
        if cached is not None and cached[0] is item:
            return cached[1]
        digest = hashlib.sha256(_message_text(item) or _canonical(_fields(item))).digest()
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[id(item)] = (item, digest)
        return digest


def _message_text(item: object) -> bytes | None:
    """A message's canonical bytes, built directly: the common case, and the hot one."""
    match item:
        case SystemMessage(content=content) | UserMessage(content=content):
            parts: list[object] = [item.kind, content]
        case AssistantMessage(content=content, tool_calls=calls):
            parts = [item.kind, content, [[c.id, c.name, c.arguments] for c in calls]]
        case ToolMessage(tool_call_id=call_id, name=name, content=content):
            parts = [item.kind, call_id, name, content]
        case _:
            return None
    # surrogatepass: a lone surrogate (text that is not valid Unicode) hashes as itself.
    return json.dumps(parts, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _fields(item: object) -> dict[str, Any]:
    data = {f.name: getattr(item, f.name) for f in fields(item)}  # type: ignore[arg-type]
    # Who spoke and whether a tool failed are ours, never sent to the API: not part of a request.
    data.pop("agent", None)
    data.pop("is_error", None)
    return data


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_plain).encode()


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return _fields(value)
    if isinstance(value, Mapping):
        return dict(value)
    return str(value)
