"""Client helpers: start a session, await it as a RunResult, decide, and follow its events."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from swarmkit.events import Event, RunFinished
from swarmkit.exceptions import ConfigurationError, JournalError, SessionNotFoundError
from swarmkit.interrupts import Decision, PendingDecision
from swarmkit.lowlevel import decision_to_data, event_from_data
from swarmkit.result import RunResult
from swarmkit.temporal._data import SessionInput
from swarmkit.temporal._workflow import (
    DECIDE_UPDATE,
    EVENTS_QUERY,
    PENDING_QUERY,
    WORKFLOW_NAME,
)

SessionHandle = WorkflowHandle[Any, dict[str, Any]]
"""A running session: the handle of its workflow (the workflow id is the session id)."""


async def start_session(
    client: Client,
    swarm: str,
    prompt: str,
    *,
    task_queue: str,
    context: Mapping[str, Any] | None = None,
    session_id: str | None = None,
    **start_options: Any,
) -> SessionHandle:
    """Start a session of the swarm registered as ``swarm``; the workflow id is the session id.

    ``start_options`` go to ``Client.start_workflow`` (timeouts, id reuse policy, memo ...).
    The handle names no run: its queries and updates reach the session's latest run, after
    any continue-as-new (``first_execution_run_id`` still names the first).
    """
    session = SessionInput(swarm=swarm, prompt=prompt, context=_json_context(context))
    started = await client.start_workflow(
        WORKFLOW_NAME,
        session,
        id=session_id or uuid.uuid4().hex,
        task_queue=task_queue,
        result_type=dict,
        **start_options,
    )
    return session_handle(client, started.id, first_execution_run_id=started.first_execution_run_id)


def session_handle(
    client: Client, session_id: str, *, first_execution_run_id: str | None = None
) -> SessionHandle:
    """The handle of a running or ended session, by its id: it follows the session's runs
    across continue-as-new (a handle pinned to a run id would stay on that run)."""
    return client.get_workflow_handle(
        session_id, first_execution_run_id=first_execution_run_id, result_type=dict
    )


async def resume_session(client: Client, session_id: str, **start_options: Any) -> SessionHandle:
    """Go on with a session whose workflow was cancelled: a new run under the same workflow id
    reads the session's records back from the journal mirror, where the cancelled run left
    them, and continues from there, as ``Swarm.resume`` does after Ctrl-C (a journaled model
    or tool call is never made again; one cut short is made again). It runs the swarm the
    session started with, on the same task queue; the workers need the mirror
    (``SwarmPlugin(journal=...)``).

    A session whose workflow did not end cancelled is refused with ``JournalError``: a running
    one goes on by itself (Temporal retries what a lost worker was doing), a completed one has
    nothing left to do. ``start_options`` go to ``Client.start_workflow``.
    """
    handle = session_handle(client, session_id)
    try:
        status = (await handle.describe()).status
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise SessionNotFoundError(session_id) from None
        raise
    if status != WorkflowExecutionStatus.CANCELED:
        shown = status.name.lower() if status is not None else "unknown"
        raise JournalError(
            f"session {session_id!r} is {shown}, not cancelled: resume_session goes on only "
            "after a cancellation (a running session goes on by itself)"
        )
    started, task_queue = await _started_with(client, handle)
    session = replace(started, records=[], mirrored={}, resumed=True)
    await client.start_workflow(
        WORKFLOW_NAME, session, id=session_id, task_queue=task_queue, **start_options
    )
    return session_handle(client, session_id)


async def _started_with(client: Client, handle: SessionHandle) -> tuple[SessionInput, str]:
    """The input and task queue of the session's latest run, from its first history event."""
    async for event in handle.fetch_history_events():
        started = event.workflow_execution_started_event_attributes
        [session] = await client.data_converter.decode(started.input.payloads, [SessionInput])
        return session, started.task_queue.name
    raise JournalError(f"session {handle.id!r} has no history to resume from")


async def run_session(
    client: Client,
    swarm: str,
    prompt: str,
    *,
    task_queue: str,
    context: Mapping[str, Any] | None = None,
    session_id: str | None = None,
    **start_options: Any,
) -> RunResult:
    """Start a session and wait for its RunResult."""
    handle = await start_session(
        client,
        swarm,
        prompt,
        task_queue=task_queue,
        context=context,
        session_id=session_id,
        **start_options,
    )
    return await session_result(handle)


async def session_result(handle: SessionHandle) -> RunResult:
    """Wait for a session to end and read its RunResult."""
    return RunResult.from_data(await handle.result())


async def decide(handle: SessionHandle, decision: Decision) -> None:
    """Deliver approve(), reject(reason) or edit(payload=...) to a session waiting for one.

    An invalid decision (nothing pending, an edit that does not validate) is refused by the
    workflow's validator: ``temporalio.client.WorkflowUpdateFailedError`` says why, and the
    session keeps waiting.
    """
    await handle.execute_update(DECIDE_UPDATE, decision_to_data(decision))


async def pending_decision(handle: SessionHandle) -> PendingDecision | None:
    """What the session waits for a human to decide, or None."""
    data = await handle.query(PENDING_QUERY, result_type=dict)
    return PendingDecision(**data) if data else None


async def session_events(handle: SessionHandle, since: int = 0) -> list[Event]:
    """The session's events from index ``since`` on (the session's indexes, which carry on
    across continue-as-new)."""
    data = await handle.query(EVENTS_QUERY, since, result_type=list)
    return [event_from_data(item) for item in data]


async def follow(
    handle: SessionHandle, *, since: int = 0, every: float = 0.2, patience: float = 30.0
) -> AsyncIterator[Event]:
    """Yield a session's events as they happen, each once and in order, until RunFinished.

    It polls the events query every ``every`` seconds. Pass a handle without a run id (as
    ``start_session`` and ``session_handle`` give) to follow the session across
    continue-as-new. While a continued run has not taken its first step the server may refuse
    a query; the follower asks again for up to ``patience`` seconds before it gives up.
    """
    seen = since
    refused = 0.0
    while True:
        try:
            fresh = await session_events(handle, seen)
        except RPCError:
            refused += every
            if refused > patience:
                raise
            await asyncio.sleep(every)
            continue
        refused = 0.0
        seen += len(fresh)
        for event in fresh:
            yield event
            if isinstance(event, RunFinished):
                return
        await asyncio.sleep(every)


def _json_context(context: Mapping[str, Any] | None) -> dict[str, Any]:
    if context is None:
        return {}
    if not isinstance(context, Mapping):
        raise ConfigurationError(f"context must be a mapping, got {type(context).__name__}")
    try:
        return dict(json.loads(json.dumps(dict(context))))
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(
            f"a session's context must be JSON data to cross into Temporal: {exc}"
        ) from exc
