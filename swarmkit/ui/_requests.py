"""What the model saw, in full: each model call's request rebuilt by the swarm, as page data.

Rebuilding replays the session (zero model calls), so it is done once per session and record
count, when a person first opens a call's request, and kept for the next calls they open.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import OrderedDict
from typing import Any

from swarmkit.exceptions import ReplayDivergenceError
from swarmkit.journal import Journal
from swarmkit.messages import SystemMessage, messages_to_data
from swarmkit.models import ModelRequest
from swarmkit.result import SentRequest
from swarmkit.swarm import Swarm

KEPT_SESSIONS = 8
"""How many sessions' rebuilt requests are kept."""

NEEDS_SWARM = (
    "the journal keeps a summary of each request only; start swarmkit ui with "
    "--swarm module:attribute to see the whole request (every message as sent, the tools' "
    "schemas, the settings)"
)


class RequestsNotShown(Exception):
    """Why a call's whole request cannot be shown (the page keeps the journal's summary)."""


class SentRequests:
    """The rebuilt requests of the sessions a person looks at, one session replay each."""

    def __init__(self, swarm: Swarm, journal: Journal) -> None:
        self._swarm = swarm
        self._journal = journal
        # Each session's replay (by record count) as a task: calls opened together share it.
        self._kept: OrderedDict[str, tuple[int, asyncio.Task[tuple[SentRequest, ...]]]] = (
            OrderedDict()
        )

    async def of_call(self, session_id: str, records: int, seq: int) -> dict[str, Any]:
        """The request the model call at record ``seq`` was sent, as page data;
        ``RequestsNotShown`` when the session no longer replays, or ``seq`` is no model call."""
        for sent in await self._of_session(session_id, records):
            if sent.seq == seq:
                return request_data(sent)
        raise RequestsNotShown(f"record {seq} of session {session_id!r} is no model call")

    async def _of_session(self, session_id: str, records: int) -> tuple[SentRequest, ...]:
        kept = self._kept.get(session_id)
        if kept is None or kept[0] != records:
            kept = (records, asyncio.create_task(self._swarm.requests(session_id, self._journal)))
            self._kept[session_id] = kept
            while len(self._kept) > KEPT_SESSIONS:
                self._kept.popitem(last=False)
        self._kept.move_to_end(session_id)
        try:
            return await asyncio.shield(kept[1])
        except ReplayDivergenceError as exc:
            first_line = str(exc).split("\n", 1)[0]
            raise RequestsNotShown(
                f"{first_line}; the swarm's current code no longer rebuilds this session's "
                "requests, so the journal's summary is shown"
            ) from exc


def request_data(sent: SentRequest) -> dict[str, Any]:
    """One call's whole request as JSON data (redacted again by the API before it is sent)."""
    request = sent.request
    messages = request.messages
    # The instructions lead as the system message; the rest is the conversation as sent.
    led = bool(messages) and isinstance(messages[0], SystemMessage)
    return {
        "seq": sent.seq,
        "agent": sent.agent,
        "turn": sent.turn,
        "instructions": messages[0].content if led else "",
        "payload": sent.payload,
        "messages": messages_to_data(messages[1:] if led else messages),
        "tools": [
            {
                "name": spec.name,
                "description": spec.description,
                "parameters": dict(spec.parameters),
                "strict": spec.strict,
            }
            for spec in request.tools
        ],
        "settings": _settings(request),
        "output_schema": None
        if request.output_schema is None
        else {"name": request.output_schema.name, "schema": dict(request.output_schema.schema)},
    }


def _settings(request: ModelRequest) -> dict[str, Any]:
    """The settings that were set (None is the API's default, not sent)."""
    settings = dataclasses.asdict(request.settings)
    return {k: v for k, v in settings.items() if v is not None and v != {}}
