"""The conformance kit's durable engines: DBOS and Temporal workers in this process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from dbos import error as dbos_error
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
)
from temporalio.common import RetryPolicy
from temporalio.exceptions import CancelledError
from temporalio.service import RPCError
from temporalio.worker import Worker

from swarmkit import Swarm
from swarmkit.dbos import DurableSwarms, SessionHandle
from swarmkit.exceptions import JournalError
from swarmkit.interrupts import Decision, PendingDecision
from swarmkit.journal import Journal
from swarmkit.temporal import (
    ActivityOptions,
    SwarmPlugin,
    decide,
    pending_decision,
    resume_session,
    session_handle,
    session_result,
    start_session,
)
from swarmkit.testing.conformance import Ended

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
            if await handle.status() == "CANCELLED":
                await handle.resume()
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
        """Run the session here, cancel it while the model call hangs; back once its
        execution stopped (the model call in flight preempted)."""
        async with self._worker(swarm, journal) as app:
            running = asyncio.ensure_future(app.run_session(SWARM, prompt, session_id=session_id))
            await asyncio.wait_for(reached.wait(), LIMIT)
            await app.session_handle(session_id).cancel()
            try:
                await asyncio.wait_for(running, LIMIT)
            except dbos_error.DBOSException as stopped:
                if "cancelled" in str(stopped):
                    return
                raise
            raise AssertionError("the cancelled session finished anyway")

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


QUICK = ActivityOptions(
    start_to_close_timeout=timedelta(seconds=2),
    retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=100)),
)
"""Short attempts, so an attempt lost with a stopped worker is retried soon."""


class TemporalEngine:
    """Each call runs a Temporal worker in this process, on a task queue of the session's
    own, with the check's swarm and model; the next call's worker takes the session up."""

    def __init__(self, address: str) -> None:
        self._address = address

    async def run(self, swarm: Swarm, prompt: str, *, session_id: str, journal: Journal) -> Ended:
        """Start the session; back when it finishes or waits."""
        async with self._worker(swarm, journal, session_id) as client:
            handle = await start_session(
                client, SWARM, prompt, task_queue=_queue(session_id), session_id=session_id
            )
            return await _temporal_settled(handle)

    async def resume(
        self, swarm: Swarm, session_id: str, *, journal: Journal, decision: Decision | None = None
    ) -> Ended:
        """Send the decision (if any); back when the session finishes or waits again."""
        async with self._worker(swarm, journal, session_id) as client:
            handle = session_handle(client, session_id)
            if (await handle.describe()).status == WorkflowExecutionStatus.CANCELED:
                handle = await resume_session(client, session_id)
            if decision is not None:
                await _decided(handle, decision)
            return await _temporal_settled(handle, after=decision is not None)

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
        """Start the session, cancel its workflow while the model call hangs; back once the
        workflow ended cancelled (its records mirrored)."""
        async with self._worker(swarm, journal, session_id) as client:
            handle = await start_session(
                client, SWARM, prompt, task_queue=_queue(session_id), session_id=session_id
            )
            await asyncio.wait_for(reached.wait(), LIMIT)
            await handle.cancel()
            try:
                await asyncio.wait_for(handle.result(), LIMIT)
            except WorkflowFailureError as ended:
                if isinstance(ended.cause, CancelledError):
                    return
                raise
            raise AssertionError("the cancelled workflow finished anyway")

    @asynccontextmanager
    async def _worker(
        self, swarm: Swarm, journal: Journal, session_id: str
    ) -> AsyncIterator[Client]:
        models = {str(getattr(p.model, "name", "")): p.model for p in swarm.plans.values()}
        plugin = SwarmPlugin(
            swarms={SWARM: swarm},
            models=models,
            journal=journal,
            model_options=QUICK,
            tool_options=QUICK,
        )
        client = await Client.connect(self._address, plugins=[plugin])
        async with Worker(client, task_queue=_queue(session_id)):
            yield client


async def _decided(handle: Any, decision: Decision) -> None:
    """``decide``, a refusal (nothing waits, the session ended) raised as the kit's error."""
    try:
        await decide(handle, decision)
    except (WorkflowUpdateFailedError, RPCError) as refused:
        raise JournalError(f"the session refused the decision: {refused}") from refused


def _queue(session_id: str) -> str:
    return f"kit-{session_id}"


async def _temporal_settled(handle: Any, *, after: bool = False) -> Ended:
    """The session's end, or what it waits for (a new pause, after a decision)."""
    first = None if not after else await pending_decision(handle)
    ended = asyncio.ensure_future(session_result(handle))

    async def waiting() -> PendingDecision:
        async for _ in handle.fetch_history_events(wait_new_event=True):
            pending = await pending_decision(handle)
            if pending is not None and pending != first:
                return pending
        raise AssertionError("the session's history ended")

    paused = asyncio.ensure_future(waiting())
    done, _ = await asyncio.wait({ended, paused}, timeout=LIMIT, return_when="FIRST_COMPLETED")
    for task in (ended, paused):
        if task not in done:
            task.cancel()
    if ended in done:
        return Ended.of(ended.result())
    if paused in done:
        return Ended(pending=paused.result())
    raise AssertionError("the Temporal session neither finished nor waited")
