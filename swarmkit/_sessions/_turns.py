"""How a new run starts: a fresh session's course, or the next turn of a conversation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from swarmkit._run import Continuation, choose_agent, continuation
from swarmkit._sessions._start import Turn, check_context, check_prompt, check_start_agent
from swarmkit.exceptions import ConfigurationError, JournalError
from swarmkit.journal import Journal, RecordSink, turn_session_id, turn_sessions
from swarmkit.journal._course import Course, Fresh, Mirrored
from swarmkit.spec import SwarmSpec

if TYPE_CHECKING:
    from swarmkit._sessions._sessions import Sessions


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
    return Fresh(journal=store)


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
    previous = await sessions.replay(turns[-1], store, seams=sessions.seams())
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
