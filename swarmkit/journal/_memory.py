"""InMemoryJournal: the Journal protocol in a dict, for tests and the offline demo."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from swarmkit.exceptions import SessionNotFoundError
from swarmkit.journal._many import decode_many
from swarmkit.journal._records import (
    JournalRecord,
    Kinds,
    Leading,
    Lease,
    SessionInfo,
    check_continues,
    check_lease_args,
    check_step,
    decode_data,
    encode_data,
    merge_agents,
    status_of,
    step_facts,
    take_lease,
)


@dataclass(kw_only=True, slots=True)
class _Session:
    """One session's stored records and summary; mutable, private to the journal."""

    created: int
    """Creation order, to break ties between equal start times."""
    started_at: float
    """Clock time of the first append."""
    updated_at: float
    """Clock time of the latest append."""
    records: list[tuple[str, str, float]] = field(default_factory=list)
    """(kind, data as JSON text, time) per record, in seq order."""
    finished: bool = False
    """Whether a ``run_finished`` record was appended."""
    stop_reason: str | None = None
    """Stop reason of the latest ``run_finished`` record."""
    prompt: str | None = None
    """Prompt of the first ``run_started`` record."""
    agents: tuple[str, ...] = ()
    """Agents that started a turn, in order of first start."""


class InMemoryJournal:
    """A journal that lives as long as the object; behaves exactly as ``SQLiteJournal``.

    Data is stored as the same JSON text SQLite would hold, so a test that passes against
    memory also passes against a file: non-JSON-safe data fails here too, tuples come back
    as lists, and mutating a dict after appending it does not change the journal.

    Every method does its work without awaiting, so concurrent tasks on one event loop see
    each step whole. It holds no lock (a workflow sandbox refuses to create one): to share a
    journal between threads, use ``SQLiteJournal``.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._sessions: dict[str, _Session] = {}
        self._created = itertools.count()
        self._leases: dict[str, Lease] = {}

    async def append(self, records: Sequence[JournalRecord]) -> None:
        """Store one step atomically; its first seq must be the session's next seq."""
        if not records:
            return
        session_id = check_step(records)
        now = self._clock()
        encoded = [(r.kind, encode_data(r), now if r.at is None else r.at) for r in records]
        facts = step_facts(records)
        session = self._sessions.get(session_id)
        check_continues(session_id, len(session.records) if session else 0, records[0].seq)
        if session is None:
            # The first record's own time: an imported session keeps when it started.
            started = encoded[0][2]
            session = _Session(created=next(self._created), started_at=started, updated_at=now)
            self._sessions[session_id] = session
        session.records.extend(encoded)
        session.updated_at = now
        session.prompt = session.prompt if session.prompt is not None else facts.prompt
        session.agents = merge_agents(session.agents, facts.agents)
        if facts.finished:
            session.finished = True
            session.stop_reason = facts.stop_reason

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        """Every record of the session in seq order."""
        session = self._sessions.get(session_id)
        stored = list(session.records) if session else []
        if not stored:
            raise SessionNotFoundError(session_id)
        return tuple(
            JournalRecord(session_id=session_id, seq=seq, kind=kind, data=decode_data(data), at=at)
            for seq, (kind, data, at) in enumerate(stored)
        )

    async def read_many(
        self, session_ids: Sequence[str], *, kinds: Kinds = None, leading: Leading = None
    ) -> dict[str, tuple[JournalRecord, ...]]:
        """Each listed session's records, only ``kinds`` when given (only those decoded), in
        seq order; a session absent is left out (``leading``: see ``read_many``)."""
        wanted = None if kinds is None else frozenset({*kinds, *(leading or ())})
        rows = [
            (session_id, seq, kind, data, at)
            for session_id in dict.fromkeys(session_ids)
            if (session := self._sessions.get(session_id)) is not None
            for seq, (kind, data, at) in enumerate(session.records)
            if wanted is None or kind in wanted
        ]
        return decode_many(rows, leading)

    async def sessions(self) -> tuple[SessionInfo, ...]:
        """A summary of every session, the latest started first."""
        items = sorted(
            self._sessions.items(),
            key=lambda item: (item[1].started_at, item[1].created),
            reverse=True,
        )
        return tuple(_info(session_id, session) for session_id, session in items)

    async def next_seq(self, session_id: str) -> int:
        """The seq the session's next record must have; 0 for a new session."""
        session = self._sessions.get(session_id)
        return len(session.records) if session else 0

    async def delete(self, session_id: str) -> None:
        """Remove the session and its records."""
        if self._sessions.pop(session_id, None) is None:
            raise SessionNotFoundError(session_id)

    async def acquire_lease(self, session_id: str, *, owner: str, ttl: float) -> None:
        """Take or renew the session's writer lease (held in this object, for this process)."""
        check_lease_args(owner, ttl)
        now = self._clock()
        held = self._leases.get(session_id)
        self._leases[session_id] = take_lease(session_id, held, owner=owner, ttl=ttl, now=now)

    async def release_lease(self, session_id: str, *, owner: str) -> None:
        """Give up the lease if ``owner`` holds it."""
        held = self._leases.get(session_id)
        if held is not None and held.owner == owner:
            del self._leases[session_id]


def _info(session_id: str, session: _Session) -> SessionInfo:
    return SessionInfo(
        session_id=session_id,
        records=len(session.records),
        started_at=session.started_at,
        updated_at=session.updated_at,
        status="finished" if session.finished else "open",
        stop_reason=session.stop_reason,
        prompt=session.prompt,
        agents=session.agents,
        state=status_of(session.stop_reason) if session.finished else "running",
    )
