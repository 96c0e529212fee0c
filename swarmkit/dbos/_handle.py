"""SessionHandle: follow, decide, cancel and await a DBOS session from any launched process."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbos import DBOS

# TODO(seam): Swarm.check_decision(pending, decision), one rule for every way a decision comes
from swarmkit._run._decisions import check_decision
from swarmkit.dbos._workflow import DECISION_TOPIC, PENDING_EVENT
from swarmkit.exceptions import JournalError, SessionNotFoundError
from swarmkit.interrupts import Decision, PendingDecision, decision_to_data
from swarmkit.result import RunResult

if TYPE_CHECKING:
    from swarmkit.dbos._app import DurableSwarms


class SessionHandle:
    """A session by id: its status, what it waits for, a decision for it, its result."""

    def __init__(self, session_id: str, app: DurableSwarms) -> None:
        self.session_id = session_id
        self._app = app

    async def status(self) -> str:
        """DBOS's status of the session: ENQUEUED, PENDING, SUCCESS, ERROR or CANCELLED."""
        found = await DBOS.get_workflow_status_async(self.session_id)
        if found is None:
            raise SessionNotFoundError(self.session_id)
        return str(found.status)

    async def result(self) -> RunResult:
        """Wait for the session's end and return its result (its failure raises here)."""
        handle = await DBOS.retrieve_workflow_async(self.session_id)
        data = await handle.get_result()
        return RunResult.from_data(data)

    async def pending(self) -> PendingDecision | None:
        """The decision the session waits for now, or None."""
        data = await DBOS.get_event_async(self.session_id, PENDING_EVENT, timeout_seconds=0)
        return PendingDecision(**data) if data else None

    async def decide(self, decision: Decision) -> None:
        """Send a human decision; refused here (JournalError, or the edit's validation error)
        when the session waits for nothing or the decision does not fit what it waits for."""
        pending = await DBOS.get_event_async(self.session_id, PENDING_EVENT, timeout_seconds=0)
        if not pending:
            raise JournalError(
                f"session {self.session_id!r} is not waiting for a decision; send one only "
                "while pending() names what it waits for"
            )
        check_decision(self._app.durable_swarm(await self._swarm()).spec, pending, decision)
        await DBOS.send_async(self.session_id, decision_to_data(decision), DECISION_TOPIC)

    async def cancel(self) -> None:
        """Cancel the session: it stops at its next step and is not recovered."""
        await DBOS.cancel_workflow_async(self.session_id)

    async def _swarm(self) -> str:
        found = await DBOS.get_workflow_status_async(self.session_id)
        if found is None or found.input is None:
            raise SessionNotFoundError(self.session_id)
        args: Any = found.input["args"]
        return str(args[0])
