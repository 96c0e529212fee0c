"""The sessions list: a snapshot of ``Journal.sessions()``, filtered, searched and paged.

``sessions()`` may take seconds on a big journal, so the list serves its latest snapshot and
refreshes it in the background once it is older than ``max_age`` (stale while revalidating).
The per-row figures (agents, handoffs, model calls, tokens) need each session's records; they
are read for the rows of a page only, and cached until the session's record count or latest
write changes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from swarmkit.exceptions import SwarmkitError
from swarmkit.journal import (
    Journal,
    JournalRecord,
    SessionInfo,
    Status,
    session_status,
    turn_of,
)
from swarmkit.lowlevel import EVAL_RUN_MARK, EVAL_RUN_STATE

MAX_PAGE = 200
"""The most rows one page holds."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionQuery:
    """What the sessions list asks for."""

    status: str = ""
    """``open``, ``finished`` or a stop reason (``interrupted``, ``cycle``, ...); empty: any."""
    agent: str = ""
    """Only sessions whose trail holds this agent; empty: any."""
    search: str = ""
    """Only sessions whose id, prompt or agents contain this text (any case); empty: any."""
    offset: int = 0
    """How many matching rows to skip."""
    limit: int = 50
    """How many rows to return, at most ``MAX_PAGE``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionFigures:
    """What a session's records tell beyond its summary."""

    trail: tuple[str, ...]
    """The agents that had control, in order."""
    handoffs: int
    """How many handoffs were performed."""
    model_calls: int
    """How many model calls were journaled."""
    tokens: int
    """Total tokens over every model call."""
    state: Status | str = "running"
    """The session's state in the one vocabulary (``swarmkit.journal.session_status``), or
    ``eval run`` for an eval run's manifest, which lists trials and is never a run."""
    first_at: float | None = None
    """The run's time of its first record (kept by export and import), if it has one."""
    last_at: float | None = None
    """The run's time of its latest record, if it has one."""


def figures(records: Sequence[JournalRecord]) -> SessionFigures:
    """The trail, handoffs, model calls and tokens of a session's records."""
    trail: list[str] = []
    handoffs = calls = tokens = 0
    for record in records:
        if record.kind == "agent_started":
            trail.append(str(record.data.get("agent")))
        elif record.kind == "handoff":
            handoffs += 1
        elif record.kind == "model_call":
            calls += 1
            tokens += _tokens(record.data.get("response"))
    return SessionFigures(
        trail=tuple(trail),
        handoffs=handoffs,
        model_calls=calls,
        tokens=tokens,
        state=_state(records),
        first_at=records[0].at if records else None,
        last_at=records[-1].at if records else None,
    )


def _state(records: Sequence[JournalRecord]) -> str:
    if records and records[0].session_id.startswith(EVAL_RUN_MARK):
        return EVAL_RUN_STATE
    return session_status(records)


def _tokens(response: object) -> int:
    """A journaled response's total tokens; 0 when a damaged record holds no number there."""
    usage = response.get("usage") if isinstance(response, Mapping) else None
    total = usage.get("total_tokens") if isinstance(usage, Mapping) else None
    return total if isinstance(total, int) and not isinstance(total, bool) else 0


def status_of(info: SessionInfo) -> str:
    """What the list shows as status: ``interrupted`` for a paused run, else open or finished
    (an eval run's manifest: ``eval run``)."""
    if info.session_id.startswith(EVAL_RUN_MARK):
        return EVAL_RUN_STATE
    return "interrupted" if info.stop_reason == "interrupted" else info.status


class SessionList:
    """Pages of a journal's sessions for the viewer's list."""

    def __init__(
        self,
        journal: Journal,
        *,
        listing: Journal | None = None,
        max_age: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``listing`` (default ``journal``) answers ``sessions()``; a second connection to
        the same store keeps a slow listing from holding up reads of single sessions."""
        self._journal = journal
        self._listing = listing
        self._max_age = max_age
        self._clock = clock
        self._snapshot: tuple[SessionInfo, ...] | None = None
        self._taken_at = 0.0
        self._refreshing: asyncio.Task[None] | None = None
        self._figures: dict[str, tuple[tuple[int, float], SessionFigures]] = {}
        self._last_filter: tuple[tuple[int, str, str], list[SessionInfo]] | None = None
        self._took = 0.0

    async def page(self, query: SessionQuery) -> dict[str, Any]:
        """One page of rows that match ``query``, with the total when it is known."""
        snapshot = await self._current()
        limit = max(1, min(query.limit, MAX_PAGE))
        offset = max(0, query.offset)
        matching = self._filtered(snapshot, query)
        if query.status in _READ_TO_TELL:
            # The summary says waiting for both: each candidate's records tell them apart.
            matching = [i for i in matching if (await self.figures_of(i)).state == query.status]
        if not query.agent:
            rows = [await self._row(info) for info in matching[offset : offset + limit]]
            found = {"rows": rows, "total": len(matching), "more": offset + limit < len(matching)}
        else:
            found = await self._agent_page(iter(matching), query.agent, offset, limit)
        # The rows came from an old snapshot while a new one is read: the page says so, and
        # asks again soon.
        return {**found, "refreshing": self._refreshing is not None}

    def _filtered(
        self, snapshot: tuple[SessionInfo, ...], query: SessionQuery
    ) -> Sequence[SessionInfo]:
        # Paging through one filter reuses its rows instead of scanning the snapshot again.
        if not (query.status or query.search):
            return snapshot
        key = (id(snapshot), query.status, query.search)
        if self._last_filter is None or self._last_filter[0] != key:
            found = [info for info in snapshot if _matches(info, query)]
            self._last_filter = (key, found)
        return self._last_filter[1]

    async def settled(self) -> None:
        """Wait for a background refresh in flight, if any (for tests and benchmarks)."""
        if self._refreshing is not None:
            await self._refreshing

    async def figures_of(self, info: SessionInfo) -> SessionFigures:
        """The session's figures, read again when it changed: a new record count, or a later
        write (a session deleted and run again under its id may end with as many records)."""
        cached = self._figures.get(info.session_id)
        written = (info.records, info.updated_at)
        if cached is not None and cached[0] == written:
            return cached[1]
        try:
            found = figures(await self._journal.read(info.session_id))
        except SwarmkitError:
            # A session with a corrupt record still gets its row; its page says what is wrong.
            found = SessionFigures(trail=(), handoffs=0, model_calls=0, tokens=0)
        self._figures[info.session_id] = (written, found)
        return found

    async def _agent_page(
        self, candidates: Iterator[SessionInfo], agent: str, offset: int, limit: int
    ) -> dict[str, Any]:
        # An agent filter needs every candidate's trail: read lazily, stop once the page is full.
        rows: list[dict[str, Any]] = []
        skipped = 0
        for info in candidates:
            if agent not in (await self.figures_of(info)).trail:
                continue
            if skipped < offset:
                skipped += 1
                continue
            if len(rows) == limit:
                return {"rows": rows, "total": None, "more": True}
            rows.append(await self._row(info))
        return {"rows": rows, "total": offset + len(rows), "more": False}

    async def _row(self, info: SessionInfo) -> dict[str, Any]:
        found = await self.figures_of(info)
        return {
            "session_id": info.session_id,
            "status": status_of(info),
            "state": found.state,
            "stop_reason": info.stop_reason,
            "agents": list(found.trail),
            "handoffs": found.handoffs,
            "model_calls": found.model_calls,
            "tokens": found.tokens,
            # The run's own times when its records carry them: an imported session keeps its.
            "started_at": found.first_at if found.first_at is not None else info.started_at,
            "duration": _duration(info, found),
            "records": info.records,
            "prompt": info.prompt,
            **dict(zip(("conversation", "turn"), turn_of(info.session_id), strict=True)),
        }

    async def _current(self) -> tuple[SessionInfo, ...]:
        if self._snapshot is None:
            await self._refresh()
        elif self._clock() - self._taken_at > self._refresh_after() and self._refreshing is None:
            self._refreshing = asyncio.create_task(self._refresh())
        assert self._snapshot is not None
        return self._snapshot

    def _refresh_after(self) -> float:
        # A listing that takes seconds (a big journal) is redone at most a tenth of the time,
        # so a busy background refresh never starves the requests it serves.
        return max(self._max_age, 10 * self._took)

    async def _refresh(self) -> None:
        started = self._clock()
        try:
            self._snapshot = await self._list()
            self._taken_at = self._clock()
            self._took = self._taken_at - started
        finally:
            self._refreshing = None

    async def _list(self) -> tuple[SessionInfo, ...]:
        if self._listing is None:
            return await self._journal.sessions()
        # A separate connection lists in a worker thread, so the viewer's loop keeps serving.
        listing = self._listing
        return await asyncio.to_thread(lambda: asyncio.run(listing.sessions()))


def _matches(info: SessionInfo, query: SessionQuery) -> bool:
    if query.search and not _found(query.search, info):
        return False
    # The summary holds no Ctrl-C flag: a cancelled session's summary says waiting, and
    # ``page`` reads the records of the sessions these let through.
    if query.status in _READ_TO_TELL:
        return info.state == "waiting"
    statuses = (info.status, info.stop_reason, status_of(info), info.state)
    return not query.status or query.status in statuses


_READ_TO_TELL = frozenset({"waiting", "cancelled"})


def _found(text: str, info: SessionInfo) -> bool:
    """Whether the search text is in the session's id, prompt or agents (any case)."""
    needle = text.casefold()
    return (
        needle in info.session_id.casefold()
        or needle in (info.prompt or "").casefold()
        or any(needle in agent.casefold() for agent in info.agents)
    )


def _duration(info: SessionInfo, found: SessionFigures) -> float:
    """Seconds from the first record to the latest: the run's times, else the journal's."""
    if found.first_at is not None and found.last_at is not None:
        return max(0.0, found.last_at - found.first_at)
    return max(0.0, info.updated_at - info.started_at)
