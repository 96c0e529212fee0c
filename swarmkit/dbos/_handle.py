"""SessionHandle: follow, decide, cancel and await a DBOS session from any process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dbos import error as dbos_error

from swarmkit.dbos._steps import START_STEP
from swarmkit.dbos._workflow import DECISION_TOPIC, EVENTS_STREAM, PENDING_EVENT
from swarmkit.events import Event
from swarmkit.exceptions import (
    ConfigurationError,
    HandoffPayloadError,
    JournalError,
    SessionNotFoundError,
    SwarmkitError,
    ToolArgumentsError,
)
from swarmkit.interrupts import Decision, FieldProblem, PendingDecision
from swarmkit.lowlevel import decision_to_data, event_from_data
from swarmkit.result import RunResult

if TYPE_CHECKING:
    from dbos import WorkflowStatus

    from swarmkit.dbos._client import SessionClient

RESULT_POLL_SECONDS = 0.05
"""How soon a handle waiting for a result first looks again at the system database."""

RESULT_POLL_MAX_SECONDS = 0.4
"""The longest a handle waiting for a result goes between looks: the interval doubles up to
it, so hundreds of handles waiting on long sessions do not keep the database busy."""

_UNDER_WAY = frozenset({"PENDING", "ENQUEUED"})


class SessionHandle:
    """A session by id: its status, what it waits for, a decision for it, its result."""

    def __init__(self, session_id: str, client: SessionClient) -> None:
        self.session_id = session_id
        self._client = client

    async def status(self) -> str:
        """DBOS's status of the session: ENQUEUED, PENDING, SUCCESS, ERROR or CANCELLED."""
        return str((await self._status()).status)

    async def result(self) -> RunResult:
        """Wait for the session's end and return its result (its failure raises here)."""
        interval = RESULT_POLL_SECONDS
        while (await self._status()).status in _UNDER_WAY:
            await asyncio.sleep(interval)
            interval = min(interval * 2, RESULT_POLL_MAX_SECONDS)
        handle: Any = await self._client.dbos.retrieve_workflow_async(self.session_id)
        data = await handle.get_result(polling_interval_sec=RESULT_POLL_SECONDS)
        return RunResult.from_data(data)

    async def pending(self, *, wait: float = 0.0) -> PendingDecision | None:
        """The decision the session waits for, or None; ``wait`` seconds for its first pause
        (the database is watched, nothing sleeps in the caller)."""
        data = await self._pending(wait)
        return PendingDecision(**data) if data else None

    async def decide(self, decision: Decision) -> None:
        """Send a human decision; refused here (JournalError, or the edit's validation error)
        when the session waits for nothing or the decision does not fit what it waits for.
        A decision sent while the session's worker is down is kept and read on recovery."""
        pending = await self._pending()
        if not pending:
            raise JournalError(
                f"session {self.session_id!r} is not waiting for a decision; send one only "
                "while pending() names what it waits for"
            )
        problems = self._client.swarm(await self.swarm()).check_decision(pending, decision)
        if problems:
            raise refusal(pending, problems)
        await self._client.dbos.send_async(
            self.session_id, decision_to_data(decision), DECISION_TOPIC
        )

    async def follow(self, *, since: int = 0) -> AsyncIterator[Event]:
        """The session's events from index ``since`` on, as they happen, until it ends.

        Only a session started by a worker with ``stream_events=True`` (``swarmkit dbos
        worker --stream-events``) publishes its events: for any other, ConfigurationError
        says so, rather than an empty stream. A queued session is waited for until a worker
        starts it, since the worker that starts it decides."""
        if not await self._publishes():
            raise ConfigurationError(
                f"session {self.session_id!r} does not publish its events: the worker that "
                "started it was not streaming them. Start workers with stream_events=True "
                "(swarmkit dbos worker --stream-events) to follow new sessions; read this "
                "one's events from its journal (swarmkit show)"
            )
        stream = self._client.dbos.read_stream_async(
            self.session_id, EVENTS_STREAM, offset=since, polling_interval_sec=RESULT_POLL_SECONDS
        )
        async for data in stream:
            yield event_from_data(data)

    async def _publishes(self) -> bool:
        """Whether the session writes its events to its stream: recorded by its first step
        (no write of its own), which a queued session has yet to take."""
        while True:
            status = await self._status()
            steps = await self._client.dbos.list_workflow_steps_async(self.session_id, limit=1)
            if steps and steps[0]["function_name"] == START_STEP:
                output: Any = steps[0]["output"]
                return bool(output.get("publish")) if isinstance(output, Mapping) else False
            if status.status not in ("ENQUEUED", "PENDING", "DELAYED"):
                return False  # it ended before its first step: nothing was published
            await asyncio.sleep(RESULT_POLL_SECONDS)

    async def cancel(self) -> None:
        """Cancel the session: a model call in flight is stopped, anything else at its next
        step, and it is not recovered until ``resume()``."""
        await self._client.dbos.cancel_workflow_async(self.session_id)

    async def resume(self) -> None:
        """Go on with a cancelled session: a worker of its version executes it again from the
        top, every recorded step (model and tool calls, decisions) read back rather than made
        again, and goes on live from the step the cancellation cut short. A session that is not
        cancelled is refused with ``JournalError`` (a pending one goes on by itself)."""
        status = await self.status()
        if status != "CANCELLED":
            raise JournalError(
                f"session {self.session_id!r} is {status}, not CANCELLED: resume() goes on "
                "only after a cancellation (a pending session goes on by itself)"
            )
        await self._client.dbos.resume_workflow_async(self.session_id)

    async def swarm(self) -> str:
        """The name of the swarm the session runs."""
        status = await self._status()
        args: Any = status.input["args"] if status.input else [None]
        return str(args[0])

    async def _pending(self, wait: float = 0.0) -> dict[str, Any] | None:
        await self._status()
        data = await self._client.dbos.get_event_async(
            self.session_id, PENDING_EVENT, timeout_seconds=wait
        )
        return dict(data) if data else None

    async def _status(self) -> WorkflowStatus:
        try:
            handle: Any = await self._client.dbos.retrieve_workflow_async(self.session_id)
            status: WorkflowStatus = await handle.get_status()
        except dbos_error.DBOSNonExistentWorkflowError:
            raise SessionNotFoundError(self.session_id) from None
        return status


def refusal(pending: Mapping[str, Any], problems: Sequence[FieldProblem]) -> SwarmkitError:
    """The error a refused edit raises, of the kind ``resume`` raises for the same pause."""
    text = "; ".join(f"{p.field}: {p.message}" if p.field else p.message for p in problems)
    waiting = "the session keeps waiting: send a corrected decision"
    kind, target, tool = pending.get("kind"), str(pending.get("target")), pending.get("tool_name")
    if kind == "tool":
        return ToolArgumentsError(
            f"the edited arguments for tool {tool!r} do not validate: {text}; {waiting}",
            tool_name=str(tool),
        )
    if kind in ("handoff", "agent"):
        return HandoffPayloadError(
            f"the edited payload for the handoff to {target!r} does not validate: {text}; "
            f"{waiting}",
            tool_name=f"transfer_to_{target}",
            target=target,
        )
    return ConfigurationError(f"the edit is refused: {text}; {waiting}")
