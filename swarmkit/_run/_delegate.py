"""Delegation calls of one turn: journaled or replayed in call order, run live concurrently."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from swarmkit import events as ev
from swarmkit._run._state import RunState
from swarmkit.delegation import AgentTool
from swarmkit.exceptions import ToolArgumentsError, ToolExecutionError
from swarmkit.journal._tape import StepWriter
from swarmkit.messages import ToolCall
from swarmkit.models import Usage
from swarmkit.plan import AgentPlan
from swarmkit.spec import RunSeams
from swarmkit.tools import ToolOutcome


async def run_delegations(
    plan: AgentPlan,
    calls: Sequence[ToolCall],
    state: RunState,
    tape: StepWriter,
    seams: RunSeams,
) -> AsyncIterator[ev.Event | tuple[ToolCall, ToolOutcome]]:
    """Yield each call's ToolCalled event, then (call, outcome) pairs in call order.

    Outcomes come from the journal while it lasts; the live ones run as concurrent sub-runs,
    so a failing branch costs only its own result.
    """
    outcomes: dict[str, ToolOutcome] = {}
    live: list[ToolCall] = []
    for call in calls:
        yield ev.ToolCalled(
            agent=plan.name, tool_call_id=call.id, name=call.name, arguments=call.arguments
        )
        replayed = await tape.replayed_outcome(plan.name, call)
        if replayed is None:
            live.append(call)
        else:
            outcomes[call.id] = replayed
    branches = [_delegate(plan.delegates[call.name], call, state, seams) for call in live]
    for call, outcome in zip(live, await asyncio.gather(*branches), strict=True):
        tape.record_outcome(plan.name, call, outcome)
        outcomes[call.id] = outcome
    for call in calls:
        outcome = outcomes[call.id]
        for agent, used in outcome.usage.items():
            state.usage[agent] = state.usage.get(agent, Usage()) + used
        yield call, outcome


def sub_session_id(state: RunState, delegate: AgentTool, call: ToolCall) -> str:
    """The session id of a delegation's sub-run: the peer form plus the tool call's id."""
    return f"{state.session_id}__swarm_{delegate.agent}_{state.handoff_count}_{call.id}"


async def _delegate(
    delegate: AgentTool, call: ToolCall, state: RunState, seams: RunSeams
) -> ToolOutcome:
    task = delegate.task(call.arguments)
    if task is None:
        message = f'Error: {delegate.name!r} needs arguments like {{"input": "the task"}}'
        error = ToolArgumentsError(message, tool_name=delegate.name)
        return ToolOutcome(content=message, is_error=True, error=error)
    if seams.delegate is None:
        message = f"Error: agent {delegate.agent!r} cannot be asked in this run"
        error_ = ToolExecutionError(message, tool_name=delegate.name)
        return ToolOutcome(content=message, is_error=True, error=error_)
    session = sub_session_id(state, delegate, call)
    try:
        result = await seams.delegate(delegate.agent, task, session, dict(state.context))
    except Exception as exc:  # one failing branch must not lose the others' results
        failed = ToolExecutionError(
            f"Error: agent {delegate.agent!r} failed: {exc}", tool_name=delegate.name
        )
        failed.__cause__ = exc
        return ToolOutcome(content=str(failed), is_error=True, error=failed)
    usage = dict(result.usage)
    if result.stop_reason == "error":
        why = result.failure.message if result.failure else "unknown error"
        text = f"Error: agent {delegate.agent!r} failed: {why}"
        failure = ToolExecutionError(text, tool_name=delegate.name)
        return ToolOutcome(content=text, is_error=True, error=failure, usage=usage)
    return ToolOutcome(content=result.final_output or "", is_error=False, usage=usage)
