"""Time travel's readers: a session's states step by step, and every request as it was sent,
each rebuilt by a strict replay watched as it goes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from swarmkit._run import RunState
from swarmkit._sent import redacted_request
from swarmkit._sessions._start import journaled_state
from swarmkit.exceptions import ReplayDivergenceError
from swarmkit.journal import Journal, JournalRecord
from swarmkit.journal._course import Replay, replayable
from swarmkit.journal._cursor import STATE_EDITED, TimeTravel
from swarmkit.messages import Message
from swarmkit.models import ModelRequest
from swarmkit.result import SentRequest, SessionState
from swarmkit.spec import RunSeams

if TYPE_CHECKING:
    from swarmkit._sessions._sessions import Sessions


async def history(
    sessions: Sessions, session_id: str, journal: Journal | None, *, seams: RunSeams
) -> tuple[SessionState, ...]:
    """The session's states, one after each journaled step (see ``Swarm.history``)."""
    store, records, start = await sessions.read(session_id, journal)
    state = journaled_state(sessions.spec, start, session_id, seams)
    states: list[SessionState] = []
    # Records reached but not yet shown, each with the context it had when a fork's edit
    # came in after it (None: the state's own).
    pending: list[tuple[JournalRecord, dict[str, Any] | None]] = []

    def replayed(record: JournalRecord) -> None:
        # Everything a record caused has happened once the run reaches its next step's
        # record. A fork's edit is not a step: it is reached (and applied) inside the
        # step before it, so that step is shown once the next real step is reached.
        if record.kind != STATE_EDITED:
            states.extend(_snapshot(state, seen, context) for seen, context in pending)
            pending.clear()
        pending.append((record, None))

    def apply(update: Mapping[str, Any]) -> None:
        before = _plain(state.context)
        pending[:] = [(seen, before if c is None else c) for seen, c in pending]
        state.context.update(update)

    course = Replay(records=replayable(records), journal=store)
    travel = TimeTravel(apply=apply, replayed=replayed)
    await sessions.driver.drive(course, state, seams, travel=travel)
    states.extend(_snapshot(state, seen, context) for seen, context in pending)
    return tuple(states)


async def requests(
    sessions: Sessions, session_id: str, journal: Journal | None, *, seams: RunSeams
) -> tuple[SentRequest, ...]:
    """Every model call's whole request, rebuilt by a strict replay (see ``Swarm.requests``)."""
    store, records, start = await sessions.read(session_id, journal)
    state = journaled_state(sessions.spec, start, session_id, seams)
    sent: list[SentRequest] = []
    done: dict[int, tuple[Message, Message]] = {}
    redactor = sessions.redactor

    def requested(seq: int, agent: str, turn: int, request: ModelRequest) -> None:
        payload = state.trail.payload.model_dump(mode="json") if state.trail.payload else None
        sent.append(
            SentRequest(
                seq=seq,
                agent=agent,
                turn=turn,
                request=redacted_request(request, redactor, done),
                payload=redactor.value(payload),
            )
        )

    course = Replay(records=replayable(records), journal=store)
    travel = TimeTravel(apply=state.context.update, requested=requested)
    try:
        await sessions.driver.drive(course, state, seams, travel=travel)
    except ReplayDivergenceError as diverged:
        # A run still going (or crashed) asks for its next step past the journal's end:
        # what it was sent so far is all there is.
        if diverged.step <= records[-1].seq:
            raise
    return tuple(sent)


def _snapshot(
    state: RunState, record: JournalRecord, context: dict[str, Any] | None = None
) -> SessionState:
    return SessionState(
        step=record.seq,
        kind=record.kind,
        agent=state.agent,
        context=_plain(state.context) if context is None else context,
        handoff_count=state.handoff_count,
        turns=state.budget.turns,
        messages=tuple(state.conversation.transcript),
    )


def _plain(context: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the context as plain JSON data, detached from the run's."""
    copied: dict[str, Any] = json.loads(json.dumps(context))
    return copied
