"""Swarm: peer agents passing control through handoffs, rules consulted before the model."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from swarmkit._plan import AgentPlan, ModelResolver, PlanOptions, build_plan
from swarmkit._run import RESERVED_KEY, RunLoop, RunState
from swarmkit._run._conversation import (
    Continuation,
    History,
    continuation,
    start_from_data,
    turn_session_id,
    turn_sessions,
)
from swarmkit._run._decisions import check_decision
from swarmkit._run._spec import Delegator, LimitPolicy, RunSeams, SwarmSpec
from swarmkit._typed_context import check_context_type as _check_context_type
from swarmkit._typed_context import typed_context
from swarmkit.agent import Agent
from swarmkit.events import Event, EventObserver, RunFinished
from swarmkit.exceptions import ConfigurationError, JournalError, RunError
from swarmkit.graph import HandoffGraph
from swarmkit.handoffs import Handoff
from swarmkit.interrupts import Decision, DecisionSource, PauseForDecision
from swarmkit.journal import Journal, JournalRecord
from swarmkit.journal._digest import PartCache
from swarmkit.journal._records import corrupt_record, json_default
from swarmkit.journal._tape import (
    LeaseTerms,
    RecordSink,
    Tape,
    TimeTravel,
    replayable,
    resumable_prefix,
)
from swarmkit.limits import UsageLimits, check_timeout
from swarmkit.messages import UserMessage
from swarmkit.models import Model
from swarmkit.redaction import DEFAULT_SECRET_PATTERNS, Redactor, refuse_secret_context
from swarmkit.result import RunResult, SessionState
from swarmkit.runtime import DEFAULT_RUNTIME, Runtime
from swarmkit.tools import InProcessToolRunner, ToolRunner

if TYPE_CHECKING:
    from swarmkit.check import Finding

__all__ = ["DEFAULT_REDACT_KEYS", "LimitPolicy", "Swarm"]

_POLICIES = ("finish", "stop", "error")

DEFAULT_REDACT_KEYS = DEFAULT_SECRET_PATTERNS
"""Words that make a key secret (whole words of it): a journal holds its value as "[redacted]"."""

DEFAULT_LEASE_TTL = 60.0
"""Seconds a run's lease on its session outlives the last write of a run that died."""


class Swarm:
    """Peer agents that hand off to each other; one Swarm serves many concurrent runs.

    ``agents`` is a list of agents (or Handoff configs), or seed 002's ``{name: Agent | Handoff}``
    dict, whose keys name the peers. Every mistake raises ConfigurationError here, before any
    model call.
    """

    def __init__(
        self,
        agents: Mapping[str, Agent | Handoff] | Sequence[Agent | Handoff],
        entry_agent: str | Agent,
        *,
        model: Model | str | None = None,
        graph: HandoffGraph | None = None,
        max_handoffs: int = 8,
        detect_cycles: bool = True,
        max_revisits: int = 0,
        pass_full_history: bool = True,
        handoff_tool_name: str | None = None,
        legacy_handoff_tool: bool | None = None,
        max_turns: int = 50,
        on_max_handoffs: LimitPolicy = "finish",
        on_max_turns: LimitPolicy = "finish",
        on_cycle: LimitPolicy = "finish",
        session_ids: Callable[[], str] | None = None,
        journal: Journal | None = None,
        interrupt_before: Collection[str] = (),
        interrupt_after: Collection[str] = (),
        interrupt_on_handoff: bool = False,
        redact_keys: Collection[str] = DEFAULT_REDACT_KEYS,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
        lease_ttl: float = DEFAULT_LEASE_TTL,
        limits: UsageLimits | None = None,
        run_timeout: float | None = None,
        agent_timeout: float | None = None,
        context_type: type[BaseModel] | None = None,
        observers: Sequence[EventObserver] = (),
    ) -> None:
        self._settings = {k: v for k, v in locals().items() if k not in ("self", "agents")}
        _check_model(model)
        _check_journal(journal)
        self._agents_given = agents
        peers, peer_handoffs = _peers(agents)
        entry_agent = _entry_name_of(entry_agent, peers)
        _check_limits(max_handoffs=max_handoffs, max_turns=max_turns, max_revisits=max_revisits)
        _check_policies(
            on_max_handoffs=on_max_handoffs, on_max_turns=on_max_turns, on_cycle=on_cycle
        )
        if entry_agent not in peers:
            raise ConfigurationError(
                f"entry_agent {entry_agent!r} is not an agent of the swarm; "
                f"agents: {', '.join(peers)}"
            )
        _check_graph(graph, peers)
        _check_interrupts(interrupt_before, peers, "interrupt_before")
        _check_interrupts(interrupt_after, peers, "interrupt_after")
        self.limits = _check_usage_limits(limits)
        self.context_type = _check_context_type(context_type)
        self.entry_agent = entry_agent
        self.graph = graph
        self.max_handoffs = max_handoffs
        self.detect_cycles = detect_cycles
        self.max_revisits = max_revisits
        self.pass_full_history = pass_full_history
        self.max_turns = max_turns
        self.on_max_handoffs: LimitPolicy = on_max_handoffs
        self.on_max_turns: LimitPolicy = on_max_turns
        self.on_cycle: LimitPolicy = on_cycle
        self.peer_handoffs: Mapping[str, Handoff] = peer_handoffs
        self.runtime = runtime or DEFAULT_RUNTIME
        self.tool_runner: ToolRunner = tool_runner or InProcessToolRunner()
        self.decisions: DecisionSource = decisions or PauseForDecision()
        self.lease_ttl = _check_lease_ttl(lease_ttl)
        self._session_ids = session_ids
        self._random_ids = session_ids is None
        self.journal = journal
        self.interrupt_before = frozenset(interrupt_before)
        self.interrupt_after = frozenset(interrupt_after)
        self.interrupt_on_handoff = interrupt_on_handoff
        self.redactor = Redactor.of(redact_keys)
        self.observers = _check_observers(observers)
        resolve = ModelResolver()
        options = PlanOptions(
            peers=peers,
            peer_handoffs=peer_handoffs,
            default_model=resolve.default(model),
            **_legacy_tool(legacy_handoff_tool, handoff_tool_name),
        )
        self.plans: Mapping[str, AgentPlan] = {
            name: build_plan(agent, options, resolve) for name, agent in peers.items()
        }
        self._fingerprint = fingerprint(self.plans, graph)
        self._digests = PartCache()
        self.spec = SwarmSpec(
            plans=self.plans,
            entry_agent=entry_agent,
            graph=graph,
            peer_handoffs=peer_handoffs,
            max_handoffs=max_handoffs,
            detect_cycles=detect_cycles,
            max_revisits=max_revisits,
            pass_full_history=pass_full_history,
            max_turns=max_turns,
            on_max_handoffs=on_max_handoffs,
            on_max_turns=on_max_turns,
            on_cycle=on_cycle,
            interrupt_before=self.interrupt_before,
            interrupt_after=self.interrupt_after,
            interrupt_on_handoff=interrupt_on_handoff,
            fingerprint=self._fingerprint,
            usage_limits=self.limits,
            run_timeout=check_timeout("run_timeout", run_timeout),
            agent_timeout=check_timeout("agent_timeout", agent_timeout),
        )
        """The compiled swarm a run loop drives: plans, graph, limits and policies, frozen."""

    def with_model(self, model: Model | str) -> Swarm:
        """The same swarm with another default model (agents with their own model keep it)."""
        return Swarm(self._agents_given, **{**self._settings, "model": model})

    def fingerprint(self) -> dict[str, Any]:
        """Digests of the configuration (agents, instructions, tools, graph) runs record."""
        return dict(self._fingerprint)

    def check(self) -> tuple[Finding, ...]:
        """What the configuration gets wrong, found before any model call (``swarmkit.check``):
        unreachable agents, rule edges that never fire, forced rule cycles, condition paths the
        context_type lacks, comparisons that never hold, offers never made. Errors first."""
        from swarmkit.check import check_swarm  # noqa: PLC0415 - most programs never check

        return check_swarm(self)

    @property
    def agents(self) -> Mapping[str, Agent]:
        """The swarm's agents by name."""
        return {name: plan.agent for name, plan in self.plans.items()}

    async def run(
        self,
        prompt: str,
        *,
        context: Mapping[str, Any] | None = None,
        deps: Any = None,
        session_id: str | None = None,
        journal: Journal | None = None,
        mirror: RecordSink | None = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
        limits: UsageLimits | None = None,
        history: History | None = None,
        continue_session: bool = False,
    ) -> RunResult:
        """Run the swarm on ``prompt`` until an agent answers or a limit stops it.

        ``context`` is plain JSON data, journaled and seen by rules and tools; ``deps`` holds
        Python objects (clients, connections, secrets) for tools and instructions, never
        journaled. ``mirror`` receives the run's journal records when it ends or pauses,
        instead of a journal written step by step (for engines with their own history). The
        seams (``runtime``, ``tool_runner``, ``decisions``) override the swarm's for this run,
        and ``limits`` its usage limits.

        To go on with a conversation, pass ``history=`` an earlier RunResult (the run starts
        with its active agent, messages and context) or its ``to_input()`` messages; or
        ``session_id=`` a journaled conversation with ``continue_session=True``, which starts
        from its latest turn and journals this one as ``{session_id}__turn_N``.
        """
        seams = self._seams(deps, runtime, tool_runner, decisions)
        events = self._events(
            prompt,
            context=context,
            session_id=session_id,
            journal=journal,
            mirror=mirror,
            seams=seams,
            streaming=False,
            limits=limits,
            turn=_Turn(history=history, continue_session=continue_session),
        )
        return await _last_result(events)

    def run_sync(
        self,
        prompt: str,
        *,
        context: Mapping[str, Any] | None = None,
        deps: Any = None,
        session_id: str | None = None,
        journal: Journal | None = None,
        history: History | None = None,
        continue_session: bool = False,
    ) -> RunResult:
        """:meth:`run` for code that is not async; inside a running event loop (Jupyter, async
        code) it raises RunError: use ``await swarm.run(...)`` there."""
        _check_no_running_loop(session_id)
        run = self.run(
            prompt,
            context=context,
            deps=deps,
            session_id=session_id,
            journal=journal,
            history=history,
            continue_session=continue_session,
        )
        return asyncio.run(run)

    def stream(
        self,
        prompt: str,
        *,
        context: Mapping[str, Any] | None = None,
        deps: Any = None,
        session_id: str | None = None,
        journal: Journal | None = None,
        mirror: RecordSink | None = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
        limits: UsageLimits | None = None,
        history: History | None = None,
        continue_session: bool = False,
    ) -> AsyncGenerator[Event, None]:
        """Run the swarm, yielding each event as it happens; the last is RunFinished.

        Leaving early (``break``) still journals every completed step and releases the
        session, so it can be resumed.
        """
        seams = self._seams(deps, runtime, tool_runner, decisions)
        return self._events(
            prompt,
            context=context,
            session_id=session_id,
            journal=journal,
            mirror=mirror,
            seams=seams,
            streaming=True,
            limits=limits,
            turn=_Turn(history=history, continue_session=continue_session),
        )

    async def replay(
        self,
        session_id: str,
        journal: Journal | None = None,
        *,
        tools: Literal["replay", "execute"] = "replay",
        live_after: int | None = None,
        fork_session_id: str | None = None,
        prompt: str | None = None,
        deps: Any = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
    ) -> RunResult:
        """Re-run a journaled session against the current code, with zero model calls.

        Model responses (and, unless ``tools="execute"``, tool results) come from the journal;
        whatever the current code asks that the journal does not hold raises
        ReplayDivergenceError with a diff. ``live_after=N`` replays the steps before N, then
        forks: the run goes on live as a new session (``fork_session_id``, by default
        ``{session_id}__fork_{N}``) in the same journal. ``prompt`` replays the session as if
        it had been asked something else, which diverges at once: a journal never serves its
        answers to another question. ``deps`` are handed to tools again (they are never
        journaled).
        """
        seams = self._seams(deps, runtime, tool_runner, decisions)
        store = self._store(journal, session_id)
        records = await store.read(session_id)
        start = _start_of(records, session_id)
        start = start if prompt is None else replace(start, prompt=prompt)
        execute = _check_tools_mode(tools)
        if live_after is None:
            # A strict replay writes nothing and may not go live: the journal is all it has.
            tape = self._tape(
                None, session_id, replayable(records), seams, go_live=False, execute_tools=execute
            )
            return await self._run_on(tape, seams, start, session_id, store)
        fork_id = fork_session_id or f"{session_id}__fork_{live_after}"
        prefix = _fork_prefix(records, live_after, fork_id)
        tape = self._tape(
            store, fork_id, prefix, seams, next_seq=len(prefix), execute_tools=execute
        )
        await tape.open()  # the fork's lease, before its first record
        try:
            await store.append(prefix)
        except BaseException:
            await tape.release()
            raise
        return await self._run_on(tape, seams, start, fork_id, store)

    async def resume(
        self,
        session_id: str,
        journal: Journal | None = None,
        *,
        decision: Decision | None = None,
        deps: Any = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
        limits: UsageLimits | None = None,
    ) -> RunResult:
        """Continue a run that crashed or paused: its journaled steps replay, then it goes on live.

        A run paused for a human (``stop_reason="interrupted"``) needs a ``decision``:
        ``approve()``, ``reject(reason)`` or ``edit(payload=...)``; an edit is validated before
        anything is written, so a rejected edit leaves the session waiting. The resumed run
        holds the session's lease: a second resumer gets ``SessionBusyError``. A run a time or
        usage limit stopped resumes with a fresh time allowance; its usage counts over the
        whole session, so pass larger ``limits`` to let it go on.
        """
        seams = self._seams(deps, runtime, tool_runner, decisions)
        store = self._store(journal, session_id)
        records = await store.read(session_id)
        start = _start_of(records, session_id)
        _check_resumable(records, session_id, decision)
        if decision is not None:
            check_decision(self.spec, records[-1].data.get("pending"), decision)
        prefix = resumable_prefix(records)
        tape = self._tape(
            store, session_id, prefix, seams, next_seq=len(records), decision=decision
        )
        return await self._run_on(tape, seams, start, session_id, store, limits=limits)

    async def history(
        self, session_id: str, journal: Journal | None = None, *, deps: Any = None
    ) -> tuple[SessionState, ...]:
        """The session's states, one after each journaled step (seed 003's state history).

        Computed by replaying the journal against the current code, with zero model calls;
        ``fork(session_id, at=state.step, ...)`` continues from any of them.
        """
        store = self._store(journal, session_id)
        records = await store.read(session_id)
        start = _start_of(records, session_id)
        seams = self._seams(deps, None, None, None)
        state = self._new_state(
            start.prompt, start.context, session_id, seams, entry=start.entry, start=start.continues
        )
        states: list[SessionState] = []
        previous: list[JournalRecord] = []

        def replayed(record: JournalRecord) -> None:
            # Everything the previous record caused has happened once the next one is reached.
            if previous:
                states.append(_snapshot(state, previous.pop()))
            previous.append(record)

        travel = TimeTravel(apply=state.context.update, replayed=replayed)
        tape = self._tape(
            None, session_id, replayable(records), seams, go_live=False, travel=travel
        )
        await self._drive(tape, seams, state, store)
        states.extend(_snapshot(state, record) for record in previous)
        return tuple(states)

    async def fork(
        self,
        session_id: str,
        *,
        at: int,
        context_update: Mapping[str, Any] | None = None,
        journal: Journal | None = None,
        fork_session_id: str | None = None,
        deps: Any = None,
    ) -> RunResult:
        """Continue live, as a new session, from the state after step ``at`` with its context
        updated (seed 003's ``update_state``); the fork journals where it came from."""
        seams = self._seams(deps, None, None, None)
        store = self._store(journal, session_id)
        records = await store.read(session_id)
        start = _start_of(records, session_id)
        fork_id = fork_session_id or f"{session_id}__fork_{at}"
        prefix = _fork_prefix(records, at + 1, fork_id)
        update = _check_context(context_update)
        state = self._new_state(
            start.prompt, start.context, fork_id, seams, entry=start.entry, start=start.continues
        )
        edit = {"context_update": update, "forked_from": session_id, "at": at}
        travel = TimeTravel(apply=state.context.update, edit=edit)
        tape = self._tape(store, fork_id, prefix, seams, next_seq=len(prefix), travel=travel)
        await tape.open()
        try:
            await store.append(prefix)
        except BaseException:
            await tape.release()
            raise
        return await self._drive(tape, seams, state, store)

    def _seams(
        self,
        deps: Any,
        runtime: Runtime | None,
        tool_runner: ToolRunner | None,
        decisions: DecisionSource | None,
    ) -> RunSeams:
        return RunSeams(
            runtime=runtime or self.runtime,
            tool_runner=tool_runner or self.tool_runner,
            decisions=decisions or self.decisions,
            deps=deps,
        )

    async def _events(
        self,
        prompt: str,
        *,
        context: Mapping[str, Any] | None,
        session_id: str | None,
        journal: Journal | None,
        mirror: RecordSink | None,
        seams: RunSeams,
        streaming: bool,
        limits: UsageLimits | None = None,
        turn: _Turn | None = None,
    ) -> AsyncGenerator[Event, None]:
        _check_journal(journal)
        store = journal or self.journal
        start, session_id = await self._turn_start(turn or _Turn(), session_id, store)
        state = self._new_state(prompt, context, session_id, seams, typed=True, start=start)
        if mirror is not None and store is not None:
            raise ConfigurationError("pass either a journal or a mirror, not both")
        # A random id of our own cannot be in the journal; a given or user-made id may be.
        checked = session_id is not None or not self._random_ids
        if store is not None and checked and await store.next_seq(state.session_id) != 0:
            raise JournalError(
                f"session {state.session_id!r} is already in the journal; "
                "resume or replay it, or run with a new session_id"
            )
        if mirror is not None:
            tape = self._tape(mirror, state.session_id, (), seams, mirror=True)
        else:
            tape = self._tape(store, state.session_id, (), seams)
        await tape.open()
        seams = replace(seams, delegate=self._delegator(store, seams, limits))
        # Closing the loop's generator here, not at interpreter exit, lets a caller who stops
        # reading early have the run's last journal write happen while the journal is open.
        loop = RunLoop(self._spec_for(limits), state, tape, seams, streaming=streaming)
        events = self._observed(loop.events())
        try:
            async for event in events:
                yield event
        finally:
            # A loop suspended mid-step (not at a yield) is being torn down as a whole, e.g.
            # garbage-collected with a stopped Temporal worker: it closes itself.
            if not getattr(events, "ag_running", False):
                await events.aclose()

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
            lease = LeaseTerms(owner=owner, ttl=self.lease_ttl, clock=runtime.clock)
        return Tape(
            journal=journal,
            session_id=session_id,
            prefix=prefix,
            go_live=go_live,
            next_seq=next_seq,
            execute_tools=execute_tools,
            decision=decision,
            redact=self.redactor,
            digests=self._digests,
            lease=lease,
            mirror=mirror,
            travel=travel,
        )

    async def _run_on(
        self,
        tape: Tape,
        seams: RunSeams,
        start: _Start,
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
        quiet = not self.observers
        loop = RunLoop(self._spec_for(limits), state, tape, seams, streaming=False, quiet=quiet)
        return await _last_result(self._observed(loop.events()))

    def _observed(self, events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        for observe in self.observers:
            events = observe(events)
        return events

    def _spec_for(self, limits: UsageLimits | None) -> SwarmSpec:
        if limits is None:
            return self.spec
        return replace(self.spec, usage_limits=_check_usage_limits(limits))

    def _delegator(
        self, store: Journal | None, seams: RunSeams, limits: UsageLimits | None = None
    ) -> Delegator:
        """How this run's delegation tools run their sub-runs: in the same journal, resumable,
        under the run's own usage limits (their tokens also count in the parent's)."""

        async def delegate(
            agent: str, task: str, session_id: str, context: Mapping[str, Any]
        ) -> RunResult:
            start = _Start(prompt=task, context=dict(context), entry=agent)
            if store is None or await store.next_seq(session_id) == 0:
                tape = self._tape(store, session_id, (), seams)
                return await self._run_on(tape, seams, start, session_id, store, limits=limits)
            # The parent crashed after this sub-run began: finish it, never start it twice.
            records = await store.read(session_id)
            if _finished(records):
                tape = self._tape(None, session_id, replayable(records), seams, go_live=False)
            else:
                prefix = resumable_prefix(records)
                tape = self._tape(store, session_id, prefix, seams, next_seq=len(records))
            return await self._run_on(tape, seams, start, session_id, store, limits=limits)

        return delegate

    async def _turn_start(
        self, turn: _Turn, session_id: str | None, store: Journal | None
    ) -> tuple[Continuation | None, str | None]:
        """Where this run starts, and its session id (a later turn's, when continuing)."""
        if not turn.continue_session:
            history = turn.history
            start = None if history is None else continuation(history, self.plans, self.entry_agent)
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
        previous = await self.replay(turns[-1], store)
        start = continuation(previous, self.plans, self.entry_agent)
        return start, turn_session_id(session_id, len(turns) + 1)

    def _store(self, journal: Journal | None, session_id: str) -> Journal:
        _check_journal(journal)
        store = journal or self.journal
        if store is None:
            raise ConfigurationError(
                f"no journal to read session {session_id!r} from: pass journal= or Swarm(journal=)"
            )
        return store

    def _start_state(self, start: _Start, session_id: str, seams: RunSeams) -> RunState:
        """The state of a run that (re)starts from a journaled or delegated start."""
        return self._new_state(
            start.prompt,
            start.context,
            session_id,
            seams,
            entry=start.entry,
            start=start.continues,
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
    ) -> RunState:
        """A new run's state; ``typed`` validates a caller's context against context_type
        (a journaled one was validated when its run started; a sub-run's carries tool updates
        the type may not declare)."""
        if not isinstance(prompt, str):
            raise ConfigurationError(f"prompt must be a str, got {type(prompt).__name__}")
        initial = _check_context(context)
        if typed:
            refuse_secret_context(initial, self.redactor)
        if typed and self.context_type is not None:
            initial = typed_context(self.context_type, initial)
        first = UserMessage(content=prompt)
        new_id = self._session_ids or seams.runtime.new_id
        state = RunState(
            session_id=_check_session_id(session_id) or new_id(),
            prompt=prompt,
            context=initial,
            agent=entry or self.entry_agent,
            transcript=[first],
            view=(first,),
            deps=seams.deps,
        )
        if start is not None:
            continue_from(state, start, self)
        return state


@dataclass(frozen=True, kw_only=True, slots=True)
class _Turn:
    """How a run relates to earlier ones: a given history, or the journal's latest turn."""

    history: History | None = None
    """An earlier result or messages to continue from."""
    continue_session: bool = False
    """Whether to continue the journaled conversation named by the session id."""


def continue_from(state: RunState, start: Continuation, swarm: Swarm) -> None:
    """Start a run where an earlier one ended: its agent, its messages, its context."""
    if start.agent not in swarm.plans:
        raise ConfigurationError(
            f"the history continues with agent {start.agent!r}, which this swarm does not have"
        )
    first = state.transcript[-1]
    state.agent = start.agent
    state.start = start
    state.transcript = [*start.messages, first]
    # No handoff brings the agent in, so no input filter or pass_full_history applies: it
    # goes on with the whole conversation.
    state.view = tuple(state.transcript)
    state.context = {**start.context, **state.context}


def _check_no_running_loop(session_id: str | None) -> None:
    """run_sync from inside a running loop cannot work; say so before any coroutine exists."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RunError(
        "run_sync() was called inside a running event loop (Jupyter, async code, a Temporal "
        "workflow); use `await swarm.run(...)` there instead",
        trail=(),
        session_id=session_id or "",
    )


async def _last_result(events: AsyncIterator[Event]) -> RunResult:
    result: RunResult | None = None
    async for event in events:
        if isinstance(event, RunFinished):
            result = event.result
    assert result is not None
    return result


@dataclass(frozen=True, kw_only=True, slots=True)
class _Start:
    """What a journaled session was started with."""

    prompt: str
    """The prompt."""
    context: dict[str, Any]
    """The context (as journaled: secrets redacted)."""
    entry: str | None
    """The agent that took the first turn (a delegated sub-run's is not the swarm's entry)."""
    continues: Continuation | None = None
    """For a later turn of a conversation: where the turn it continues ended."""


def _start_of(records: Sequence[JournalRecord], session_id: str) -> _Start:
    if not records or records[0].kind != "run_started":
        raise JournalError(f"session {session_id!r} does not start with a run_started record")
    data = records[0].data
    prompt, context, entry = data.get("prompt"), data.get("context") or {}, data.get("entry_agent")
    if not isinstance(prompt, str) or not isinstance(context, Mapping):
        raise corrupt_record(
            session_id, 0, "run_started", "it holds no prompt text or no context object"
        )
    return _Start(
        prompt=prompt,
        context=dict(context),
        entry=entry if isinstance(entry, str) else None,
        continues=start_from_data(data),
    )


def _snapshot(state: RunState, record: JournalRecord) -> SessionState:
    return SessionState(
        step=record.seq,
        kind=record.kind,
        agent=state.agent,
        context=json.loads(json.dumps(state.context)),
        handoff_count=state.handoff_count,
        turns=state.turns,
        messages=tuple(state.transcript),
    )


def _finished(records: Sequence[JournalRecord]) -> bool:
    last = records[-1]
    return last.kind == "run_finished" and last.data.get("stop_reason") not in (
        "error",
        "interrupted",
    )


def _check_model(model: object) -> None:
    if model is None or (isinstance(model, str) and model) or isinstance(model, Model):
        return
    raise ConfigurationError(
        f"model= must be a Model (e.g. OpenAIModel('gpt-4o')), a model name such as 'gpt-4o', "
        f"or None; got {type(model).__name__} {_short(model)}"
    )


def _check_journal(journal: object) -> None:
    if journal is None or isinstance(journal, Journal):
        return
    hint = f"SQLiteJournal({journal!r})" if isinstance(journal, str) else "SQLiteJournal(path)"
    raise ConfigurationError(
        f"journal= must be a Journal, e.g. {hint} or InMemoryJournal(); "
        f"got {type(journal).__name__} {_short(journal)}"
    )


def _short(value: object) -> str:
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ must not hide the real mistake
        return "(unprintable)"
    return text if len(text) <= 60 else text[:57] + "..."


def _check_tools_mode(tools: str) -> bool:
    if tools not in ("replay", "execute"):
        raise ConfigurationError(f"tools must be 'replay' or 'execute', got {tools!r}")
    return tools == "execute"


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
    last = records[-1]
    interrupted = last.kind == "run_finished" and last.data.get("stop_reason") == "interrupted"
    interrupted = interrupted and not last.data.get("cancelled")  # Ctrl-C: nothing to decide
    if last.kind == "run_finished" and last.data.get("stop_reason") not in _RESUMABLE:
        raise JournalError(
            f"session {session_id!r} already finished ({last.data.get('stop_reason')}); "
            "replay it instead of resuming"
        )
    if interrupted and decision is None:
        raise JournalError(
            f"session {session_id!r} is waiting for a human decision: "
            "pass decision=approve(), reject(reason) or edit(payload=...)"
        )
    if not interrupted and decision is not None:
        raise JournalError(
            f"session {session_id!r} is not waiting for a decision; resume it without one"
        )


def _legacy_tool(legacy: bool | None, name: str | None) -> dict[str, Any]:
    # Seed 002 code names its single handoff tool with handoff_tool_name; naming it asks for it.
    if legacy is False and name is not None:
        raise ConfigurationError(
            f"handoff_tool_name={name!r} names the single legacy handoff tool, which "
            "legacy_handoff_tool=False turns off; drop one of the two"
        )
    return {
        "legacy_handoff_tool": bool(legacy) or name is not None,
        "handoff_tool_name": name or "handoff",
    }


_RESUMABLE = ("interrupted", "error", "timeout", "usage_limit")


def _check_usage_limits(limits: UsageLimits | None) -> UsageLimits | None:
    if limits is not None and not isinstance(limits, UsageLimits):
        raise ConfigurationError(f"limits must be a UsageLimits, got {type(limits).__name__}")
    return limits


def _check_observers(observers: Sequence[EventObserver]) -> tuple[EventObserver, ...]:
    if isinstance(observers, str) or not isinstance(observers, Sequence):
        raise ConfigurationError("observers takes a list of event observers (e.g. [traced])")
    for observer in observers:
        if not callable(observer):
            raise ConfigurationError(
                f"observer {observer!r:.80} is not callable: pass a function that takes a "
                "run's events and yields them on"
            )
    return tuple(observers)


def _check_interrupts(names: Collection[str], peers: Mapping[str, Agent], option: str) -> None:
    if isinstance(names, str):
        raise ConfigurationError(f"{option} takes a list of agent names, not one string")
    unknown = sorted(set(names) - set(peers))
    if unknown:
        raise ConfigurationError(f"{option} names unknown agents: {', '.join(unknown)}")


def fingerprint(plans: Mapping[str, AgentPlan], graph: HandoffGraph | None) -> dict[str, Any]:
    """Digests that say whether a journal was recorded with this configuration."""
    instructions = {n: _describe(p.agent.instructions) for n, p in plans.items()}
    tools = {n: [[s.name, dict(s.parameters)] for s in p.tool_specs] for n, p in plans.items()}
    return {
        "agents": sorted(plans),
        "instructions": _digest(instructions),
        "tools": _digest(tools),
        "graph": _digest(graph.to_dict()) if graph is not None else None,
    }


def _describe(instructions: object) -> str:
    if isinstance(instructions, str):
        return instructions
    return str(getattr(instructions, "__qualname__", repr(instructions)))


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _peers(
    agents: Mapping[str, Agent | Handoff] | Sequence[Agent | Handoff],
) -> tuple[dict[str, Agent], dict[str, Handoff]]:
    entries = _entries(agents)
    peers: dict[str, Agent] = {}
    configs: dict[str, Handoff] = {}
    for name, entry in entries:
        agent = entry.agent if isinstance(entry, Handoff) else entry
        if not isinstance(agent, Agent):
            raise ConfigurationError(
                f"swarm member {name!r} must be an Agent (or a Handoff wrapping one), "
                f"got {type(agent).__name__}"
            )
        if name in peers:
            raise ConfigurationError(f"two agents are named {name!r}; agent names must be unique")
        peers[name] = agent if agent.name == name else replace(agent, name=name)
        if isinstance(entry, Handoff):
            configs[name] = entry
    if not peers:
        raise ConfigurationError("a swarm needs at least one agent")
    _add_handoff_targets(peers)
    return peers, configs


def _add_handoff_targets(peers: dict[str, Agent]) -> None:
    """An Agent an agent hands off to joins the swarm, so the peer list need not repeat it."""
    queue = list(peers.values())
    while queue:
        configs = queue.pop().handoff_configs() or ()
        for target in (h.agent for h in configs):
            if isinstance(target, Agent) and target.name not in peers:
                peers[target.name] = target
                queue.append(target)


def _entry_name_of(entry: str | Agent, peers: Mapping[str, Agent]) -> str:
    if not isinstance(entry, Agent):
        return entry
    for name, peer in peers.items():
        if peer is entry:
            return name
    return entry.name


def _entries(
    agents: Mapping[str, Agent | Handoff] | Sequence[Agent | Handoff],
) -> list[tuple[str, Agent | Handoff]]:
    if isinstance(agents, Mapping):
        return list(agents.items())
    if isinstance(agents, str) or not isinstance(agents, Sequence):
        raise ConfigurationError("agents must be a list of Agent or a {name: Agent | Handoff} dict")
    return [(_entry_name(entry), entry) for entry in agents]


def _entry_name(entry: object) -> str:
    if isinstance(entry, Agent):
        return entry.name
    if isinstance(entry, Handoff) and isinstance(entry.agent, Agent):
        return entry.agent.name
    raise ConfigurationError(
        f"agents must be Agent or Handoff(agent=Agent(...)) objects, got {entry!r}"
    )


def _check_limits(**limits: int) -> None:
    for name, value in limits.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigurationError(f"{name} must be an int >= 0, got {value!r}")
    if limits["max_turns"] < 1:
        raise ConfigurationError("max_turns must be at least 1: the entry agent needs one call")


def _check_policies(**policies: str) -> None:
    for name, value in policies.items():
        if value not in _POLICIES:
            raise ConfigurationError(f"{name} must be one of {', '.join(_POLICIES)}, got {value!r}")


def _check_graph(graph: HandoffGraph | None, peers: Mapping[str, Agent]) -> None:
    if graph is None:
        return
    if not isinstance(graph, HandoffGraph):
        raise ConfigurationError(f"graph must be a HandoffGraph, got {type(graph).__name__}")
    unknown = [node for node in graph.nodes() if node not in peers]
    if unknown:
        raise ConfigurationError(
            f"the graph names agents the swarm does not have: {', '.join(unknown)}"
        )


def _check_context(context: Mapping[str, Any] | None) -> dict[str, Any]:
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


def _check_lease_ttl(ttl: float) -> float:
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        raise ConfigurationError(f"lease_ttl must be a positive number of seconds, got {ttl!r}")
    return float(ttl)


def _check_session_id(session_id: str | None) -> str | None:
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise ConfigurationError(f"session_id must be a non-empty str, got {session_id!r}")
    return session_id
