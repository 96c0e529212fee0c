"""Delegation calls of one turn: journaled or replayed in call order, run live concurrently.

Each sub-run's events reach the delegating run's stream wrapped in ``SubRunEvent``, one sub-run
after another in call order (the first live, the others held until the ones before are done),
so the order never depends on which concurrent branch was quicker and a replay streams the
same sequence: a replayed delegation replays its journaled sub-run for its events.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace

from swarmkit import events as ev
from swarmkit._log import log
from swarmkit._run import _budget as budget
from swarmkit._run._state import RunState
from swarmkit.delegation import AgentTool
from swarmkit.exceptions import (
    JournalError,
    ReplayDivergenceError,
    ToolArgumentsError,
    ToolExecutionError,
)
from swarmkit.limits import Spend
from swarmkit.lowlevel import StepWriter
from swarmkit.messages import ToolCall
from swarmkit.plan import AgentPlan
from swarmkit.result import RunResult
from swarmkit.spec import RunSeams, SubRun
from swarmkit.tools import ToolOutcome


@dataclass(frozen=True, kw_only=True, slots=True)
class Delegating:
    """How the delegating run reads its sub-runs."""

    quiet: bool
    """Only results are read: sub-runs' events are not streamed."""
    streaming: bool
    """The run streams text deltas, so its sub-runs do too."""


async def run_delegations(
    plan: AgentPlan,
    calls: Sequence[ToolCall],
    state: RunState,
    tape: StepWriter,
    seams: RunSeams,
    *,
    how: Delegating,
) -> AsyncIterator[ev.Event | tuple[ToolCall, ToolOutcome]]:
    """Yield each call's ToolCalled event, its sub-run's events, then (call, outcome) pairs in
    call order.

    Outcomes come from the journal while it lasts; the live ones run as concurrent sub-runs,
    so a failing branch costs only its own result.
    """
    outcomes: dict[str, ToolOutcome] = {}
    branches: list[_Branch] = []
    for call in calls:
        yield ev.ToolCalled(
            agent=plan.name, tool_call_id=call.id, name=call.name, arguments=call.arguments
        )
        replayed = await tape.replayed_outcome(plan.name, call)
        if replayed is not None:
            outcomes[call.id] = replayed
            # The sub-run's calls count as they did when it ran.
            budget.add_sub_run(
                state, model_calls=replayed.model_calls, tool_calls=replayed.tool_calls
            )
        if replayed is None or not how.quiet:
            delegate = plan.delegates[call.name]
            branches.append(_Branch(delegate, call, state, seams, how, replay=replayed is not None))
    try:
        for branch in branches:
            branch.start()
        for branch in branches:
            async for event in branch.events():
                yield event
            outcome = await branch.outcome()
            if not branch.replay:
                tape.record_outcome(plan.name, branch.call, outcome)
                outcomes[branch.call.id] = outcome
    finally:
        await _stop(branches)
    for call in calls:
        outcome = outcomes[call.id]
        for agent, used in outcome.usage.items():
            budget.add_usage(state, agent, used)
        yield call, outcome


def sub_session_id(state: RunState, delegate: AgentTool, call: ToolCall) -> str:
    """The session id of a delegation's sub-run: the peer form plus the tool call's id."""
    return f"{state.session_id}__swarm_{delegate.agent}_{state.handoff_count}_{call.id}"


class _Branch:
    """One delegation's sub-run as a task, its events queued for the delegating run."""

    def __init__(
        self,
        delegate: AgentTool,
        call: ToolCall,
        state: RunState,
        seams: RunSeams,
        how: Delegating,
        *,
        replay: bool,
    ) -> None:
        self.call = call
        self.replay = replay
        self._delegate = delegate
        self._agent = state.agent
        self._session = sub_session_id(state, delegate, call)
        self._context = dict(state.context)
        # A replayed sub-run's calls were counted from the journaled outcome already.
        self._spend = Spend() if replay else Spend(parent=state.budget.spend)
        self._seams = seams
        self._how = how
        # None ends the queue: the sub-run is over.
        self._queue: asyncio.Queue[ev.Event | None] | None = None if how.quiet else asyncio.Queue()
        self._task: asyncio.Task[ToolOutcome] | None = None

    def start(self) -> None:
        """Start the sub-run (concurrently with the other branches)."""
        self._task = asyncio.ensure_future(self._run())

    async def events(self) -> AsyncIterator[ev.SubRunEvent]:
        """The sub-run's events, wrapped, until it ends."""
        queue = self._queue
        if queue is None:
            return
        while (item := await queue.get()) is not None:
            yield ev.SubRunEvent(
                session_id=self._session,
                agent=self._agent,
                tool_call_id=self.call.id,
                tool_name=self.call.name,
                event=item,
            )

    async def outcome(self) -> ToolOutcome:
        """The call's outcome, once the sub-run has ended."""
        assert self._task is not None
        return await self._task

    async def stop(self) -> None:
        """Cancel the sub-run if it is still going (the delegating run stopped reading)."""
        task = self._task
        if task is None or task.done():
            return
        task.cancel()
        # The branch's own cancellation (or failure) is its end; the caller's still propagates.
        await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> ToolOutcome:
        try:
            return await self._outcome()
        finally:
            if self._queue is not None:
                self._queue.put_nowait(None)

    async def _outcome(self) -> ToolOutcome:
        delegate, call, seams = self._delegate, self.call, self._seams
        task = delegate.task(call.arguments)
        if task is None:
            message = f'Error: {delegate.name!r} needs arguments like {{"input": "the task"}}'
            error = ToolArgumentsError(message, tool_name=delegate.name)
            return ToolOutcome(content=message, is_error=True, error=error)
        if seams.delegate is None:
            message = f"Error: agent {delegate.agent!r} cannot be asked in this run"
            error_ = ToolExecutionError(message, tool_name=delegate.name)
            return ToolOutcome(content=message, is_error=True, error=error_)
        sub = SubRun(
            agent=delegate.agent,
            task=task,
            session_id=self._session,
            context=self._context,
            spend=self._spend,
            streaming=self._how.streaming,
            quiet=self._how.quiet,
            replay_only=self.replay,
        )
        try:
            result = await self._result(seams.delegate(sub))
        except (ReplayDivergenceError, JournalError) as exc:
            if not self.replay:
                return _failed(delegate, exc)
            # Only its events were asked for; the journaled outcome stands.
            log(
                "swarmkit.run",
                "sub_run_events_unavailable",
                session_id=self._session,
                error=repr(exc),
            )
            return ToolOutcome(content="", is_error=False)
        except Exception as exc:  # one failing branch must not lose the others' results
            return _failed(delegate, exc)
        if result is None:
            return ToolOutcome(content="", is_error=False)
        return _outcome_of(delegate, result, self._spend)

    async def _result(self, events: AsyncGenerator[ev.Event, None]) -> RunResult | None:
        result: RunResult | None = None
        async with aclosing(events):
            async for event in events:
                if isinstance(event, ev.RunFinished):
                    result = event.result
                if self._queue is not None:
                    self._queue.put_nowait(event)
        return result


async def _stop(branches: Sequence[_Branch]) -> None:
    for branch in branches:
        await branch.stop()


def _failed(delegate: AgentTool, exc: BaseException) -> ToolOutcome:
    failed = ToolExecutionError(
        f"Error: agent {delegate.agent!r} failed: {exc}", tool_name=delegate.name
    )
    failed.__cause__ = exc
    return ToolOutcome(content=str(failed), is_error=True, error=failed)


def _outcome_of(delegate: AgentTool, result: RunResult, spend: Spend) -> ToolOutcome:
    text = _error_text(delegate, result)
    if text is None:
        outcome = ToolOutcome(content=result.final_output or "", is_error=False)
    else:
        error = ToolExecutionError(text, tool_name=delegate.name)
        outcome = ToolOutcome(content=text, is_error=True, error=error)
    return replace(
        outcome,
        usage=dict(result.usage),
        model_calls=spend.model_calls,
        tool_calls=spend.tool_calls,
    )


def _error_text(delegate: AgentTool, result: RunResult) -> str | None:
    """What the delegating model is told when the sub-run failed or ran out of budget."""
    if result.stop_reason == "error":
        why = result.failure.message if result.failure else "unknown error"
        return f"Error: agent {delegate.agent!r} failed: {why}"
    if result.stop_reason in ("usage_limit", "timeout", "budget") and result.limit is not None:
        return f"Error: agent {delegate.agent!r} stopped: {result.limit.message}"
    return None
