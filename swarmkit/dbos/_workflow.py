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
from swarmkit.events import Event, RunFinished, RunStarted
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
    decisions = MessageDecisions(state, swarm)
    session = swarm.with_seams(
        runtime=state.runtime(), tool_runner=StepToolRunner(state), decisions=decisions
    )
    # Whether the session publishes its events is fixed at its start: a worker set otherwise
    # that recovers it must take the same steps.
    publisher = _Publisher(session_id) if facts["publish"] else None
    if publisher is not None:
        session = session.with_observers(publisher)
    # The rules log (demotions, audits) is the shared journal's, read in recorded steps.
    journal = SessionJournal(state.journal, app.journal)
    try:
        result = await session.run(prompt, context=context, session_id=session_id, journal=journal)
        # A run parked for a person has ended, as in process: the mirror shows it waiting, so
        # a queue lists it and people add their notes there; the hand-back resumes it here.
        while (parked := _for_a_person(result)) is not None:
            if publisher is not None:
                publisher.resumes()
            decision = await decisions.handed_back(parked)
            result = await session.resume(session_id, journal, decision=decision)
    finally:
        leave_session(token)
    if publisher is not None:
        await DBOS.close_stream_async(EVENTS_STREAM)
    await state.write_mirror()
    return result.to_data()


class _Publisher:
    """Writes the session's own events to its stream, each once (a recovered run's writes
    before the crash are recorded already): a person's pause does not end the stream, and the
    hand-back's resume replays the events written before it without writing them again."""

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._written = 0
        self._replaying = 0

    def resumes(self) -> None:
        """The session resumes from its start: its events so far come again."""
        self._replaying = self._written

    async def __call__(self, events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        own: bool | None = None
        async for event in events:
            if own is None:  # a delegated sub-run's events pass by (the run's are wrapped)
                own = isinstance(event, RunStarted) and event.session_id == self._session_id
            if own:
                await self._publish(event)
            yield event

    async def _publish(self, event: Event) -> None:
        if self._replaying:
            self._replaying -= 1
        elif not (isinstance(event, RunFinished) and _for_a_person(event.result)):
            await DBOS.write_stream_async(EVENTS_STREAM, event_to_data(event))
            self._written += 1


class MessageDecisions:
    """Waits, durably, for a decision sent to the session as a DBOS message."""

    def __init__(self, state: SessionState, swarm: Swarm) -> None:
        self._state = state
        self._swarm = swarm

    async def decide(self, pending: PendingDecision) -> Decision | None:
        """Publish what the session waits for, mirror the journal, then wait for a message; a
        person's pause (a queue of people) ends the run instead, as in process, and the
        workflow waits for the hand-back after it."""
        if pending.kind == "person":
            return None
        return await self._wait(pending)

    async def handed_back(self, parked: PendingDecision) -> Decision:
        """Wait at a person's pause for the hand-back; then take the people's notes from the
        mirror, so the session's journal numbers its records as the mirror does."""
        decision = await self._wait(parked)
        await self._state.take_notes()
        return decision

    async def _wait(self, pending: PendingDecision) -> Decision:
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


def _for_a_person(result: RunResult) -> PendingDecision | None:
    pending = result.pending
    return pending if pending is not None and pending.kind == "person" else None


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
