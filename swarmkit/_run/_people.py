"""A queue of people's turn: the conversation parks for a person, whose replies join it when
they hand it back to an agent (or close it)."""

from __future__ import annotations

from swarmkit._run._handoff import enter_view, hand_over_from_person
from swarmkit._run._parts import RunParts
from swarmkit._run._pauses import pause_point
from swarmkit._run._steps import Answered, HandedOff
from swarmkit.interrupts import PendingDecision
from swarmkit.messages import AssistantMessage
from swarmkit.people import PeopleQueue, parked_data, take_over_of
from swarmkit.plan import AgentPlan


async def take_over(run: RunParts, plan: AgentPlan) -> HandedOff | Answered:
    """Park for a person (the run pauses); once one hands back or closes, their replies join
    the conversation as assistant messages named for them, and the named agent goes on."""
    state = run.state
    queue = plan.agent
    assert isinstance(queue, PeopleQueue)
    trail = state.trail
    handed = trail.handoffs[-1] if trail.handoffs else None
    data = parked_data(
        queue,
        source=trail.previous_agent,
        payload=handed.payload if handed is not None else None,
        payload_type=handed.payload_type if handed is not None else None,
        message=trail.handoff_message,
    )
    pending = PendingDecision(kind="person", agent=plan.name, target=plan.name, payload=data)
    decided = take_over_of(await pause_point(run, pending))
    for reply in decided.replies:
        state.conversation.add(AssistantMessage(content=reply.text, agent=reply.by))
        state.conversation.say(reply.text)
    if decided.action == "close" or decided.agent is None:
        return Answered()
    handed_off = await hand_over_from_person(run, plan, decided.agent)
    await enter_view(run, plan)
    return handed_off
