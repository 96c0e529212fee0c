"""A turn's tool calls: function tools in order, then delegations, then at most one handoff."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import assert_never

from swarmkit import events as ev
from swarmkit._run import _budget as budget
from swarmkit._run import _replies as replies
from swarmkit._run._delegate import Delegating, run_delegations
from swarmkit._run._effects import run_effect
from swarmkit._run._handoff import enter_view, is_handoff_call, take_one_handoff
from swarmkit._run._output import after_tool_calls
from swarmkit._run._parts import RunParts
from swarmkit._run._pauses import question_decision, tool_approval, tool_question
from swarmkit._run._request import offered_tools
from swarmkit._run._state import Candidate, run_context
from swarmkit._run._steps import GOES_ON, Continued, HandedOff, TurnOutcome
from swarmkit.context import Answer
from swarmkit.exceptions import HandoffPayloadError
from swarmkit.interrupts import Decision, Edit, Reject
from swarmkit.limits import LimitBreach
from swarmkit.messages import ToolCall, ToolMessage
from swarmkit.models import ModelResponse
from swarmkit.plan import AgentPlan
from swarmkit.tools import ToolOutcome


async def run_tool_calls(
    run: RunParts, plan: AgentPlan, response: ModelResponse
) -> AsyncIterator[ev.Event | TurnOutcome]:
    """Run the calls of one turn and add their results to the history in call order; the last
    item is what came of them (a handoff taken, or the same agent goes on)."""
    state = run.state
    calls = response.message.tool_calls
    results: dict[str, ToolMessage] = {}
    candidates: list[Candidate] = []
    delegations: list[ToolCall] = []
    for call in calls:
        if call.name in state.offer.withheld:
            results[call.id] = replies.not_offered(call)
            yield replies.tool_resulted(plan.name, results[call.id])
        elif call.name in plan.tools:
            if not run.quiet:
                yield ev.ToolCalled(
                    agent=plan.name, tool_call_id=call.id, name=call.name, arguments=call.arguments
                )
            resulted = await _run_function_tool(run, plan, call, results, candidates)
            if resulted is not None:
                yield resulted
        elif call.name in plan.delegates:
            delegations.append(call)
        elif is_handoff_call(plan, call):
            candidates.append(Candidate(call=call, decided_by="llm"))
        else:
            results[call.id] = replies.unknown_tool(call, offered_tools(run.swarm, state, plan))
            yield replies.tool_resulted(plan.name, results[call.id])
    if not (delegations or candidates):
        await _close_turn(run, plan, response, results, GOES_ON)
        yield GOES_ON
        return
    async for item in _finish_turn(
        run, plan, response, results, candidates, delegations=delegations
    ):
        yield item


async def tool_turn(
    run: RunParts, plan: AgentPlan, response: ModelResponse
) -> TurnOutcome | AsyncIterator[ev.Event | TurnOutcome]:
    """What the turn's calls came to, when a quiet run's calls are all offered function tools
    or handoffs (nothing in the turn is streamed): at once when none hands off (the common
    turn, with no generator in between), else what the handoff's ``_finish_turn`` yields;
    any other turn is what ``run_tool_calls`` yields, from where this left off."""
    calls = response.message.tool_calls
    withheld = run.state.offer.withheld
    if not run.quiet or any(
        c.name in withheld
        or (c.name not in plan.tools and (c.name in plan.delegates or not is_handoff_call(plan, c)))
        for c in calls
    ):
        return run_tool_calls(run, plan, response)
    results: dict[str, ToolMessage] = {}
    candidates: list[Candidate] = []
    for call in calls:
        if call.name in plan.tools:
            await _run_function_tool(run, plan, call, results, candidates)  # quiet: no event
        else:
            candidates.append(Candidate(call=call, decided_by="llm"))
    if candidates:
        return _finish_turn(run, plan, response, results, candidates, delegations=[])
    await _close_turn(run, plan, response, results, GOES_ON)
    return GOES_ON


async def _finish_turn(
    run: RunParts,
    plan: AgentPlan,
    response: ModelResponse,
    results: dict[str, ToolMessage],
    candidates: list[Candidate],
    *,
    delegations: list[ToolCall],
) -> AsyncIterator[ev.Event | TurnOutcome]:
    """After the function tools: the delegations, at most one handoff, the results."""
    if delegations:
        async for event in _run_delegations(run, plan, delegations, results):
            yield event
    outcome: TurnOutcome = GOES_ON
    if candidates:
        async for item in take_one_handoff(run, plan, candidates, results):
            if isinstance(item, HandedOff | Continued):
                outcome = item
            else:
                yield item
    await _close_turn(run, plan, response, results, outcome)
    yield outcome


async def _close_turn(
    run: RunParts,
    plan: AgentPlan,
    response: ModelResponse,
    results: dict[str, ToolMessage],
    outcome: TurnOutcome,
) -> None:
    """The results join the history in call order; after a handoff, the new agent's view."""
    for call in response.message.tool_calls:
        run.state.conversation.add(results[call.id])
    match outcome:
        case HandedOff():
            await enter_view(run, plan)
        case Continued():
            pass
        case _:
            assert_never(outcome)
    after_tool_calls(run.state, response)


async def _run_function_tool(
    run: RunParts,
    plan: AgentPlan,
    call: ToolCall,
    results: dict[str, ToolMessage],
    candidates: list[Candidate],
) -> ev.ToolResulted | None:
    """Run one function tool (its ToolCalled already yielded); the result's event. A tool that
    asks a person pauses the run; one that says ``goto`` becomes a handoff candidate."""
    outcome, arguments, decision = await _invoke(run, plan, call)
    if outcome.result is not None and outcome.result.again:  # (``again`` needs ``ask``)
        outcome = await _asked_again(run, plan, call, arguments, outcome)
    state = run.state
    state.last_tool.name, state.last_tool.ok = call.name, not outcome.is_error
    result = outcome.result
    if result is not None and result.update:
        state.context.update(result.update)
    content, is_error = outcome.content, outcome.is_error
    if result is not None and result.ask is not None:
        content, is_error = await tool_question(run, plan, call, result.ask)
    state.last_tool.output = content
    results[call.id] = ToolMessage(
        tool_call_id=call.id, name=call.name, content=content, is_error=is_error
    )
    if outcome.is_error:
        run.log("tool_failed", tool=call.name)
    resulted = None
    if not run.quiet:
        resulted = replies.tool_resulted(plan.name, results[call.id])
        if decision is not None:
            resulted = replies.with_decision(resulted, call, arguments, decision)
    if result is None or result.goto is None:
        return resulted
    request = replies.goto_request(plan, call.id, result.goto, result.payload)
    if isinstance(request, HandoffPayloadError):
        results[call.id] = replies.with_note(results[call.id], str(request))
        return resulted
    candidates.append(
        Candidate(call=call, decided_by="tool", request=request, tool_content=outcome.content)
    )
    return resulted


async def _run_delegations(
    run: RunParts, plan: AgentPlan, calls: list[ToolCall], results: dict[str, ToolMessage]
) -> AsyncIterator[ev.Event]:
    state = run.state
    how = Delegating(quiet=run.quiet, streaming=run.streaming)
    async for item in run_delegations(plan, calls, state, run.tape, run.seams, how=how):
        if not isinstance(item, tuple):
            yield item
            continue
        call, outcome = item
        state.last_tool.name, state.last_tool.ok = call.name, not outcome.is_error
        results[call.id] = ToolMessage(
            tool_call_id=call.id,
            name=call.name,
            content=outcome.content,
            is_error=outcome.is_error,
        )
        yield replies.tool_resulted(plan.name, results[call.id])


async def _invoke(
    run: RunParts, plan: AgentPlan, call: ToolCall
) -> tuple[ToolOutcome, str, Decision | None]:
    """Run a function tool (after a person's approval when it needs one): its outcome, the
    arguments it ran with, and the person's decision."""
    arguments = call.arguments
    decision = (
        await tool_approval(run, plan, call) if plan.tools[call.name].needs_approval else None
    )
    if isinstance(decision, Reject):
        return replies.rejected_outcome(decision), arguments, decision
    if isinstance(decision, Edit):
        arguments = json.dumps(dict(decision.payload))
    return await _outcome(run, plan, call, arguments, decision=decision), arguments, decision


async def _outcome(
    run: RunParts,
    plan: AgentPlan,
    call: ToolCall,
    arguments: str,
    *,
    decision: Decision | None = None,
    answer: Answer | None = None,
) -> ToolOutcome:
    """The call's outcome: counted, then the journal's, or the tool's own (journaled)."""
    hit = run.limit_hit(_counted(run))
    if hit is not None:
        await run.stop(hit)
    if plan.tools[call.name].effect:
        return await run_effect(
            run, plan, call, arguments=arguments, decision=decision, live=_effect_live
        )
    outcome = await run.tape.replayed_outcome(plan.name, call, arguments)
    if outcome is None:
        outcome = await _run_live(run, plan, call, arguments, answer)
        run.tape.record_outcome(plan.name, call, outcome, decision, arguments)
    return outcome


MAX_QUESTION_ROUNDS = 10
"""How often one tool call may ask a person again before its question is taken as an error."""


async def _asked_again(
    run: RunParts, plan: AgentPlan, call: ToolCall, arguments: str, outcome: ToolOutcome
) -> ToolOutcome:
    """A tool that asks to be called again with the answer: pause for it, call again, and so
    on while it asks; the last outcome is the call's."""
    for _ in range(MAX_QUESTION_ROUNDS):
        result = outcome.result
        if result is None or result.ask is None or not result.again:
            return outcome
        decision = await question_decision(run, plan, call, result.ask, result.ask_schema)
        answer = Answer(decision=decision, asked=outcome.content)
        outcome = await _outcome(run, plan, call, arguments, answer=answer)
    content = f"Error: the tool asked more than {MAX_QUESTION_ROUNDS} questions in one call."
    return ToolOutcome(content=content, is_error=True)


def _counted(run: RunParts) -> LimitBreach | None:
    """Count the call; with usage limits, the breach it would make instead."""
    if run.limited:
        return budget.before_tool_call(run.swarm, run.state)
    budget.count_tool_call(run.state)
    return None


async def _effect_live(
    run: RunParts, plan: AgentPlan, call: ToolCall, arguments: str, key: str
) -> ToolOutcome:
    """An effect's live call, under the key its intent journaled."""
    return await _run_live(run, plan, call, arguments, key=key)


async def _run_live(
    run: RunParts,
    plan: AgentPlan,
    call: ToolCall,
    arguments: str,
    answer: Answer | None = None,
    *,
    key: str | None = None,
) -> ToolOutcome:
    state = run.state
    key = key or f"{state.session_id}:{state.budget.turns}:{call.id}"
    context = run_context(state, idempotency_key=key, answer=answer)
    invoked = run.seams.tool_runner.invoke(plan.tools[call.name], arguments, context)
    try:
        return await budget.within(run.time_left(), invoked, run.seams.runtime)
    except budget.Expired:
        hit = run.limit_hit(run.expired())
        if hit is not None:
            await run.stop(hit)
        raise
