"""Pause points: where a person approves, edits or rejects, and where the run waits for one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from swarmkit._run import _replies as replies
from swarmkit._run._parts import RunParts
from swarmkit._run._state import Interrupted
from swarmkit.handoffs import HandoffRequest
from swarmkit.interrupts import Decision, Edit, PendingDecision, Reject
from swarmkit.messages import ToolCall, UserMessage
from swarmkit.plan import AgentPlan
from swarmkit.result import DecidedBy


async def pause_point(run: RunParts, pending: PendingDecision) -> Decision:
    """The decision for a pause point (the journal's, resume's or the decision source's), or
    pause the run when nobody has decided yet."""
    decision = await run.tape.interrupt(asdict(pending))
    if decision is None:
        decision = await run.seams.decisions.decide(pending)
        if decision is None:
            raise Interrupted(pending)
        run.tape.record_decision(decision)
    return decision


async def entry_approved(run: RunParts, agent: str) -> None:
    """Before the run's first agent starts: a person's go-ahead when it is interrupted before."""
    if agent in run.swarm.interrupt_before:
        await pause_point(run, PendingDecision(kind="agent", agent=agent, target=agent))


async def answer_stands(run: RunParts, plan: AgentPlan) -> bool:
    """With ``interrupt_after``, a person approves, edits or rejects the agent's answer."""
    if plan.name not in run.swarm.interrupt_after:
        return True
    state = run.state
    pending = PendingDecision(
        kind="answer", agent=plan.name, payload={"output": state.conversation.last_text or ""}
    )
    decision = await pause_point(run, pending)
    if isinstance(decision, Reject):
        state.conversation.add(UserMessage(content=decision.reason))  # the agent answers again
        return False
    if isinstance(decision, Edit):
        state.conversation.say(str(decision.payload.get("output", state.conversation.last_text)))
    return True


async def tool_question(
    run: RunParts, plan: AgentPlan, call: ToolCall, question: str
) -> tuple[str, bool]:
    """A tool's question for a person: the run pauses, and the answer is the result."""
    return replies.answer_of(await question_decision(run, plan, call, question))


async def question_decision(
    run: RunParts,
    plan: AgentPlan,
    call: ToolCall,
    question: str,
    schema: Mapping[str, Any] | None = None,
) -> Decision:
    """A person's decision on a tool's question (the answer's ``schema`` shown when given)."""
    payload: dict[str, Any] = {"question": question}
    if schema is not None:
        payload["schema"] = dict(schema)
    pending = PendingDecision(
        kind="question", agent=plan.name, tool_name=call.name, payload=payload
    )
    return await pause_point(run, pending)


async def tool_approval(run: RunParts, plan: AgentPlan, call: ToolCall) -> Decision:
    """A person's decision on a tool call that needs approval."""
    return await pause_point(run, replies.tool_pending(plan, call))


async def handoff_decision(
    run: RunParts, plan: AgentPlan, request: HandoffRequest, decided_by: DecidedBy
) -> Decision | None:
    """A person's decision on a handoff the swarm interrupts on (None when it does not)."""
    swarm = run.swarm
    asked = swarm.interrupt_on_handoff or plan.name in swarm.interrupt_after
    if not (asked or request.target in swarm.interrupt_before):
        return None
    pending = PendingDecision(
        kind="handoff",
        agent=plan.name,
        target=request.target,
        payload=request.payload.model_dump(mode="json") if request.payload else None,
        decided_by=decided_by,
    )
    return await pause_point(run, pending)
