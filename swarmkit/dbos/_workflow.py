"""The session workflow DBOS runs: the swarm's loop, unchanged, with the session's seams."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from dbos import DBOS

from swarmkit.dbos._rules import SessionJournal
from swarmkit.dbos._steps import (
    START_STEP,
    SessionState,
    StepToolRunner,
    enter_session,
    leave_session,
    start_facts,
)
from swarmkit.events import Event, RunFinished
from swarmkit.exceptions import ConfigurationChangedError, ConfigurationError
from swarmkit.interrupts import Decision, PendingDecision
from swarmkit.lowlevel import decision_from_data, event_to_data
from swarmkit.result import RunResult

if TYPE_CHECKING:
    from swarmkit.dbos._app import DurableSwarms
    from swarmkit.swarm import Swarm

WORKFLOW_NAME = "swarmkit.session"
PENDING_EVENT = "swarmkit.pending"
EVENTS_STREAM = "swarmkit.events"
DECISION_TOPIC = "swarmkit.decision"

DECISION_POLL_SECONDS = 3600.0
"""How long one wait for a decision lasts before it waits again (a session waits for ever)."""

_ACTIVE: list[DurableSwarms] = []


def activate(app: DurableSwarms) -> None:
    """Make ``app`` the one this process's session workflows run with."""
    _ACTIVE[:] = [app]


def deactivate(app: DurableSwarms) -> None:
    """Forget ``app`` (after DBOS is destroyed)."""
    if _ACTIVE and _ACTIVE[0] is app:
        _ACTIVE.clear()


def active() -> DurableSwarms:
    """The DurableSwarms launched in this process."""
    if not _ACTIVE:
        raise ConfigurationError(
            "a swarmkit session workflow ran in a process with no launched DurableSwarms; "
            "build DurableSwarms(...) and call launch() before DBOS runs sessions"
        )
    return _ACTIVE[0]


@DBOS.workflow(name=WORKFLOW_NAME)
async def session_workflow(swarm_name: str, prompt: str, context: dict[str, Any] | None) -> Any:
    """One swarm session; the workflow id is the session id; returns its RunResult as data."""
    app = active()
    swarm = app.durable_swarm(swarm_name)
    session_id = DBOS.workflow_id
    assert session_id is not None
    facts = await DBOS.run_step_async(
        {"name": START_STEP}, start_facts, swarm.fingerprint(), app.stream_events
    )
    _check_fingerprint(session_id, swarm_name, facts["fingerprint"], swarm.fingerprint())
    state = SessionState(session_id=session_id, now=facts["at"], mirror=app.journal)
    token = enter_session(state)
    session = swarm.with_seams(
        runtime=state.runtime(),
        tool_runner=StepToolRunner(state),
        decisions=MessageDecisions(state, swarm),
    )
    options: dict[str, Any] = {
        "context": context,
        "session_id": session_id,
        # The rules log (demotions, audits) is the shared journal's, read in recorded steps.
        "journal": SessionJournal(state.journal, app.journal),
    }
    try:
        # Whether the session publishes its events is fixed at its start: a worker set
        # otherwise that recovers it must take the same steps.
        if facts["publish"]:
            result = await _published(session.stream(prompt, **options))
        else:
            result = await session.run(prompt, **options)
    finally:
        leave_session(token)
    await state.write_mirror()
    return result.to_data()


async def _published(events: AsyncGenerator[Event, None]) -> RunResult:
    """Drive the run to its end, each event written to the session's stream (a recovered
    run's writes before the crash are recorded already, so a reader sees each once)."""
    result: RunResult | None = None
    async for event in events:
        await DBOS.write_stream_async(EVENTS_STREAM, event_to_data(event))
        if isinstance(event, RunFinished):
            result = event.result
    await DBOS.close_stream_async(EVENTS_STREAM)
    assert result is not None, "a run's last event is RunFinished"
    return result


class MessageDecisions:
    """Waits, durably, for a decision sent to the session as a DBOS message."""

    def __init__(self, state: SessionState, swarm: Swarm) -> None:
        self._state = state
        self._swarm = swarm

    async def decide(self, pending: PendingDecision) -> Decision | None:
        """Publish what the session waits for, mirror the journal, then wait for a message."""
        shown = asdict(pending)
        await DBOS.set_event_async(PENDING_EVENT, shown)
        await self._state.write_mirror()
        while True:
            data = await DBOS.recv_async(DECISION_TOPIC, timeout_seconds=DECISION_POLL_SECONDS)
            if data is None:
                continue
            decision = decision_from_data(data)
            if self._swarm.check_decision(shown, decision):
                continue  # the sender's check refuses it already; a raw send is ignored
            await DBOS.set_event_async(PENDING_EVENT, None)
            return decision


def _check_fingerprint(
    session_id: str, swarm: str, recorded: dict[str, Any], current: dict[str, Any]
) -> None:
    if recorded == current:
        return
    changed = sorted(k for k in set(current) | set(recorded) if current.get(k) != recorded.get(k))
    raise ConfigurationChangedError(
        f"session {session_id!r} was started with another configuration of swarm {swarm!r} "
        f"(changed: {', '.join(changed)}); this worker refuses it. Run the old code with its "
        "application_version until its sessions end",
        session_id=session_id,
        changed=changed,
    )
