"""The tool results and requests the loop writes for tool calls and handoff calls."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from swarmkit import events as ev
from swarmkit._run._state import Candidate
from swarmkit.bounds import load_json
from swarmkit.exceptions import HandoffPayloadError
from swarmkit.handoffs import HandoffRequest
from swarmkit.interrupts import Decision, Edit, PendingDecision, Reject, decision_audit
from swarmkit.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from swarmkit.models import ModelResponse, ToolSpec
from swarmkit.plan import AgentPlan
from swarmkit.tools import ToolOutcome


def attributed(message: AssistantMessage, agent: str) -> AssistantMessage:
    """The model's message marked with the agent that said it."""
    if message.agent == agent:
        return message
    return replace(message, agent=agent)  # keeps the provider's reasoning state


def unique_call_ids(response: ModelResponse) -> ModelResponse:
    """The model's answer with each tool call's id unique: a repeated id gets a suffix (``c1``,
    ``c1_2``), so each call's result answers that call and the model is never sent one result
    twice, whichever model answered."""
    calls = response.message.tool_calls
    if len(calls) < 2 or len({call.id for call in calls}) == len(calls):
        return response
    seen: set[str] = set()
    unique: list[ToolCall] = []
    for call in calls:
        call_id, number = call.id, 1
        while call_id in seen:
            number += 1
            call_id = f"{call.id}_{number}"
        seen.add(call_id)
        unique.append(call if call_id == call.id else replace(call, id=call_id))
    return replace(response, message=replace(response.message, tool_calls=tuple(unique)))


def tool_resulted(agent: str, message: ToolMessage) -> ev.ToolResulted:
    """The event for a tool result."""
    return ev.ToolResulted(
        agent=agent,
        tool_call_id=message.tool_call_id,
        name=message.name,
        content=message.content,
        is_error=message.is_error,
    )


def with_decision(
    event: ev.ToolResulted, call: ToolCall, arguments: str, decision: Decision
) -> ev.ToolResulted:
    """The result's event with what a person decided, and the arguments that ran if edited."""
    return replace(
        event,
        arguments=None if arguments == call.arguments else arguments,
        decision=decision_audit(decision, call.arguments, arguments),
    )


def unknown_tool(call: ToolCall, offered: tuple[ToolSpec, ...]) -> ToolMessage:
    """The error result for a tool the agent does not have, listing the ones it has."""
    names = ", ".join(spec.name for spec in offered) or "none"
    content = f"Error: there is no tool named {call.name!r}. Available tools: {names}."
    return ToolMessage(tool_call_id=call.id, name=call.name, content=content, is_error=True)


def not_offered(call: ToolCall) -> ToolMessage:
    """The error result for a tool the agent has, but was not offered on this turn."""
    content = (
        f"Error: tool {call.name!r} was not offered on this turn (its available_when "
        "condition is false); use one of the tools you were offered."
    )
    return ToolMessage(tool_call_id=call.id, name=call.name, content=content, is_error=True)


def payload_error(call: ToolCall, error: HandoffPayloadError) -> ToolMessage:
    """The error result for a handoff call whose arguments did not validate."""
    return ToolMessage(tool_call_id=call.id, name=call.name, content=str(error), is_error=True)


def with_note(message: ToolMessage, note: str) -> ToolMessage:
    """A tool result with an error note appended."""
    return ToolMessage(
        tool_call_id=message.tool_call_id,
        name=message.name,
        content=f"{message.content}\n{note}",
        is_error=True,
    )


def handoff_result(candidate: Candidate, detail: str, *, is_error: bool) -> ToolMessage:
    """The result of a handoff call: what happened, after a tool's own output if any."""
    call = candidate.call
    content = detail if candidate.tool_content is None else f"{candidate.tool_content}\n{detail}"
    return ToolMessage(tool_call_id=call.id, name=call.name, content=content, is_error=is_error)


def handoff_detail(request: HandoffRequest, refused: ev.HandoffRefused | None) -> str:
    """What a handoff call's result says: transferred, or refused and why."""
    if refused is not None:
        return f"Handoff refused: {refused.detail}."
    return f"Transferred to {request.target}."


def goto_request(
    plan: AgentPlan, call_id: str, goto: str, payload: Mapping[str, Any] | None
) -> HandoffRequest | HandoffPayloadError:
    """A tool's ``goto`` (or a human's edit), its payload validated like a transfer call's."""
    transfer = next((t for t in plan.transfers.values() if t.target == goto), None)
    if transfer is None or transfer.handoff.input_type is None:
        return HandoffRequest(target=goto, payload=None, message=None, tool_call_id=call_id)
    try:
        return transfer.parse(json.dumps(dict(payload or {}), default=str), tool_call_id=call_id)
    except HandoffPayloadError as exc:
        return exc


def edited(plan: AgentPlan, request: HandoffRequest, decision: Edit) -> HandoffRequest:
    """The handoff with a human's replacement payload; an invalid one is the human's error."""
    result = goto_request(plan, request.tool_call_id or "", request.target, decision.payload)
    if isinstance(result, HandoffPayloadError):
        raise result
    return result


def answer_of(decision: Decision) -> tuple[str, bool]:
    """A tool question's result (content, is_error) from a person's decision."""
    match decision:
        case Edit(payload=payload):
            answer = payload.get("answer")
            return (answer if isinstance(answer, str) else json.dumps(dict(payload))), False
        case Reject(reason=reason):
            return f"A person declined to answer: {reason}", True
        case _:
            return "approved", False


def candidate_target(plan: AgentPlan, candidate: Candidate) -> str:
    """The agent a handoff call names, read as well as its arguments allow."""
    if candidate.request is not None:
        return candidate.request.target
    transfer = plan.transfers.get(candidate.call.name)
    if transfer is not None:
        return transfer.target
    try:
        target = load_json(candidate.call.arguments).get("target")
    except (ValueError, AttributeError):
        target = None
    return target if isinstance(target, str) else candidate.call.name


def tool_pending(plan: AgentPlan, call: ToolCall) -> PendingDecision:
    """The pending decision for a tool that needs a human's approval."""
    try:
        arguments = load_json(call.arguments or "{}")
    except ValueError:
        arguments = {"raw": call.arguments}
    payload = arguments if isinstance(arguments, dict) else {"value": arguments}
    return PendingDecision(kind="tool", agent=plan.name, tool_name=call.name, payload=payload)


def rejected_outcome(decision: Reject) -> ToolOutcome:
    """What a tool call a human rejected returns to the model."""
    return ToolOutcome(
        content=f"Error: a human rejected this call: {decision.reason}", is_error=True
    )


def latest_user_message(history: tuple[Message, ...], prompt: str) -> Message:
    """The newest user message (what an agent sees when full history is not passed)."""
    for message in reversed(history):
        if isinstance(message, UserMessage):
            return message
    return UserMessage(content=prompt)
