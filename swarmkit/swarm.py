"""Swarm: peer agents passing control through handoffs, rules consulted before the model."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from swarmkit._plan import AgentPlan, ModelResolver, PlanOptions, build_plan
from swarmkit._run import RESERVED_KEY, RunLoop, RunState
from swarmkit._run._decisions import check_decision
from swarmkit._run._spec import Delegator, LimitPolicy, RunSeams, SwarmSpec
from swarmkit.agent import Agent
from swarmkit.events import Event, RunFinished
from swarmkit.exceptions import ConfigurationError, JournalError
from swarmkit.graph import HandoffGraph
from swarmkit.handoffs import Handoff
from swarmkit.interrupts import Decision, DecisionSource, PauseForDecision
from swarmkit.journal import Journal, JournalRecord
from swarmkit.journal._digest import PartCache
from swarmkit.journal._records import json_default
from swarmkit.journal._tape import LeaseTerms, RecordSink, Tape, TimeTravel, resumable_prefix
from swarmkit.messages import UserMessage
from swarmkit.models import Model
from swarmkit.redaction import DEFAULT_SECRET_PATTERNS, Redactor
from swarmkit.result import RunResult, SessionState
from swarmkit.runtime import DEFAULT_RUNTIME, Runtime
from swarmkit.tools import InProcessToolRunner, ToolRunner

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
        entry_agent: str,
        *,
        model: Model | str | None = None,
        graph: HandoffGraph | None = None,
        max_handoffs: int = 8,
        detect_cycles: bool = True,
        max_revisits: int = 0,
        pass_full_history: bool = True,
        handoff_tool_name: str = "handoff",
        legacy_handoff_tool: bool = False,
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
    ) -> None:
        self._settings = {k: v for k, v in locals().items() if k not in ("self", "agents")}
        self._agents_given = agents
        peers, peer_handoffs = _peers(agents)
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
        resolve = ModelResolver()
        options = PlanOptions(
            peers=peers,
            peer_handoffs=peer_handoffs,
            default_model=resolve.default(model),
            legacy_handoff_tool=legacy_handoff_tool,
            handoff_tool_name=handoff_tool_name,
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
        )
        """The compiled swarm a run loop drives: plans, graph, limits and policies, frozen."""

    def with_model(self, model: Model | str) -> Swarm:
        """The same swarm with another default model (agents with their own model keep it)."""
        return Swarm(self._agents_given, **{**self._settings, "model": model})

    def fingerprint(self) -> dict[str, Any]:
        """Digests of the configuration (agents, instructions, tools, graph) runs record."""
        return dict(self._fingerprint)

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
    ) -> RunResult:
        """Run the swarm on ``prompt`` until an agent answers or a limit stops it.

        ``context`` is plain JSON data, journaled and seen by rules and tools; ``deps`` holds
        Python objects (clients, connections, secrets) for tools and instructions, never
        journaled. ``mirror`` receives the run's journal records when it ends or pauses,
        instead of a journal written step by step (for engines with their own history). The
        seams (``runtime``, ``tool_runner``, ``decisions``) override the swarm's for this run.
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
    ) -> RunResult:
        """:meth:`run` for code that is not async (not from inside a running event loop)."""
        _check_no_running_loop()
        run = self.run(prompt, context=context, deps=deps, session_id=session_id, journal=journal)
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
                None, session_id, records, seams, go_live=False, execute_tools=execute
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
    ) -> RunResult:
        """Continue a run that crashed or paused: its journaled steps replay, then it goes on live.

        A run paused for a human (``stop_reason="interrupted"``) needs a ``decision``:
        ``approve()``, ``reject(reason)`` or ``edit(payload=...)``; an edit is validated before
        anything is written, so a rejected edit leaves the session waiting. The resumed run
        holds the session's lease: a second resumer gets ``SessionBusyError``.
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
        return await self._run_on(tape, seams, start, session_id, store)

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
        state = self._new_state(start.prompt, start.context, session_id, seams, entry=start.entry)
        states: list[SessionState] = []
        previous: list[JournalRecord] = []

        def replayed(record: JournalRecord) -> None:
            # Everything the previous record caused has happened once the next one is reached.
            if previous:
                states.append(_snapshot(state, previous.pop()))
            previous.append(record)

        travel = TimeTravel(apply=state.context.update, replayed=replayed)
        tape = self._tape(None, session_id, records, seams, go_live=False, travel=travel)
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
        state = self._new_state(start.prompt, start.context, fork_id, seams, entry=start.entry)
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
    ) -> AsyncGenerator[Event, None]:
        state = self._new_state(prompt, context, session_id, seams)
        store = journal or self.journal
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
        seams = replace(seams, delegate=self._delegator(store, seams))
        # Closing the loop's generator here, not at interpreter exit, lets a caller who stops
        # reading early have the run's last journal write happen while the journal is open.
        loop = RunLoop(self.spec, state, tape, seams, streaming=streaming)
        events = loop.events()
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
    ) -> RunResult:
        state = self._new_state(start.prompt, start.context, session_id, seams, entry=start.entry)
        return await self._drive(tape, seams, state, store)

    async def _drive(
        self, tape: Tape, seams: RunSeams, state: RunState, store: Journal | None
    ) -> RunResult:
        seams = replace(seams, delegate=self._delegator(store, seams))
        tape.bind_state(state.context.update)
        await tape.open()
        loop = RunLoop(self.spec, state, tape, seams, streaming=False)
        return await _last_result(loop.events())

    def _delegator(self, store: Journal | None, seams: RunSeams) -> Delegator:
        """How this run's delegation tools run their sub-runs: in the same journal, resumable."""

        async def delegate(
            agent: str, task: str, session_id: str, context: Mapping[str, Any]
        ) -> RunResult:
            start = _Start(prompt=task, context=dict(context), entry=agent)
            if store is None or await store.next_seq(session_id) == 0:
                tape = self._tape(store, session_id, (), seams)
                return await self._run_on(tape, seams, start, session_id, store)
            # The parent crashed after this sub-run began: finish it, never start it twice.
            records = await store.read(session_id)
            if _finished(records):
                tape = self._tape(None, session_id, records, seams, go_live=False)
            else:
                prefix = resumable_prefix(records)
                tape = self._tape(store, session_id, prefix, seams, next_seq=len(records))
            return await self._run_on(tape, seams, start, session_id, store)

        return delegate

    def _store(self, journal: Journal | None, session_id: str) -> Journal:
        store = journal or self.journal
        if store is None:
            raise ConfigurationError(
                f"no journal to read session {session_id!r} from: pass journal= or Swarm(journal=)"
            )
        return store

    def _new_state(
        self,
        prompt: str,
        context: Mapping[str, Any] | None,
        session_id: str | None,
        seams: RunSeams,
        *,
        entry: str | None = None,
    ) -> RunState:
        if not isinstance(prompt, str):
            raise ConfigurationError(f"prompt must be a str, got {type(prompt).__name__}")
        initial = _check_context(context)
        first = UserMessage(content=prompt)
        new_id = self._session_ids or seams.runtime.new_id
        return RunState(
            session_id=_check_session_id(session_id) or new_id(),
            prompt=prompt,
            context=initial,
            agent=entry or self.entry_agent,
            transcript=[first],
            view=(first,),
            deps=seams.deps,
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


def _start_of(records: Sequence[JournalRecord], session_id: str) -> _Start:
    if not records or records[0].kind != "run_started":
        raise JournalError(f"session {session_id!r} does not start with a run_started record")
    data = records[0].data
    entry = data.get("entry_agent")
    return _Start(
        prompt=str(data["prompt"]),
        context=dict(data.get("context") or {}),
        entry=entry if isinstance(entry, str) else None,
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
    if last.kind == "run_finished" and last.data.get("stop_reason") not in ("interrupted", "error"):
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
    return peers, configs


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


def _check_no_running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise ConfigurationError(
        "run_sync cannot run inside a running event loop (async code or a Temporal workflow): "
        "await swarm.run(...) instead"
    )


def _check_session_id(session_id: str | None) -> str | None:
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise ConfigurationError(f"session_id must be a non-empty str, got {session_id!r}")
    return session_id
