"""A check the serving tests share: no refused request leaves a session leased."""

from __future__ import annotations

from swarmkit.exceptions import SessionBusyError
from swarmkit.journal import Journal

PROBE = "lease-probe"
"""The owner the check leases each session as (and releases at once)."""


async def assert_no_session_leased(journal: Journal, *also: str) -> None:
    """A new writer can lease every session the journal holds, and each of ``also`` (ids a
    refused request named), at once: nothing was left holding one."""
    ids = {info.session_id for info in await journal.sessions()} | set(also)
    for session_id in sorted(ids):
        try:
            await journal.acquire_lease(session_id, owner=PROBE, ttl=60)
        except SessionBusyError as busy:
            raise AssertionError(f"{session_id} is still leased by {busy.owner}") from None
        await journal.release_lease(session_id, owner=PROBE)
