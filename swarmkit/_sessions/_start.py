"""How a session's run starts: what it was started with, checked input, and its first state."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from swarmkit._run import RESERVED_KEY, Continuation, History, RunState, start_from_data
from swarmkit._typed_context import typed_context
from swarmkit.bounds import fast_encoder, value_problem
from swarmkit.exceptions import ConfigurationError, JournalError
from swarmkit.journal import JournalRecord
from swarmkit.journal._records import corrupt_record, json_default
from swarmkit.limits import Spend
from swarmkit.redaction import Redactor, refuse_secret_context
from swarmkit.spec import RunSeams, SwarmSpec


@dataclass(frozen=True, kw_only=True, slots=True)
class Turn:
    """How a run relates to earlier ones: a given history, or the journal's latest turn."""

    history: History | None = None
    """An earlier result or messages to continue from."""
    continue_session: bool = False
    """Whether to continue the journaled conversation named by the session id."""
    start_agent: str | None = None
    """The agent that takes the run's first step, over the next-turn policy (or the entry)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Start:
    """What a journaled session was started with."""

    prompt: str
    """The prompt."""
    context: dict[str, Any]
    """The context (as journaled: secrets redacted)."""
    entry: str | None
    """The agent that took the first turn (a delegated sub-run's is not the swarm's entry)."""
    continues: Continuation | None = None
    """For a later turn of a conversation: where the turn it continues ended."""


def start_of(records: Sequence[JournalRecord], session_id: str) -> Start:
    """What a journaled session was started with, from its first record."""
    if not records or records[0].kind != "run_started":
        raise JournalError(f"session {session_id!r} does not start with a run_started record")
    data = records[0].data
    prompt, context, entry = data.get("prompt"), data.get("context") or {}, data.get("entry_agent")
    if not isinstance(prompt, str) or not isinstance(context, Mapping):
        raise corrupt_record(
            session_id, 0, "run_started", "it holds no prompt text or no context object"
        )
    return Start(
        prompt=prompt,
        context=dict(context),
        entry=entry if isinstance(entry, str) else None,
        continues=start_from_data(data),
    )


def fresh_state(
    spec: SwarmSpec,
    prompt: str,
    context: Mapping[str, Any] | None,
    session_id: str | None,
    seams: RunSeams,
    *,
    redactor: Redactor,
    new_id: Callable[[], str],
    entry: str | None = None,
    start: Continuation | None = None,
) -> RunState:
    """A caller's new run: its prompt and context checked (plain JSON, no secret, valid for
    the context type)."""
    check_prompt(prompt)
    initial = check_context(context)
    refuse_secret_context(initial, redactor)
    if spec.context_type is not None:
        initial = typed_context(spec.context_type, initial)
    session_id = _check_session_id(session_id) or new_id()
    return _opening(spec, prompt, initial, session_id, seams, entry=entry, start=start)


def journaled_state(
    spec: SwarmSpec, start: Start, session_id: str, seams: RunSeams, spend: Spend | None = None
) -> RunState:
    """The state of a run that (re)starts from a journaled or delegated start (its context
    was validated when it first started; a sub-run's carries tool updates the context type
    may not declare)."""
    context = _plain_context(start.context)
    return _opening(
        spec,
        start.prompt,
        context,
        session_id,
        seams,
        entry=start.entry,
        start=start.continues,
        spend=spend,
    )


def _opening(
    spec: SwarmSpec,
    prompt: str,
    context: dict[str, Any],
    session_id: str,
    seams: RunSeams,
    *,
    entry: str | None,
    start: Continuation | None,
    spend: Spend | None = None,
) -> RunState:
    state = RunState.opening(
        session_id=session_id,
        prompt=prompt,
        context=context,
        agent=entry or spec.entry_agent,
        deps=seams.deps,
        spend=spend,
    )
    if start is not None:
        _continue_from(state, start, spec)
    return state


def _continue_from(state: RunState, start: Continuation, spec: SwarmSpec) -> None:
    """Start a run where an earlier one ended: its agent, its messages, its context."""
    if start.agent not in spec.plans:
        raise ConfigurationError(
            f"the history continues with agent {start.agent!r}, which this swarm does not have"
        )
    # No handoff brings the agent in, so no input filter or pass_full_history applies: it
    # goes on with the whole conversation, unless it remembers nothing of earlier turns.
    state.continue_from(start, remembers=spec.plans[start.agent].agent.memory != "none")


def check_prompt(prompt: object) -> None:
    """A prompt is text."""
    if not isinstance(prompt, str):
        raise ConfigurationError(f"prompt must be a str, got {type(prompt).__name__}")


def check_start_agent(agent: str | None, spec: SwarmSpec) -> str | None:
    """A caller's ``start_agent``: None or an agent of the swarm."""
    if agent is not None and agent not in spec.plans:
        raise ConfigurationError(
            f"start_agent {agent!r} is not an agent of the swarm; agents: {', '.join(spec.plans)}"
        )
    return agent


def check_context(context: Mapping[str, Any] | None) -> dict[str, Any]:
    """A caller's context, checked: plain JSON data without the reserved key, nested no deeper
    than JSON from outside may be (the journal and the loop walk it recursively)."""
    problem = value_problem(context)
    if problem is not None:
        raise ConfigurationError(
            f"context nests too deeply ({problem}); flatten it, or pass such data as deps=..., "
            "which tools read as RunContext.deps and no journal keeps"
        )
    return _plain_context(context)


def _plain_context(context: Mapping[str, Any] | None) -> dict[str, Any]:
    """A context that is plain JSON data without the reserved key."""
    if context is None:
        return {}
    if not isinstance(context, Mapping):
        raise ConfigurationError(f"context must be a mapping, got {type(context).__name__}")
    if RESERVED_KEY in context:
        raise ConfigurationError(
            f"context key {RESERVED_KEY!r} is reserved for the loop's facts; rename it"
        )
    try:
        # The same encoding a journal uses: the context is journaled, so it must be JSON.
        _AS_JOURNALED(context)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ConfigurationError(
            f"context must be plain JSON data (dicts, lists, strings, finite numbers, booleans, "
            f"None): {exc}; pass Python objects such as clients, connections or secrets as "
            "deps=..., which tools read as RunContext.deps and no journal keeps"
        ) from None
    return dict(context)


_AS_JOURNALED = fast_encoder(
    json.JSONEncoder(allow_nan=False, ensure_ascii=False, default=json_default)
)
"""Encodes a context as a journal does, with one encoder built once (``json.dumps`` with
options builds one per call); a context that holds itself is refused before, as too deep."""


def _check_session_id(session_id: str | None) -> str | None:
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise ConfigurationError(f"session_id must be a non-empty str, got {session_id!r}")
    return session_id
