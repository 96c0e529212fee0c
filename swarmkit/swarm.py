"""Swarm: the facade. Settings become a SwarmConfig, compiled once; sessions do the running."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from pydantic import BaseModel

from swarmkit._deprecated import check_per_call_seams, moved_attribute
from swarmkit._run import decision_problems
from swarmkit._sessions import Sessions, Turn, last_result
from swarmkit.agent import Agent
from swarmkit.config import (
    DEFAULT_LEASE_TTL,
    DEFAULT_REDACT_KEYS,
    SPEC_FREE,
    Members,
    SwarmConfig,
    check_observers,
    compile_spec,
    with_models,
)
from swarmkit.conversation import NextTurnSetting
from swarmkit.events import Event, EventObserver
from swarmkit.exceptions import ConfigurationError, RunError
from swarmkit.graph import HandoffGraph
from swarmkit.interrupts import Decision, DecisionSource, FieldProblem, PendingDecision
from swarmkit.journal import Journal
from swarmkit.ledger import Ledger
from swarmkit.limits import UsageLimits
from swarmkit.lowlevel import RecordSink
from swarmkit.models import Model
from swarmkit.plan import AgentPlan
from swarmkit.result import RunResult, SentRequest, SessionState
from swarmkit.runtime import Runtime
from swarmkit.shadow import RuleAudit
from swarmkit.spec import LimitPolicy, RunSeams, SwarmSpec
from swarmkit.tools import ToolRunner

if TYPE_CHECKING:
    from swarmkit._run import History
    from swarmkit.check import Finding

__all__ = ["DEFAULT_LEASE_TTL", "DEFAULT_REDACT_KEYS", "LimitPolicy", "Swarm"]

_Written = TypeVar("_Written")


class Swarm:
    """Peer agents that hand off to each other; one Swarm serves many concurrent runs.

    Every keyword is a field of [SwarmConfig][swarmkit.SwarmConfig], documented there
    (``swarm.config`` returns it). ``agents`` is a list of agents (or Handoff configs), or a
    ``{name: Agent | Handoff}`` dict, whose keys name the peers. Every mistake raises
    ConfigurationError here, before any model call.
    """

    def __init__(
        self,
        agents: Members,
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
        next_turn: NextTurnSetting = "last",
        handoffs_per: Literal["run", "conversation"] = "run",
        shadow: HandoffGraph | Mapping[str, Any] | None = None,
        audit: RuleAudit | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        # The keywords are exactly SwarmConfig's fields (tests/test_architecture.py checks it).
        config = SwarmConfig(**{k: v for k, v in locals().items() if k != "self"})
        spec = compile_spec(config)
        self._set(config, spec, Sessions(spec, config))

    def _set(self, config: SwarmConfig, spec: SwarmSpec, sessions: Sessions) -> None:
        self._config, self._spec, self._sessions = config, spec, sessions

    def _derived(self, spec: SwarmSpec | None = None, **changes: Any) -> Swarm:
        """A new swarm from this one's config with ``changes``; what they leave alone of the
        compiled spec (and its digest cache) is shared, not compiled again."""
        config = replace(self._config, **changes)
        if spec is None:
            spec = self._spec if SPEC_FREE.issuperset(changes) else compile_spec(config)
        swarm = object.__new__(Swarm)
        swarm._set(config, spec, Sessions(spec, config, self._sessions.digests))
        return swarm

    # -- what it is ----------------------------------------------------------------------

    @property
    def config(self) -> SwarmConfig:
        """The settings this swarm was built with, as one frozen value."""
        return self._config

    @property
    def spec(self) -> SwarmSpec:
        """The compiled swarm a run loop drives: plans, graph, limits and policies, frozen."""
        return self._spec

    @property
    def plans(self) -> Mapping[str, AgentPlan]:
        """Each agent as compiled (model, tools, transfer tools, handoff configs), by name."""
        return self._spec.plans

    @property
    def agents(self) -> Mapping[str, Agent]:
        """The swarm's agents by name."""
        return {name: plan.agent for name, plan in self._spec.plans.items()}

    @property
    def entry_agent(self) -> str:
        """The name of the agent that takes the first turn."""
        return self._spec.entry_agent

    @property
    def graph(self) -> HandoffGraph | None:
        """The rules consulted before each model call."""
        return self._spec.graph

    @property
    def journal(self) -> Journal | None:
        """Where runs are journaled when a call passes no journal."""
        return self._config.journal

    def __getattr__(self, name: str) -> Any:
        """Settings that were attributes before ``config`` and ``spec``: still readable."""
        owner, new_name = moved_attribute(name, type(self).__name__)
        if name == "redactor":
            return self._sessions.redactor
        if owner == "spec":
            return getattr(self._spec, new_name)
        return getattr(self._sessions.defaults, name, getattr(self._config, name))

    def fingerprint(self) -> dict[str, Any]:
        """Digests of the configuration (agents, instructions, tools, graph) runs record."""
        return dict(self._spec.fingerprint)

    def check(self) -> tuple[Finding, ...]:
        """What the configuration gets wrong, found before any model call (``swarmkit.check``):
        unreachable agents, rule edges that never fire, forced rule cycles, condition paths the
        context_type lacks, comparisons that never hold, offers never made. Errors first."""
        from swarmkit.check import check_swarm  # noqa: PLC0415 - most programs never check

        return check_swarm(self._spec)

    def check_decision(
        self, pending: PendingDecision | Mapping[str, Any], decision: Decision
    ) -> tuple[FieldProblem, ...]:
        """What a paused run would refuse in ``decision`` (an edit that does not validate),
        field by field; empty when it can be taken. ``resume`` refuses by the same rule."""
        return decision_problems(self._spec, pending, decision)

    # -- variants ------------------------------------------------------------------------

    def with_ledger(self, ledger: Ledger | None) -> Swarm:
        """The same swarm with another spend ledger, or none (an evaluation's own, say)."""
        return self._derived(ledger=ledger)

    def with_model(self, model: Model | str) -> Swarm:
        """The same swarm with another default model (agents with their own model keep it)."""
        return self._derived(model=model)

    def with_models(self, models: Mapping[str, Model | str]) -> Swarm:
        """The same swarm with these agents' models replaced, whatever model they had; the
        configuration's fingerprint is unchanged (a journal's answers do not depend on it)."""
        merged = {**self._config.models, **models}
        spec = replace(self._spec, plans=with_models(self._spec.plans, models))
        return self._derived(spec, models=merged)

    def with_graph(self, graph: HandoffGraph | None) -> Swarm:
        """The same swarm consulting ``graph`` before each model call (``None``: no rules),
        checked as the constructor checks it: ConfigurationError for an agent it lacks."""
        return self._derived(graph=graph)

    def with_seams(
        self,
        *,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
    ) -> Swarm:
        """The same swarm reaching the world through other seams (an engine's runtime, tool
        runner or decision source); a seam not given stays the swarm's."""
        given: dict[str, Any] = {"runtime": runtime, "tool_runner": tool_runner}
        given["decisions"] = decisions
        return self._derived(**{k: v for k, v in given.items() if v is not None})

    def with_observers(self, *observers: EventObserver) -> Swarm:
        """The same swarm with ``observers`` wrapped around its own, outermost last."""
        check_observers(observers, one_by_one=True)
        return self._derived(observers=(*self._config.observers, *observers))

    # -- running -------------------------------------------------------------------------

    async def run(
        self,
        prompt: str,
        *,
        context: Mapping[str, Any] | None = None,
        deps: Any = None,
        session_id: str | None = None,
        journal: Journal | None = None,
        mirror: RecordSink | None = None,
        limits: UsageLimits | None = None,
        history: History | None = None,
        continue_session: bool = False,
        start_agent: str | None = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
    ) -> RunResult:
        """Run the swarm on ``prompt`` until an agent answers or a limit stops it.

        ``context`` is plain JSON data, journaled and seen by rules and tools; ``deps`` holds
        Python objects (clients, connections, secrets) for tools and instructions, never
        journaled. ``mirror`` receives the run's journal records when it ends or pauses,
        instead of a journal written step by step (for engines with their own history).
        ``limits`` replaces the swarm's usage limits for this run.

        To go on with a conversation, pass ``history=`` an earlier RunResult (the run starts
        with its active agent, messages and context) or its ``to_input()`` messages; or
        ``session_id=`` a journaled conversation with ``continue_session=True``, which starts
        from its latest turn and journals this one as ``{session_id}__turn_N``.
        Who takes such a turn's first step is the swarm's ``next_turn`` policy (journaled, and
        in ``RunResult.next_turn``); ``start_agent=`` names the agent instead, for this call
        (and for a fresh run, replaces the entry agent).

        Deprecated: ``runtime=``, ``tool_runner=`` and ``decisions=`` replace the swarm's
        seams for this call, with a DeprecationWarning; use [with_seams][swarmkit.Swarm.with_seams].
        """
        events = self._sessions.events(
            prompt,
            context=context,
            session_id=session_id,
            journal=journal,
            mirror=mirror,
            seams=self._seams(deps, runtime, tool_runner, decisions),
            streaming=False,
            limits=limits,
            turn=Turn(history=history, continue_session=continue_session, start_agent=start_agent),
        )
        return await last_result(events)

    def run_sync(
        self,
        prompt: str,
        *,
        context: Mapping[str, Any] | None = None,
        deps: Any = None,
        session_id: str | None = None,
        journal: Journal | None = None,
        mirror: RecordSink | None = None,
        limits: UsageLimits | None = None,
        history: History | None = None,
        continue_session: bool = False,
        start_agent: str | None = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
    ) -> RunResult:
        """[run][swarmkit.Swarm.run] for code that is not async, with the same keywords; inside
        a running event loop (Jupyter, async code) it raises RunError: use
        ``await swarm.run(...)``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            events = self._sessions.events(
                prompt,
                context=context,
                session_id=session_id,
                journal=journal,
                mirror=mirror,
                # Checked here, not inside the event loop, so a warning names the caller's line.
                seams=self._seams(deps, runtime, tool_runner, decisions),
                streaming=False,
                limits=limits,
                turn=Turn(
                    history=history, continue_session=continue_session, start_agent=start_agent
                ),
            )
            return asyncio.run(last_result(events))
        raise RunError(
            "run_sync() was called inside a running event loop (Jupyter, async code, a "
            "Temporal workflow); use `await swarm.run(...)` there instead",
            trail=(),
            session_id=session_id or "",
        )

    def stream(
        self,
        prompt: str,
        *,
        context: Mapping[str, Any] | None = None,
        deps: Any = None,
        session_id: str | None = None,
        journal: Journal | None = None,
        mirror: RecordSink | None = None,
        limits: UsageLimits | None = None,
        history: History | None = None,
        continue_session: bool = False,
        start_agent: str | None = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
    ) -> AsyncGenerator[Event, None]:
        """[run][swarmkit.Swarm.run], yielding each event as it happens; the last is
        RunFinished. It takes the same keywords.

        Leaving early (``break``) still journals every completed step and releases the
        session, so it can be resumed.
        """
        return self._sessions.events(
            prompt,
            context=context,
            session_id=session_id,
            journal=journal,
            mirror=mirror,
            seams=self._seams(deps, runtime, tool_runner, decisions),
            streaming=True,
            limits=limits,
            turn=Turn(history=history, continue_session=continue_session, start_agent=start_agent),
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
        journaled). ``runtime=``, ``tool_runner=`` and ``decisions=`` are deprecated, as in
        [run][swarmkit.Swarm.run].
        """
        if tools not in ("replay", "execute"):
            raise ConfigurationError(f"tools must be 'replay' or 'execute', got {tools!r}")
        return await self._sessions.replay(
            session_id,
            journal,
            seams=self._seams(deps, runtime, tool_runner, decisions),
            execute_tools=tools == "execute",
            live_after=live_after,
            fork_session_id=fork_session_id,
            prompt=prompt,
        )

    async def what_if(
        self,
        session_id: str,
        journal: Journal | None = None,
        *,
        prompt: str | None = None,
        context: Mapping[str, Any] | None = None,
        rules: bool = True,
        live: bool = False,
        deps: Any = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
    ) -> RunResult:
        """Replay a session as if it had started with another ``prompt`` or ``context``, or
        with the HandoffGraph's rules off (``rules=False``).

        Every step whose request the change leaves as it was is served from the journal. By
        default (offline, zero model calls) the first request it alters raises
        ReplayDivergenceError with the diff (where and how the change first matters); with
        ``live=True`` the run forks there instead into a new session,
        ``{session_id}__whatif_{step}``, journaled beside the original, which goes on against
        the swarm's models. A change that alters no request returns the replayed result.
        ``runtime=``, ``tool_runner=`` and ``decisions=`` are deprecated, as in
        [run][swarmkit.Swarm.run].
        """
        swarm = self if rules else self.with_graph(None)
        return await swarm._sessions.what_if(
            session_id,
            journal,
            seams=self._seams(deps, runtime, tool_runner, decisions),
            prompt=prompt,
            context=context,
            live=live,
        )

    async def resume(
        self,
        session_id: str,
        journal: Journal | None = None,
        *,
        decision: Decision | None = None,
        deps: Any = None,
        limits: UsageLimits | None = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
    ) -> RunResult:
        """Continue a run that crashed or paused: its journaled steps replay, then it goes on live.

        A run paused for a human (``stop_reason="interrupted"``) needs a ``decision``:
        ``approve()``, ``reject(reason)`` or ``edit(payload=...)``; an edit is validated before
        anything is written (by [check_decision][swarmkit.Swarm.check_decision]'s rule), so a
        rejected edit leaves the session waiting. The resumed run holds the session's lease: a
        second resumer gets ``SessionBusyError``. A run a time or usage limit stopped resumes
        with a fresh time allowance; its usage counts over the whole session, so pass larger
        ``limits``. ``runtime=``, ``tool_runner=`` and ``decisions=`` are deprecated, as in
        [run][swarmkit.Swarm.run].
        """
        return await self._sessions.resume(
            session_id,
            journal,
            seams=self._seams(deps, runtime, tool_runner, decisions),
            decision=decision,
            limits=limits,
        )

    async def history(
        self, session_id: str, journal: Journal | None = None, *, deps: Any = None
    ) -> tuple[SessionState, ...]:
        """The session's states, one after each journaled step.

        Computed by replaying the journal against the current code, with zero model calls;
        ``fork(session_id, at=state.step, ...)`` continues from any of them.
        """
        return await self._sessions.history(session_id, journal, seams=self._seams(deps))

    async def requests(
        self, session_id: str, journal: Journal | None = None, *, deps: Any = None
    ) -> tuple[SentRequest, ...]:
        """What each model call of a journaled session was sent, in order: the instructions,
        the messages after input filters, the tools with their schemas, the settings, the
        handoff payload; secrets redacted. Rebuilt by replaying the session against the current
        code with zero model calls: ``ReplayDivergenceError`` if the code changed since."""
        return await self._sessions.requests(session_id, journal, seams=self._seams(deps))

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
        updated; the fork journals where it came from."""
        return await self._sessions.fork(
            session_id,
            at=at,
            context_update=context_update,
            journal=journal,
            fork_session_id=fork_session_id,
            seams=self._seams(deps),
        )

    def _seams(
        self,
        deps: Any,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
    ) -> RunSeams:
        """The seams of one call: the swarm's, under any deprecated ones the call was given."""
        check_per_call_seams(runtime=runtime, tool_runner=tool_runner, decisions=decisions)
        return self._sessions.seams(deps, runtime, tool_runner, decisions)


def stream_written(
    swarm: Swarm,
    prompt: str,
    *,
    text: Callable[[str, str], _Written],
    context: Mapping[str, Any] | None = None,
    session_id: str | None = None,
    journal: Journal | None = None,
    continue_session: bool = False,
) -> AsyncGenerator[Event | _Written, None]:
    """``swarm.stream(prompt, ...)`` for a server that sends a run's text in a wire form of its
    own: each piece of the answer is what ``text(agent, piece)`` writes, yielded where its
    TextDelta would be, and no TextDelta is built; every other event is as ``stream`` yields
    it. A swarm with observers streams TextDelta events (they read them), so the reader
    takes both."""
    if not callable(text):
        raise ConfigurationError(
            f"stream_written's text must be a function of (agent, piece) that writes a piece "
            f"of the answer, not {type(text).__name__}"
        )
    # The loop yields what ``text`` returns as it is and never reads it back: the casts
    # only tell the type checker so.
    events = swarm._sessions.events(
        prompt,
        context=context,
        session_id=session_id,
        journal=journal,
        mirror=None,
        seams=swarm._seams(None),
        streaming=cast("Callable[[str, str], Event]", text),
        limits=None,
        turn=Turn(continue_session=continue_session),
    )
    return cast("AsyncGenerator[Event | _Written, None]", events)
