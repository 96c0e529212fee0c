"""An engine's in-workflow journal: the rules log kept elsewhere, records mirrored back."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence

from swarmkit.journal._memory import InMemoryJournal
from swarmkit.journal._records import Journal, JournalRecord, SessionInfo
from swarmkit.shadow import RULES_LOG

MIRROR_LEASE_SECONDS = 60.0
"""How long a mirror write holds a session's writer lease in the journal."""


async def append_mirrored(
    journal: Journal,
    records: Iterable[JournalRecord],
    *,
    owner: str,
    ttl: float = MIRROR_LEASE_SECONDS,
) -> None:
    """Write the records ``journal`` does not hold yet, each session under its writer lease.

    An engine (Temporal, DBOS) keeps a run's records in its own history and copies them here;
    a copy a crash cut short is retried whole, so records already written are skipped.
    """
    sessions: dict[str, list[JournalRecord]] = {}
    for record in records:
        sessions.setdefault(record.session_id, []).append(record)
    for session_id, own in sessions.items():
        await journal.acquire_lease(session_id, owner=owner, ttl=ttl)
        try:
            start = await journal.next_seq(session_id)
            fresh = [record for record in own if record.seq >= start]
            if fresh:
                await journal.append(fresh)
        finally:
            await journal.release_lease(session_id, owner=owner)


class RulesLogElsewhere(ABC):
    """A session journal kept in ``local`` (an engine's in-workflow journal, mirrored out at
    pauses and at the end) whose rules log lives elsewhere: the shared journal every worker
    reads demotions from and appends audits to.

    An engine subclasses it with the three ways to reach that log (in a recorded step or an
    activity, so a replayed workflow gets the same answers back); every other session, and
    the leases, stay in ``local``.
    """

    def __init__(self, local: InMemoryJournal) -> None:
        self.local = local

    def keeps_elsewhere(self, session_id: str) -> bool:
        """Whether ``session_id``'s records live elsewhere: the rules log's do."""
        return session_id == RULES_LOG

    @abstractmethod
    async def append_rules_log(self, records: Sequence[JournalRecord]) -> None:
        """Append to the rules log elsewhere; raise ``JournalError`` when its store refuses."""
        raise NotImplementedError

    @abstractmethod
    async def read_rules_log(self) -> tuple[JournalRecord, ...]:
        """The rules log's records, read elsewhere."""
        raise NotImplementedError

    @abstractmethod
    async def rules_log_next_seq(self) -> int:
        """The rules log's next seq (its version), read elsewhere."""
        raise NotImplementedError

    async def append(self, records: Sequence[JournalRecord]) -> None:
        """A session's step locally; a rules log record elsewhere."""
        if records and self.keeps_elsewhere(records[0].session_id):
            await self.append_rules_log(records)
        else:
            await self.local.append(records)

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        """A session's records; the rules log's read elsewhere."""
        if self.keeps_elsewhere(session_id):
            return await self.read_rules_log()
        return await self.local.read(session_id)

    async def next_seq(self, session_id: str) -> int:
        """The next seq; the rules log's read elsewhere."""
        if self.keeps_elsewhere(session_id):
            return await self.rules_log_next_seq()
        return await self.local.next_seq(session_id)

    async def sessions(self) -> tuple[SessionInfo, ...]:
        """The in-workflow sessions (what the mirror copies)."""
        return await self.local.sessions()

    async def delete(self, session_id: str) -> None:
        """Delete an in-workflow session."""
        await self.local.delete(session_id)

    async def acquire_lease(self, session_id: str, *, owner: str, ttl: float) -> None:
        """The in-workflow journal's lease."""
        await self.local.acquire_lease(session_id, owner=owner, ttl=ttl)

    async def release_lease(self, session_id: str, *, owner: str) -> None:
        """The in-workflow journal's lease."""
        await self.local.release_lease(session_id, owner=owner)
