"""Copying an engine's mirrored records into a shared journal, idempotently."""

from __future__ import annotations

from collections.abc import Iterable

from swarmkit.journal._records import Journal, JournalRecord

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
