"""Sessions: the one place that builds tapes and leases and reads journal records back.

Start (fresh, continued or mirrored), replay, resume, fork, history and delegated sub-runs all
come here with the compiled spec and the run's seams; none of it sees the ``Swarm`` facade.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from swarmkit._run import (
    RESERVED_KEY,
    Continuation,
    History,
    RunLoop,
    RunState,
    check_decision,
    choose_agent,
    continuation,
    start_from_data,
)
from swarmkit._sent import redacted_request
from swarmkit._typed_context import typed_context
from swarmkit.config import SwarmConfig, check_journal, check_usage_limits
from swarmkit.events import Event, EventObserver, RunFinished
from swarmkit.exceptions import ConfigurationError, JournalError, ReplayDivergenceError
from swarmkit.interrupts import Decision, DecisionSource, PauseForDecision
from swarmkit.journal import Journal, JournalRecord, session_status, turn_session_id, turn_sessions
from swarmkit.journal._digest import PartCache
from swarmkit.journal._records import RecordSink, corrupt_record, json_default
from swarmkit.journal._tape import (
    STATE_EDITED,
    LeaseTerms,
    Tape,
    TimeTravel,
    replayable,
    resumable_prefix,
)
from swarmkit.limits import Spend, UsageLimits
from swarmkit.messages import Message
from swarmkit.models import ModelRequest
from swarmkit.redaction import Redactor, refuse_secret_context
from swarmkit.result import RunResult, SentRequest, SessionState
from swarmkit.runtime import DEFAULT_RUNTIME, Runtime
from swarmkit.spec import Delegator, RunSeams, SubRun, SwarmSpec
from swarmkit.tools import InProcessToolRunner, ToolRunner


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


class Sessions:
    """Runs the sessions of one compiled swarm: every journal read and tape is made here."""

    def __init__(
        self, spec: SwarmSpec, config: SwarmConfig, digests: PartCache | None = None
    ) -> None:
        self._spec = spec
        self._journal = config.journal
        self._observers: tuple[EventObserver, ...] = tuple(config.observers)
        self._session_ids = config.session_ids
        self._lease_ttl = float(config.lease_ttl)
        self.redactor = Redactor.of(config.redact_keys)
        """Hides secret values in what a run journals."""
        self.digests = digests if digests is not None else PartCache()
        """Digests of requests' parts, shared by the swarms derived from one another."""
        self.defaults = RunSeams(
            runtime=config.runtime or DEFAULT_RUNTIME,
            tool_runner=config.tool_runner or InProcessToolRunner(),
            decisions=config.decisions or PauseForDecision(),
        )
        """The swarm's own seams, which a call's seams override one by one."""

    def seams(
        self,
        deps: Any = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
    ) -> RunSeams:
        """The seams of one run: the given ones, else the swarm's."""
        defaults = self.defaults
        return RunSeams(
            runtime=runtime or defaults.runtime,
            tool_runner=tool_runner or defaults.tool_runner,
            decisions=decisions or defaults.decisions,
            deps=deps,
        )

    # -- starting ------------------------------------------------------------------------

    async def events(
        self,
        prompt: str,
        *,
        context: Mapping[str, Any] | None,
        session_id: str | None,
        journal: Journal | None,
        mirror: RecordSink | None,
        seams: RunSeams,
        streaming: bool,
        limits: UsageLimits | None,
        turn: Turn,
    ) -> AsyncGenerator[Event, None]:
        """A new run's events, journaled in ``journal`` (or the swarm's) or sent to ``mirror``."""
        check_journal(journal)
        store = journal or self._journal
        start, session_id = await self._turn_start(turn, session_id, store)
        if start is not None:
            start = self._next_turn(start, prompt, context, turn.start_agent)
        entry = _check_start_agent(turn.start_agent, self._spec)
        state = self._new_state(
            prompt, context, session_id, seams, entry=entry, typed=True, start=start
        )
        tape = await self._new_tape(store, mirror, state.session_id, seams, given=session_id)
        seams = replace(seams, delegate=self._delegator(store, seams, limits))
        # Closing the loop's generator here, not at interpreter exit, lets a caller who stops
        # reading early have the run's last journal write happen while the journal is open.
        # A run that is not streamed and has no observer is read only for its result.
        quiet = not streaming and not self._observers
        spec = self._spec_for(limits)
        loop = RunLoop(spec, state, tape, seams, streaming=streaming, quiet=quiet)
        events = self._observed(loop.events())
        try:
            async for event in events:
                yield event
        finally:
            # A loop suspended mid-step (not at a yield) is being torn down as a whole, e.g.
            # garbage-collected with a stopped Temporal worker: it closes itself.
            if not getattr(events, "ag_running", False):
                await events.aclose()

    async def _new_tape(
        self,
        store: Journal | None,
        mirror: RecordSink | None,
        session_id: str,
        seams: RunSeams,
        *,
        given: str | None,
    ) -> Tape:
        """A new session's opened tape, in ``store`` or sent to ``mirror``; ``given`` is the
        session id the caller passed (or the continued turn's), if any."""
        if mirror is not None and store is not None:
            raise ConfigurationError("pass either a journal or a mirror, not both")
        # A random id of our own cannot be in the journal; a given or user-made id may be.
        checked = given is not None or self._session_ids is not None
        if store is not None and checked and await store.next_seq(session_id) != 0:
            raise JournalError(
                f"session {session_id!r} is already in the journal; "
                "resume or replay it, or run with a new session_id"
            )
        if mirror is not None:
            tape = self._tape(mirror, session_id, (), seams, mirror=True)
        else:
            tape = self._tape(store, session_id, (), seams)
        await tape.open()
        return tape

    async def _turn_start(
        self, turn: Turn, session_id: str | None, store: Journal | None
    ) -> tuple[Continuation | None, str | None]:
        """Where this run starts, and its session id (a later turn's, when continuing)."""
        spec = self._spec
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
        await self._check_same_swarm(store, session_id, turns[-1])
        previous = await self.replay(turns[-1], store, seams=self.seams())
        start = continuation(previous, spec.plans, spec.entry_agent)
        return start, turn_session_id(session_id, len(turns) + 1)

    def _next_turn(
        self,
        start: Continuation,
        prompt: str,
        context: Mapping[str, Any] | None,
        start_agent: str | None,
    ) -> Continuation:
        """Who takes a continuing turn's first step: ``start_agent``, else the policy."""
        spec = self._spec
        if not isinstance(prompt, str):
            raise ConfigurationError(f"prompt must be a str, got {type(prompt).__name__}")
        return choose_agent(
            start,
            spec.next_turn,
            entry_agent=spec.entry_agent,
            message=prompt,
            context=check_context(context),
            start_agent=_check_start_agent(start_agent, spec),
        )

    async def _check_same_swarm(self, store: Journal, conversation: str, latest: str) -> None:
        """A conversation goes on only in a swarm with the agents that held it."""
        records = await store.read(latest)
        journaled = records[0].data.get("fingerprint") if records else None
        agents = journaled.get("agents") if isinstance(journaled, Mapping) else None
        ours = list(self._spec.fingerprint.get("agents") or ())
        if isinstance(agents, list) and agents != ours:
            raise ConfigurationError(
                f"conversation {conversation!r} was held by a swarm of agents "
                f"{', '.join(map(str, agents))}; this swarm has {', '.join(map(str, ours))}: "
                "continue it with the swarm that started it, or start a new session_id"
            )

    # -- journaled sessions --------------------------------------------------------------

    async def replay(
        self,
        session_id: str,
        journal: Journal | None,
        *,
        seams: RunSeams,
        execute_tools: bool = False,
        live_after: int | None = None,
        fork_session_id: str | None = None,
        prompt: str | None = None,
    ) -> RunResult:
        """Re-run a journaled session from its records (see ``Swarm.replay``)."""
        store = self.store(journal, session_id)
        records = await store.read(session_id)
        start = start_of(records, session_id)
        start = start if prompt is None else replace(start, prompt=prompt)
        if live_after is None:
            # A strict replay writes nothing and may not go live: the journal is all it has.
            tape = self._tape(
                None,
                session_id,
                replayable(records),
                seams,
                go_live=False,
                execute_tools=execute_tools,
            )
            return await self._run_on(tape, seams, start, session_id, store)
        fork_id = fork_session_id or f"{session_id}__fork_{live_after}"
        prefix = _fork_prefix(records, live_after, fork_id)
        tape = self._tape(
            store, fork_id, prefix, seams, next_seq=len(prefix), execute_tools=execute_tools
        )
        await self._open_fork(tape, store, prefix)
        return await self._run_on(tape, seams, start, fork_id, store)

    async def what_if(
        self,
        session_id: str,
        journal: Journal | None,
        *,
        seams: RunSeams,
        prompt: str | None = None,
        context: Mapping[str, Any] | None = None,
        live: bool = False,
    ) -> RunResult:
        """Replay a session as if it had started with another prompt or context (see
        ``Swarm.what_if``): offline, the first request the change alters stops it; ``live``
        forks a new session there instead, which goes on against the model."""
        store = self.store(journal, session_id)
        records = list(replayable(await store.read(session_id)))
        changes: dict[str, Any] = {}
        if prompt is not None:
            changes["prompt"] = prompt
        if context is not None:
            changes["context"] = dict(context)
        start = replace(start_of(records, session_id), **changes)
        # The changed start is taken as given; what it changes downstream is what is compared.
        records[0] = replace(records[0], data={**records[0].data, **self._clean_start(changes)})
        tape = self._tape(None, session_id, records, seams, go_live=False)
        try:
            return await self._run_on(tape, seams, start, session_id, store)
        except ReplayDivergenceError as diverged:
            if not live:
                raise
            at = diverged.step
        # Live: the steps before the first changed request are the fork's, labelled as such.
        fork_id = f"{session_id}__whatif_{at}"
        prefix = _fork_prefix(records, at, fork_id)
        tape = self._tape(store, fork_id, prefix, seams, next_seq=len(prefix))
        await self._open_fork(tape, store, prefix)
        return await self._run_on(tape, seams, start, fork_id, store)

    def _clean_start(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """The changed start as the journal would hold it (secrets redacted)."""
        if self.redactor is None or "context" not in changes:
            return dict(changes)
        return {**changes, "context": self.redactor.value(changes["context"])}

    async def resume(
        self,
        session_id: str,
        journal: Journal | None,
        *,
        seams: RunSeams,
        decision: Decision | None,
        limits: UsageLimits | None,
    ) -> RunResult:
        """Continue a crashed or paused session live (see ``Swarm.resume``)."""
        store = self.store(journal, session_id)
        records = await store.read(session_id)
        start = start_of(records, session_id)
        _check_resumable(records, session_id, decision)
        if decision is not None:
            check_decision(self._spec, records[-1].data.get("pending"), decision)
        prefix = resumable_prefix(records)
        tape = self._tape(
            store, session_id, prefix, seams, next_seq=len(records), decision=decision
        )
        return await self._run_on(tape, seams, start, session_id, store, limits=limits)

    async def history(
        self, session_id: str, journal: Journal | None, *, seams: RunSeams
    ) -> tuple[SessionState, ...]:
        """The session's states, one after each journaled step (see ``Swarm.history``)."""
        store = self.store(journal, session_id)
        records = await store.read(session_id)
        start = start_of(records, session_id)
        state = self._start_state(start, session_id, seams)
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

        travel = TimeTravel(apply=apply, replayed=replayed)
        tape = self._tape(
            None, session_id, replayable(records), seams, go_live=False, travel=travel
        )
        await self._drive(tape, seams, state, store)
        states.extend(_snapshot(state, seen, context) for seen, context in pending)
        return tuple(states)

    async def requests(
        self, session_id: str, journal: Journal | None, *, seams: RunSeams
    ) -> tuple[SentRequest, ...]:
        """Every model call's whole request, rebuilt by a strict replay (see ``Swarm.requests``)."""
        store = self.store(journal, session_id)
        records = await store.read(session_id)
        start = start_of(records, session_id)
        state = self._start_state(start, session_id, seams)
        sent: list[SentRequest] = []
        done: dict[int, tuple[Message, Message]] = {}

        def requested(seq: int, agent: str, turn: int, request: ModelRequest) -> None:
            payload = state.trail.payload.model_dump(mode="json") if state.trail.payload else None
            sent.append(
                SentRequest(
                    seq=seq,
                    agent=agent,
                    turn=turn,
                    request=redacted_request(request, self.redactor, done),
                    payload=self.redactor.value(payload),
                )
            )

        travel = TimeTravel(apply=state.context.update, requested=requested)
        tape = self._tape(
            None, session_id, replayable(records), seams, go_live=False, travel=travel
        )
        try:
            await self._drive(tape, seams, state, store)
        except ReplayDivergenceError as diverged:
            # A run still going (or crashed) asks for its next step past the journal's end:
            # what it was sent so far is all there is.
            if diverged.step <= records[-1].seq:
                raise
        return tuple(sent)

    async def fork(
        self,
        session_id: str,
        *,
        at: int,
        context_update: Mapping[str, Any] | None,
        journal: Journal | None,
        fork_session_id: str | None,
        seams: RunSeams,
    ) -> RunResult:
        """Continue live from the state after step ``at``, edited (see ``Swarm.fork``)."""
        store = self.store(journal, session_id)
        records = await store.read(session_id)
        start = start_of(records, session_id)
        fork_id = fork_session_id or f"{session_id}__fork_{at}"
        prefix = _fork_prefix(records, at + 1, fork_id)
        update = check_context(context_update)
        state = self._start_state(start, fork_id, seams)
        edit = {"context_update": update, "forked_from": session_id, "at": at}
        travel = TimeTravel(apply=state.context.update, edit=edit)
        tape = self._tape(store, fork_id, prefix, seams, next_seq=len(prefix), travel=travel)
        await self._open_fork(tape, store, prefix)
        return await self._drive(tape, seams, state, store)

    def store(self, journal: Journal | None, session_id: str) -> Journal:
        """The journal a session is read from: the call's, else the swarm's."""
        check_journal(journal)
        store = journal or self._journal
        if store is None:
            raise ConfigurationError(
                f"no journal to read session {session_id!r} from: pass journal= or Swarm(journal=)"
            )
        return store

    # -- tapes and loops -----------------------------------------------------------------

    async def _open_fork(self, tape: Tape, store: Journal, prefix: Sequence[JournalRecord]) -> None:
        await tape.open()  # the fork's lease, before its first record
        try:
            await store.append(prefix)
        except BaseException:
            await tape.release()
            raise

    def _tape(
        self,
        journal: Journal | RecordSink | None,
        session_id: str,
        prefix: Sequence[JournalRecord],
        seams: RunSeams,
        *,
        go_live: bool = True,
        next_seq: int = 0,
        execute_tools: bool = False,
        decision: Decision | None = None,
        mirror: bool = False,
        travel: TimeTravel | None = None,
    ) -> Tape:
        runtime = seams.runtime
        lease = None
        if not mirror:
            owner = f"{socket.gethostname()}:{os.getpid()}:{runtime.new_id()[:12]}"
            lease = LeaseTerms(owner=owner, ttl=self._lease_ttl, clock=runtime.clock)
        return Tape(
            journal=journal,
            session_id=session_id,
            prefix=prefix,
            go_live=go_live,
            next_seq=next_seq,
            execute_tools=execute_tools,
            decision=decision,
            redact=self.redactor,
            digests=self.digests,
            lease=lease,
            mirror=mirror,
            travel=travel,
            clock=runtime.clock,
        )

    async def _run_on(
        self,
        tape: Tape,
        seams: RunSeams,
        start: Start,
        session_id: str,
        store: Journal | None,
        *,
        limits: UsageLimits | None = None,
    ) -> RunResult:
        state = self._start_state(start, session_id, seams)
        return await self._drive(tape, seams, state, store, limits=limits)

    async def _drive(
        self,
        tape: Tape,
        seams: RunSeams,
        state: RunState,
        store: Journal | None,
        *,
        limits: UsageLimits | None = None,
    ) -> RunResult:
        seams = replace(seams, delegate=self._delegator(store, seams, limits))
        tape.bind_state(state.context.update)
        await tape.open()
        # Without observers only the result is read: the loop need not build per-step events.
        quiet = not self._observers
        loop = RunLoop(self._spec_for(limits), state, tape, seams, streaming=False, quiet=quiet)
        return await last_result(self._observed(loop.events()))

    def _observed(self, events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        for observe in self._observers:
            events = observe(events)
        return events

    def _spec_for(self, limits: UsageLimits | None) -> SwarmSpec:
        if limits is None:
            return self._spec
        return replace(self._spec, usage_limits=check_usage_limits(limits))

    def _delegator(
        self, store: Journal | None, seams: RunSeams, limits: UsageLimits | None = None
    ) -> Delegator:
        """How this run's delegation tools run their sub-runs: in the same journal, resumable,
        under the run's own usage limits (their calls count in the parent's)."""

        def delegate(sub: SubRun) -> AsyncGenerator[Event, None]:
            return self._sub_run(sub, store, seams, limits)

        return delegate

    async def _sub_run(
        self, sub: SubRun, store: Journal | None, seams: RunSeams, limits: UsageLimits | None
    ) -> AsyncGenerator[Event, None]:
        """A sub-run's own events (its parent's observers see them, wrapped, in its stream)."""
        session_id = sub.session_id
        start = Start(prompt=sub.task, context=dict(sub.context), entry=sub.agent)
        journaled = store is not None and await store.next_seq(session_id) != 0
        records = await store.read(session_id) if store is not None and journaled else ()
        if sub.replay_only:
            if not records:
                return  # not journaled (a parent exported alone): no events to show
            tape = self._tape(None, session_id, replayable(records), seams, go_live=False)
        elif not records:
            tape = self._tape(store, session_id, (), seams)
        # The parent crashed after this sub-run began: finish it, never start it twice.
        elif session_status(records) in ("finished", "limited"):
            tape = self._tape(None, session_id, replayable(records), seams, go_live=False)
        else:
            prefix = resumable_prefix(records)
            tape = self._tape(store, session_id, prefix, seams, next_seq=len(records))
        state = self._start_state(start, session_id, seams, sub.spend)
        tape.bind_state(state.context.update)
        await tape.open()
        inner = replace(seams, delegate=self._delegator(store, seams, limits))
        spec = self._spec_for(limits)
        loop = RunLoop(spec, state, tape, inner, streaming=sub.streaming, quiet=sub.quiet)
        events = loop.events()
        try:
            async for event in events:
                yield event
        finally:
            await events.aclose()

    # -- states --------------------------------------------------------------------------

    def _start_state(
        self, start: Start, session_id: str, seams: RunSeams, spend: Spend | None = None
    ) -> RunState:
        """The state of a run that (re)starts from a journaled or delegated start."""
        return self._new_state(
            start.prompt,
            start.context,
            session_id,
            seams,
            entry=start.entry,
            start=start.continues,
            spend=spend,
        )

    def _new_state(
        self,
        prompt: str,
        context: Mapping[str, Any] | None,
        session_id: str | None,
        seams: RunSeams,
        *,
        entry: str | None = None,
        typed: bool = False,
        start: Continuation | None = None,
        spend: Spend | None = None,
    ) -> RunState:
        """A new run's state; ``typed`` validates a caller's context against context_type
        (a journaled one was validated when its run started; a sub-run's carries tool updates
        the type may not declare)."""
        if not isinstance(prompt, str):
            raise ConfigurationError(f"prompt must be a str, got {type(prompt).__name__}")
        initial = check_context(context)
        if typed:
            refuse_secret_context(initial, self.redactor)
        context_type = self._spec.context_type
        if typed and context_type is not None:
            initial = typed_context(context_type, initial)
        new_id = self._session_ids or seams.runtime.new_id
        state = RunState.opening(
            session_id=_check_session_id(session_id) or new_id(),
            prompt=prompt,
            context=initial,
            agent=entry or self._spec.entry_agent,
            deps=seams.deps,
            spend=spend,
        )
        if start is not None:
            _continue_from(state, start, self._spec)
        return state


def _check_start_agent(agent: str | None, spec: SwarmSpec) -> str | None:
    if agent is not None and agent not in spec.plans:
        raise ConfigurationError(
            f"start_agent {agent!r} is not an agent of the swarm; agents: {', '.join(spec.plans)}"
        )
    return agent


def _continue_from(state: RunState, start: Continuation, spec: SwarmSpec) -> None:
    """Start a run where an earlier one ended: its agent, its messages, its context."""
    if start.agent not in spec.plans:
        raise ConfigurationError(
            f"the history continues with agent {start.agent!r}, which this swarm does not have"
        )
    # No handoff brings the agent in, so no input filter or pass_full_history applies: it
    # goes on with the whole conversation, unless it remembers nothing of earlier turns.
    state.continue_from(start, remembers=spec.plans[start.agent].agent.memory != "none")


async def last_result(events: AsyncIterator[Event]) -> RunResult:
    """The result a run's events end with."""
    result: RunResult | None = None
    async for event in events:
        if isinstance(event, RunFinished):
            result = event.result
    assert result is not None
    return result


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


def _fork_prefix(
    records: Sequence[JournalRecord], live_after: int, fork_id: str
) -> tuple[JournalRecord, ...]:
    if not 0 < live_after <= len(records):
        raise ConfigurationError(
            f"live_after must be from 1 to {len(records)} (the session's steps), got {live_after}"
        )
    return tuple(replace(r, session_id=fork_id) for r in records[:live_after])


def _check_resumable(
    records: Sequence[JournalRecord], session_id: str, decision: Decision | None
) -> None:
    status = session_status(records)
    reason = records[-1].data.get("stop_reason")
    if status != "running" and reason not in _RESUMABLE:
        raise JournalError(
            f"session {session_id!r} already finished ({reason}); replay it instead of resuming"
        )
    if status == "waiting" and decision is None:
        raise JournalError(
            f"session {session_id!r} is waiting for a human decision: "
            "pass decision=approve(), reject(reason) or edit(payload=...)"
        )
    if status != "waiting" and decision is not None:
        raise JournalError(
            f"session {session_id!r} is not waiting for a decision; resume it without one"
        )


_RESUMABLE = ("interrupted", "error", "timeout", "usage_limit")


def check_context(context: Mapping[str, Any] | None) -> dict[str, Any]:
    """A caller's context, checked: plain JSON data without the reserved key."""
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
        json.dumps(context, allow_nan=False, ensure_ascii=False, default=json_default)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ConfigurationError(
            f"context must be plain JSON data (dicts, lists, strings, finite numbers, booleans, "
            f"None): {exc}; pass Python objects such as clients, connections or secrets as "
            "deps=..., which tools read as RunContext.deps and no journal keeps"
        ) from None
    return dict(context)


def _check_session_id(session_id: str | None) -> str | None:
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise ConfigurationError(f"session_id must be a non-empty str, got {session_id!r}")
    return session_id
