"""A live eval's journal: writes pass through, and each trial's records stay in memory until
the trial is graded, so grading decodes nothing it just wrote."""

from __future__ import annotations

from collections.abc import Sequence

from swarmkit.journal import Journal, JournalRecord, SessionInfo


class KeepingJournal:
    """The eval's journal, keeping the records written through it by session.

    Reads, leases and everything else are the journal's own; only ``take`` answers from
    memory, and only for a session written whole through this object (from seq 0).
    """

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        """Where every record is written."""
        self._kept: dict[str, list[JournalRecord]] = {}

    async def take(self, session_ids: Sequence[str]) -> list[tuple[JournalRecord, ...]]:
        """Each session's records, from memory when written whole through this journal, else
        read back; either way memory forgets them (a graded trial is not read again)."""
        taken = []
        for session_id in session_ids:
            kept = self._kept.pop(session_id, None)
            if kept and kept[0].seq == 0:
                taken.append(tuple(kept))
            else:
                taken.append(await self.journal.read(session_id))
        return taken

    async def append(self, records: Sequence[JournalRecord]) -> None:
        """Write the step, then keep it (a step that failed to be written is not kept)."""
        await self.journal.append(records)
        if records:
            self._kept.setdefault(records[0].session_id, []).extend(records)

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        """The journal's records of the session."""
        return await self.journal.read(session_id)

    async def sessions(self) -> tuple[SessionInfo, ...]:
        """The journal's sessions."""
        return await self.journal.sessions()

    async def next_seq(self, session_id: str) -> int:
        """The journal's next seq for the session."""
        return await self.journal.next_seq(session_id)

    async def delete(self, session_id: str) -> None:
        """Delete the session from the journal, and forget what was kept of it."""
        self._kept.pop(session_id, None)
        await self.journal.delete(session_id)

    async def acquire_lease(self, session_id: str, *, owner: str, ttl: float) -> None:
        """The journal's lease."""
        await self.journal.acquire_lease(session_id, owner=owner, ttl=ttl)

    async def release_lease(self, session_id: str, *, owner: str) -> None:
        """The journal's lease, given up."""
        await self.journal.release_lease(session_id, owner=owner)
