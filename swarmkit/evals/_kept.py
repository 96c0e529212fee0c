"""A live eval's journal: writes pass through, and the records of the trials stay in memory,
so grading them and learning rules from them decode nothing the eval just wrote."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from swarmkit.journal import Journal, JournalRecord, SessionInfo

KEPT_RECORDS = 50_000
"""The most records an eval keeps in memory (tens of megabytes); past it, a new session is
read back from the journal instead."""


@dataclass(kw_only=True, slots=True)
class _Store:
    """The records kept, shared by a KeepingJournal and its ``reading_kept`` twin."""

    limit: int
    sessions: dict[str, list[JournalRecord]] = field(default_factory=dict)
    count: int = 0


class KeepingJournal:
    """The eval's journal, keeping the records written through it by session.

    Everything is the journal's own (runs read what the journal holds); ``kept`` answers
    from memory for a session written whole through this object (from seq 0), and
    ``reading_kept`` gives the eval's own readers (graders, the rule learner) a journal
    whose reads do the same.
    """

    def __init__(self, journal: Journal, *, limit: int = KEPT_RECORDS) -> None:
        self.journal = journal
        """Where every record is written, and whence what is not kept is read."""
        self._store = _Store(limit=limit)
        self._reads_kept = False

    def reading_kept(self) -> KeepingJournal:
        """This journal, but its ``read`` answers from memory where ``kept`` would."""
        twin = KeepingJournal(self.journal)
        twin._store, twin._reads_kept = self._store, True
        return twin

    async def kept(self, session_id: str) -> tuple[JournalRecord, ...]:
        """The session's records, from memory when written whole through this journal."""
        records = self._store.sessions.get(session_id)
        if records and records[0].seq == 0:
            return tuple(records)
        return await self.journal.read(session_id)

    async def append(self, records: Sequence[JournalRecord]) -> None:
        """Write the step, then keep it (a step that failed to be written is not kept; nor
        is a session that began elsewhere, or once ``limit`` records are kept)."""
        await self.journal.append(records)
        if not records:
            return
        store = self._store
        held = store.sessions.get(records[0].session_id)
        if held is None:
            if records[0].seq != 0 or store.count >= store.limit:
                return
            held = store.sessions[records[0].session_id] = []
        held.extend(records)
        store.count += len(records)

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        """The session's records (the journal's; ``reading_kept``: memory's when kept)."""
        if self._reads_kept:
            return await self.kept(session_id)
        return await self.journal.read(session_id)

    async def sessions(self) -> tuple[SessionInfo, ...]:
        """The journal's sessions."""
        return await self.journal.sessions()

    async def next_seq(self, session_id: str) -> int:
        """The journal's next seq for the session."""
        return await self.journal.next_seq(session_id)

    async def delete(self, session_id: str) -> None:
        """Delete the session from the journal, and forget what was kept of it."""
        self._store.count -= len(self._store.sessions.pop(session_id, ()))
        await self.journal.delete(session_id)

    async def acquire_lease(self, session_id: str, *, owner: str, ttl: float) -> None:
        """The journal's lease."""
        await self.journal.acquire_lease(session_id, owner=owner, ttl=ttl)

    async def release_lease(self, session_id: str, *, owner: str) -> None:
        """The journal's lease, given up."""
        await self.journal.release_lease(session_id, owner=owner)
