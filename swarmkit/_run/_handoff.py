"""Handoffs: one taken per turn, checked against the limits and a person, then performed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

from swarmkit import events as ev
from swarmkit._run import _budget as budget
from swarmkit._run import _replies as replies
from swarmkit._run._callbacks import handoff_callback
from swarmkit._run._conversation import this_turn_only, with_own_memory
from swarmkit._run._limits import apply_refusal_policy, refusal
from swarmkit._run._offers import not_offered
from swarmkit._run._parts import RunParts
from swarmkit._run._pauses import entry_approved, handoff_decision
from swarmkit._run._state import Candidate, record_data
from swarmkit._run._steps import Continued, HandedOff, HandoffOutcome, Refused, TurnOutcome
from swarmkit.events import RefusalReason
from swarmkit.exceptions import HandoffPayloadError
from swarmkit.filters import HandoffInput, apply_filter
from swarmkit.handoffs import HandoffRequest
from swarmkit.interrupts import Edit, Reject
from swarmkit.messages import Message, ToolCall, ToolMessage
from swarmkit.models import provider_of
from swarmkit.plan import AgentPlan
from swarmkit.result import DecidedBy, HandoffRecord


def is_handoff_call(plan: AgentPlan, call: ToolCall) -> bool:
    """Whether the call is one of the agent's transfer tools (or its legacy handoff tool)."""
    legacy = plan.legacy
    return call.name in plan.transfers or (legacy is not None and call.name == legacy.name)


async def take_one_handoff(
    run: RunParts, plan: AgentPlan, candidates: list[Candidate], results: dict[str, ToolMessage]
) -> AsyncIterator[ev.Event | TurnOutcome]:
    """The first valid handoff call is the turn's; every later one is told it was not. The last
    item is what came of it: the handoff performed, or none (it was refused)."""
    taken: str | None = None
    outcome: HandoffOutcome | None = None
    for candidate in candidates:
        call = candidate.call
        if taken is not None:
            detail = f"not taken: only one handoff per turn, and {taken!r} was taken first"
            results[call.id] = replies.handoff_result(candidate, detail, is_error=True)
            target = replies.candidate_target(plan, candidate)
            yield await refuse(
                run, plan, target, candidate.decided_by, reason="not_taken", detail=detail
            )
            continue
        request = _parse(plan, candidate)
        if isinstance(request, HandoffPayloadError):
            results[call.id] = await _refuse_invalid(run, plan, candidate, request)
            yield replies.tool_resulted(plan.name, results[call.id])
            continue
        taken = request.target
        outcome = await try_handoff(run, plan, request, candidate.decided_by)
        refused = outcome.event if isinstance(outcome, Refused) else None
        detail = replies.handoff_detail(request, refused)
        results[call.id] = replies.handoff_result(candidate, detail, is_error=bool(refused))
        for event in outcome.events if isinstance(outcome, HandedOff) else (outcome.event,):
            if isinstance(event, ev.HandoffPerformed) and candidate.decided_by == "llm":
                yield replace(event, tool_name=call.name, tool_call_id=call.id)
            else:
                yield event
    yield HandedOff(outcome.record) if isinstance(outcome, HandedOff) else Continued()


async def try_handoff(
    run: RunParts,
    plan: AgentPlan,
    request: HandoffRequest,
    decided_by: DecidedBy,
    *,
    condition: str | None = None,
) -> HandoffOutcome:
    """Perform a handoff, or refuse it (a limit, a person, or its ``on_handoff`` said no)."""
    state = run.state
    budget_spent = decided_by == "budget"
    refused = refusal(run.swarm, state, plan, request.target, continuation=budget_spent)
    refused = refused or not_offered(state, request.target, decided_by)
    if refused is None:
        decision = await handoff_decision(run, plan, request, decided_by)
        if isinstance(decision, Reject):
            refused = "rejected", f"a human rejected the handoff: {decision.reason}"
        elif isinstance(decision, Edit):
            request = replies.edited(plan, request, decision)
    if refused is None:
        refused = await handoff_callback(run.tape, state, plan, request)
    if refused is not None:
        reason, detail = refused
        return Refused(
            await refuse(run, plan, request.target, decided_by, reason=reason, detail=detail)
        )
    return await _perform(run, plan, request, decided_by, condition)


async def hand_over_from_person(run: RunParts, plan: AgentPlan, agent: str) -> HandedOff:
    """A person hands a conversation back from a queue: no limit or cycle rule refuses it."""
    request = HandoffRequest(target=agent, payload=None, message=None)
    return await _perform(run, plan, request, "person", None)


async def refuse(
    run: RunParts,
    plan: AgentPlan,
    target: str,
    decided_by: DecidedBy,
    *,
    reason: RefusalReason,
    detail: str,
) -> ev.HandoffRefused:
    """Journal a refused handoff, then apply the swarm's policy for it (which may end the run)."""
    state = run.state
    state.trail.refuse(detail)
    await run.tape.note(
        "handoff_refused",
        {
            "source": plan.name,
            "target": target,
            "decided_by": decided_by,
            "reason": reason,
            "detail": detail,
        },
    )
    run.log("handoff_refused", source=plan.name, target=target, reason=reason)
    apply_refusal_policy(run.swarm, state, reason, target)
    return ev.HandoffRefused(
        source=plan.name, target=target, decided_by=decided_by, reason=reason, detail=detail
    )


async def _refuse_invalid(
    run: RunParts, plan: AgentPlan, candidate: Candidate, error: HandoffPayloadError
) -> ToolMessage:
    """A transfer call whose payload did not validate: journaled, so a timeline shows it; the
    model is told what to fix (and may call again)."""
    call = candidate.call
    await run.tape.note(
        "handoff_invalid",
        {
            "source": plan.name,
            "target": error.target or None,
            "decided_by": candidate.decided_by,
            "tool_name": call.name,
            "tool_call_id": call.id,
            "arguments": call.arguments,
            "problem": str(error),
        },
    )
    run.log("handoff_invalid", source=plan.name, target=error.target, tool_name=call.name)
    return replies.payload_error(call, error)


async def _perform(
    run: RunParts,
    plan: AgentPlan,
    request: HandoffRequest,
    decided_by: DecidedBy,
    condition: str | None,
) -> HandedOff:
    state = run.state
    payload = request.payload.model_dump(mode="json") if request.payload else None
    record = HandoffRecord(
        source=plan.name,
        target=request.target,
        decided_by=decided_by,
        turn=state.budget.turns,
        number=state.handoff_count + 1,
        payload=payload,
        payload_type=type(request.payload).__name__ if request.payload else None,
        message=request.message,
        condition=condition,
    )
    await run.tape.note("handoff", record_data(record))
    state.trail.hand_off(record, request.payload)
    state.agent = request.target
    run.log("handoff_performed", source=plan.name, target=request.target, decided_by=decided_by)
    performed = ev.HandoffPerformed(
        source=plan.name,
        target=request.target,
        decided_by=decided_by,
        payload=payload,
        payload_type=record.payload_type,
        message=request.message,
        condition=condition,
        number=record.number,
    )
    return HandedOff(record, (performed, await enter(run, request.target)))


async def enter(run: RunParts, agent: str) -> ev.AgentStarted:
    """An agent becomes active (the first one after a person's go-ahead, when asked for)."""
    state = run.state
    if not state.trail.agents:
        await entry_approved(run, agent)
    state.trail.enter(agent)
    budget.agent_started(state, run.seams.runtime.clock())
    plan = run.swarm.plans[agent]
    model_name = getattr(plan.model, "name", None)
    started = ev.AgentStarted(
        agent=agent,
        sub_session_id=f"{state.session_id}__swarm_{agent}_{state.handoff_count}",
        handoff_count=state.handoff_count,
        provider=provider_of(plan.model),
        description=plan.agent.description or None,
        model=model_name if isinstance(model_name, str) else None,
    )
    await run.tape.note(
        "agent_started",
        {
            "agent": agent,
            "handoff_count": started.handoff_count,
            "sub_session_id": started.sub_session_id,
        },
    )
    return started


async def enter_view(run: RunParts, source: AgentPlan) -> None:
    """Compute what the new active agent sees, through its input filter and its memory."""
    state, swarm = run.state, run.swarm
    conversation, target = state.conversation, state.agent
    config = source.handoff_configs.get(target) or swarm.peer_handoffs.get(target)
    history = tuple(conversation.transcript)
    view: tuple[Message, ...]
    if config is not None and config.input_filter is not None:
        data = HandoffInput(
            history=history,
            new_items=tuple(conversation.own_items),
            payload=state.trail.payload,
            message=state.trail.handoff_message,
            source=source.name,
            target=target,
        )
        view = await apply_filter(config.input_filter, data)
    elif swarm.pass_full_history:
        view = history
    else:
        view = (replies.latest_user_message(history, state.prompt),)
    memory = swarm.plans[target].agent.memory
    if memory == "own":
        view = with_own_memory(history, target, view)
    elif memory == "none" and state.start is not None:
        view = this_turn_only(view, state.start)
    conversation.hand_over(view)


def _parse(plan: AgentPlan, candidate: Candidate) -> HandoffRequest | HandoffPayloadError:
    if candidate.request is not None:
        return candidate.request
    call = candidate.call
    try:
        if call.name in plan.transfers:
            return plan.transfers[call.name].parse(call.arguments, tool_call_id=call.id)
        assert plan.legacy is not None
        return plan.legacy.parse(call.arguments, tool_call_id=call.id)
    except HandoffPayloadError as exc:
        return exc
