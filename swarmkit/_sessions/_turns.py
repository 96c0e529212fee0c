"""How a new run starts: a fresh session's course, or the next turn of a conversation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import takewhile
from typing import TYPE_CHECKING, Any

from swarmkit._run import Continuation, answered, build_result, choose_agent, continuation
from swarmkit._sessions._start import (
    Turn,
    check_context,
    check_prompt,
    check_start_agent,
    journaled_state,
    start_of,
)
from swarmkit.exceptions import ConfigurationError, JournalError, ReplayDivergenceError
from swarmkit.journal import (
    Journal,
    JournalRecord,
    session_status,
    turn_session_id,
    turn_sessions,
)
from swarmkit.journal._codec import outcome_of
from swarmkit.journal._course import (
    Course,
    Fresh,
    Mirrored,
    Replay,
    replayable,
    resumable_prefix,
)
from swarmkit.journal._records import RecordSink
from swarmkit.messages import ToolMessage
from swarmkit.result import RunResult
from swarmkit.spec import SwarmSpec

if TYPE_CHECKING:
    from swarmkit._sessions._sessions import Sessions


_UNJOURNALED = Fresh(journal=None)
"""The course of every run with no journal (a frozen value: one is shared, not one a run)."""


async def fresh_course(
    store: Journal | None, mirror: RecordSink | None, session_id: str, *, checked: bool
) -> Course:
    """A new session's course, in ``store`` or sent to ``mirror``; ``checked``: whether the
    session id may already be in the journal (one the caller gave or made)."""
    if mirror is not None and store is not None:
        raise ConfigurationError("pass either a journal or a mirror, not both")
    if mirror is not None:
        return Mirrored(sink=mirror)
    if store is not None and checked and await store.next_seq(session_id) != 0:
        raise JournalError(
            f"session {session_id!r} is already in the journal; "
            "resume or replay it, or run with a new session_id"
        )
    return Fresh(journal=store) if store is not None else _UNJOURNALED


async def turn_start(
    sessions: Sessions, turn: Turn, session_id: str | None, store: Journal | None
) -> tuple[Continuation | None, str | None]:
    """Where this run starts, and its session id (a later turn's, when continuing)."""
    spec = sessions.spec
    if not turn.continue_session:
        history = turn.history
        start = None if history is None else continuation(history, spec.plans, spec.entry_agent)
        return start, session_id
    if turn.history is not None:
        raise ConfigurationError("pass history= or continue_session=True, not both")
    if session_id is None or store is None:
        raise ConfigurationError(
            "continue_session=True needs the conversation's session_id= and a journal"
        )
    turns = await turn_sessions(store, session_id)
    if not turns:
        return None, session_id
    await _check_same_swarm(spec, store, session_id, turns[-1])
    previous = await _completed(sessions, turns[-1], store)
    start = continuation(previous, spec.plans, spec.entry_agent)
    return start, turn_session_id(session_id, len(turns) + 1)


def next_turn(
    spec: SwarmSpec,
    start: Continuation,
    prompt: str,
    context: Mapping[str, Any] | None,
    start_agent: str | None,
) -> Continuation:
    """Who takes a continuing turn's first step: ``start_agent``, else the policy."""
    check_prompt(prompt)
    return choose_agent(
        start,
        spec.next_turn,
        entry_agent=spec.entry_agent,
        message=prompt,
        context=check_context(context),
        start_agent=check_start_agent(start_agent, spec),
    )


async def _check_same_swarm(
    spec: SwarmSpec, store: Journal, conversation: str, latest: str
) -> None:
    """A conversation goes on only in a swarm with the agents that held it."""
    records = await store.read(latest)
    journaled = records[0].data.get("fingerprint") if records else None
    agents = journaled.get("agents") if isinstance(journaled, Mapping) else None
    ours = list(spec.fingerprint.get("agents") or ())
    if isinstance(agents, list) and agents != ours:
        raise ConfigurationError(
            f"conversation {conversation!r} was held by a swarm of agents "
            f"{', '.join(map(str, agents))}; this swarm has {', '.join(map(str, ours))}: "
            "continue it with the swarm that started it, or start a new session_id"
        )


async def _completed(sessions: Sessions, session_id: str, store: Journal) -> RunResult:
    """What a conversation's latest turn completed: its result, or, for a turn cancelled or
    cut short, where it got to (its last journaled step; a call it left unanswered gets its
    journaled result, or is answered as not run)."""
    records = await store.read(session_id)
    seams = sessions.seams()
    if session_status(records) not in ("cancelled", "running"):
        return await sessions.replay(session_id, store, seams=seams)
    state = journaled_state(sessions.spec, start_of(records, session_id), session_id, seams)
    prefix = resumable_prefix(replayable(records))
    try:
        await sessions.driver.drive(Replay(records=prefix, journal=store), state, seams)
    except ReplayDivergenceError as diverged:
        # The replay reached the step the turn never finished: the state is where it got to.
        if diverged.step <= prefix[-1].seq:
            raise
    result = build_result(state, "interrupted", None, None)
    return replace(result, messages=answered(result.messages, _last_results(prefix)))


def _last_results(records: Sequence[JournalRecord]) -> dict[str, ToolMessage]:
    """The results of the tool calls journaled after the last model call, by call id."""
    last = list(takewhile(lambda record: record.kind != "model_call", reversed(records)))
    results = {}
    for record in last:
        if record.kind == "tool_call":
            outcome, call_id = outcome_of(record), str(record.data.get("id"))
            name = str(record.data.get("name"))
            results[call_id] = ToolMessage(
                tool_call_id=call_id, name=name, content=outcome.content, is_error=outcome.is_error
            )
    return results
