"""The conformance kit's engines beyond this process: DBOS workflows of an in-process worker."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from swarmkit import Swarm
from swarmkit.dbos import DurableSwarms, SessionHandle
from swarmkit.interrupts import Decision
from swarmkit.journal import Journal
from swarmkit.testing.conformance import Ended, NotChecked

LIMIT = 60.0
SWARM = "kit"


class DBOSEngine:
    """Each call launches a DBOS worker in this process with the check's swarm, and stops it
    when the session finishes or waits: the next call's worker recovers the session."""

    def __init__(self, database_url: str) -> None:
        self._url = database_url

    async def run(self, swarm: Swarm, prompt: str, *, session_id: str, journal: Journal) -> Ended:
        """Start the session; back when it finishes or waits."""
        async with self._worker(swarm, journal) as app:
            handle = await app.start_session(SWARM, prompt, session_id=session_id)
            return await _settled(handle)

    async def resume(
        self, swarm: Swarm, session_id: str, *, journal: Journal, decision: Decision | None = None
    ) -> Ended:
        """Send the decision (if any) to the recovered session; back when it finishes or waits."""
        async with self._worker(swarm, journal) as app:
            handle = app.client.session_handle(session_id)
            if decision is not None:
                await handle.decide(decision)
                return Ended.of(await asyncio.wait_for(handle.result(), LIMIT))
            return await _settled(handle)

    async def replay(self, swarm: Swarm, session_id: str, *, journal: Journal) -> Ended:
        """Replay the session's mirrored records in this process."""
        return Ended.of(await swarm.replay(session_id, journal))

    async def cancel_midway(
        self,
        swarm: Swarm,
        prompt: str,
        *,
        session_id: str,
        journal: Journal,
        reached: asyncio.Event,
    ) -> None:
        """A cancelled DBOS session is not recovered: nothing to continue."""
        raise NotChecked("a cancelled DBOS workflow is final; DBOS sessions continue by recovery")

    @asynccontextmanager
    async def _worker(self, swarm: Swarm, journal: Journal) -> AsyncIterator[DurableSwarms]:
        app = DurableSwarms(
            {SWARM: swarm}, database_url=self._url, journal=journal, polling_interval=0.05
        )
        async with app:
            yield app


async def _settled(handle: SessionHandle) -> Ended:
    """The session's end, or what it waits for, whichever comes first."""
    ended = asyncio.ensure_future(handle.result())
    waiting = asyncio.ensure_future(handle.pending(wait=LIMIT))
    done, _ = await asyncio.wait({ended, waiting}, timeout=LIMIT, return_when="FIRST_COMPLETED")
    for task in (ended, waiting):
        if task not in done:
            task.cancel()
    if ended in done:
        return Ended.of(ended.result())
    if waiting in done and waiting.result() is not None:
        return Ended(pending=waiting.result())
    raise AssertionError("the DBOS session neither finished nor waited")
