"""Canonical digests of model requests, computed incrementally so long runs stay linear."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any

from swarmkit.journal._writer import RequestHistory
from swarmkit.messages import (
    AssistantMessage,
    Message,
    ProviderState,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from swarmkit.models import ModelRequest
from swarmkit.redaction import Redactor

if TYPE_CHECKING:
    from hashlib import _Hash


class RequestDigester:
    """Digests the requests of one run; each message is hashed once, each history extended.

    A digest covers the agent, settings, tools, instructions and every message, so a changed
    prompt, instruction, tool schema or history changes it. An agent's next request usually
    extends its previous one, so the hash of the shared history is resumed, not recomputed.
    The caches keep the hashed objects alive, so an id is never reused during the run.
    """

    def __init__(self, static: PartCache | None = None, redact: Redactor | None = None) -> None:
        self._static = static if static is not None else PartCache()
        # Messages are digested as the journal keeps them (secrets in tool arguments and
        # results hidden), so a replay that serves the journal's copies digests the same.
        self._parts = PartCache(redact=redact)
        self._redact = redact
        self._histories: dict[str, tuple[tuple[Message, ...], Any]] = {}
        self._extensions: dict[str, _Extension] = {}
        self._heads: dict[str, tuple[tuple[object, ...], _Hash]] = {}
        self._asked: dict[str, tuple[ModelRequest, _Hash]] = {}

    def digest(self, request: ModelRequest, history: RequestHistory | None = None) -> str:
        """The request's sha256 as hex; with ``history``, of the request whose messages are
        its first (the system message) followed by the history's (others are not read).

        Both forms of one request have the same digest; the second costs what was appended
        since the agent's previous request, not its whole history.
        """
        known = self._asked.get(request.agent)
        if known is not None and known[0] is request:
            # The agent asks the very same request again (its history aside): a replayed step.
            head = known[1].copy()
        else:
            head = self._head(request)
            if request.messages:
                # The system message's text alone identifies it (as the journal would quote it:
                # a handoff payload in it has its secret fields hidden).
                system = str(request.messages[0].content)
                if self._redact is not None and self._redact.may_hold_secret(system):
                    system = self._redact.in_text(system)
                head.update(hashlib.sha256(system.encode()).digest())
            self._asked[request.agent] = (request, head.copy())
        if history is None:
            head.update(self._history(request.agent, request.messages[1:]).digest())
        else:
            head.update(self._extended(request.agent, history))
        return head.hexdigest()

    def _head(self, request: ModelRequest) -> _Hash:
        """A hasher over the agent, settings, tools and output schema; an agent's requests
        mostly share these very objects, so the last one's hasher is copied, not rebuilt."""
        parts = (request.settings, request.tools, request.output_schema)
        known = self._heads.get(request.agent)
        if known is not None:
            (settings, tools, schema), hasher = known
            if settings is parts[0] and tools is parts[1] and schema is parts[2]:
                return hasher.copy()
        head = hashlib.sha256(request.agent.encode())
        head.update(self._static.digest(request.settings))
        for spec in request.tools:
            head.update(self._static.digest(spec))
        if request.output_schema is not None:
            head.update(self._static.digest(request.output_schema))
        self._heads[request.agent] = (parts, head.copy())
        return head

    def _extended(self, agent: str, history: RequestHistory) -> bytes:
        """The sha256 of the agent's history (its running hasher read, not copied: reading a
        digest leaves a hasher as it was)."""
        known = self._extensions.get(agent)
        if known is None or not known.continues(history):
            known = _Extension(view=history.view, items=history.items, hasher=hashlib.sha256())
            for message in history.view:
                known.hasher.update(self._parts.digest(message))
            self._extensions[agent] = known
        for message in history.items[known.count : history.count]:
            known.hasher.update(self._parts.digest(message))
        known.count = history.count
        known.last = history.items[history.count - 1] if history.count else None
        return known.hasher.digest()  # type: ignore[no-any-return]

    def _history(self, agent: str, messages: tuple[Message, ...]) -> Any:
        known, hasher = self._histories.get(agent, ((), None))
        if hasher is None or messages[: len(known)] != known:
            known, hasher = (), hashlib.sha256()
        hasher = hasher.copy()
        for message in messages[len(known) :]:
            hasher.update(self._parts.digest(message))
        self._histories[agent] = (messages, hasher)
        return hasher


@dataclass(kw_only=True, slots=True)
class _Extension:
    """How far one agent's history has been hashed: its view, its list, and the count."""

    view: tuple[Message, ...]
    """The view hashed first."""
    items: Sequence[Message]
    """The list whose first ``count`` items were hashed after it."""
    hasher: Any
    """The running sha256 over the parts so far."""
    count: int = 0
    """How many of ``items`` the hasher holds."""
    last: Message | None = None
    """The last of them, checked again so a list edited in place is not trusted."""

    def continues(self, history: RequestHistory) -> bool:
        """Whether ``history`` is this one with items appended (checked by identity)."""
        if history.view is not self.view or history.items is not self.items:
            return False
        if history.count < self.count:
            return False
        return self.count == 0 or history.items[self.count - 1] is self.last


class PartCache:
    """Digests of request parts by object identity; a swarm shares one for its tools and settings.

    Entries keep their objects alive, so an id is never reused while cached; past ``limit``
    entries the cache starts over, which bounds it when parts are made afresh each turn.
    """

    def __init__(self, limit: int = 4096, *, redact: Redactor | None = None) -> None:
        # Two dicts, not one of (object, digest) pairs: a pair per message would be one more
        # object for the garbage collector to scan at every collection for the run's length.
        self._objects: dict[int, object] = {}
        self._digests: dict[int, bytes] = {}
        self._limit = limit
        self._redact = redact

    def digest(self, item: object) -> bytes:
        """The sha256 of ``item``'s canonical form."""
        key = id(item)
        if self._objects.get(key) is item:
            return self._digests[key]
        text = _message_text(item, self._redact)
        digest = hashlib.sha256(text or _canonical(_fields(item))).digest()
        if len(self._objects) >= self._limit:
            self._objects.clear()
            self._digests.clear()
        self._objects[key] = item
        self._digests[key] = digest
        return digest


def _message_text(item: object, redact: Redactor | None = None) -> bytes | None:
    """A message's canonical bytes, built directly: the common case, and the hot one; with
    ``redact``, tool arguments and results as the journal keeps them."""
    if type(item) is ToolMessage:
        # The commonest part of a long run's history, written with no list in between.
        text = _tool_text(item, redact)
        if text is not None:
            return text.encode("utf-8", "surrogatepass")
    elif type(item) is AssistantMessage and item.provider_state is None:
        text = _assistant_text(item, redact)
        if text is not None:
            return text.encode("utf-8", "surrogatepass")
    match item:
        case SystemMessage(content=content) | UserMessage(content=content):
            parts: list[object] = [item.kind, content]
        case AssistantMessage(content=content, tool_calls=calls):
            parts = [item.kind, content, [_call_parts(c, redact) for c in calls]]
            if item.provider_state is not None:
                # Only a message with state has this part, so older digests stay as they were.
                parts.append(_state_text(item.provider_state))
        case ToolMessage(tool_call_id=call_id, name=name, content=content):
            shown = content if redact is None else tool_content_shown(redact, content)
            parts = [item.kind, call_id, name, shown]
        case _:
            return None
    # surrogatepass: a lone surrogate (text that is not valid Unicode) hashes as itself.
    return _json_list(parts).encode("utf-8", "surrogatepass")


def _tool_text(item: ToolMessage, redact: Redactor | None) -> str | None:
    """``_json_list`` of a tool message's parts, written at once; None unless all are text."""
    content = item.content
    shown = content if redact is None else tool_content_shown(redact, content)
    kind, call_id, name = item.kind, item.tool_call_id, item.name
    if type(kind) is str and type(call_id) is str and type(name) is str and type(shown) is str:
        return f"[{_quoted(kind)}, {_quoted(call_id)}, {_quoted(name)}, {_quoted(shown)}]"
    return None


def _assistant_text(item: AssistantMessage, redact: Redactor | None) -> str | None:
    """``_json_list`` of an assistant message's parts (it has no provider state), written at
    once; None unless its parts are text (content also None)."""
    content, kind = item.content, item.kind
    if type(kind) is not str or (content is not None and type(content) is not str):
        return None
    calls = []
    for call in item.tool_calls:
        if call.provider_state is not None:
            return None
        call_id, name, arguments = call.id, call.name, call.arguments
        if redact is not None and redact.may_hold_secret(arguments):
            arguments = redact.json_text(arguments)
        if not (type(call_id) is str and type(name) is str and type(arguments) is str):
            return None
        calls.append(f"[{_quoted(call_id)}, {_quoted(name)}, {_quoted(arguments)}]")
    said = "null" if content is None else _quoted(content)
    return f"[{_quoted(kind)}, {said}, [{', '.join(calls)}]]"


def tool_content_shown(redact: Redactor, content: str) -> str:
    """A tool result's text as the journal keeps it: secret values of JSON in it hidden."""
    if not redact.may_hold_secret(content):
        return content
    return redact.in_text(redact.json_text(content))  # type: ignore[no-any-return]


def _call_parts(call: ToolCall, redact: Redactor | None) -> list[object]:
    arguments = call.arguments
    if redact is not None and redact.may_hold_secret(arguments):
        arguments = redact.json_text(arguments)
    parts: list[object] = [call.id, call.name, arguments]
    if call.provider_state is not None:
        parts.append(_state_text(call.provider_state))
    return parts


def _state_text(state: ProviderState) -> str:
    """Provider state as one canonical text (its JSON, keys sorted)."""
    return _canonical({"provider": state.provider, "data": state.data}).decode()


def _json_list(parts: list[object]) -> str:
    """``json.dumps(parts, ensure_ascii=False)`` for lists of text, None and such lists,
    written directly (the encoder's set-up costs more than these few items); other values
    go through the encoder, so the bytes are the same either way."""
    pieces = []
    for part in parts:
        if type(part) is str:
            pieces.append(_quoted(part))
        elif part is None:
            pieces.append("null")
        elif type(part) is list:
            pieces.append(_json_list(part))
        else:
            return _MESSAGE_ENCODER.encode(parts)
    return "[" + ", ".join(pieces) + "]"


_MESSAGE_ENCODER = json.JSONEncoder(ensure_ascii=False)
"""``json.dumps(parts, ensure_ascii=False)``, without building an encoder per call."""
_quoted: Callable[[str], str] = json.encoder.encode_basestring
"""A str as a JSON string, non-ASCII kept: what the encoder writes for one (C when built)."""


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
