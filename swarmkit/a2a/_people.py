"""A caller who may decide acts as the person in a conversation parked for a queue of people:
its text is the person's reply, a data part ``{"hand_back": "<agent>"}`` hands the
conversation back and ``{"close": true}`` closes it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from a2a.helpers import get_data_parts, get_text_parts
from a2a.types.a2a_pb2 import Message

from swarmkit import queues
from swarmkit.exceptions import InteropRequestError, PeopleQueueError
from swarmkit.journal import Journal
from swarmkit.lowlevel import check_in_process
from swarmkit.people import TakeOver, take_over_decision
from swarmkit.result import RunResult
from swarmkit.swarm import Swarm

HAND_BACK_KEY = "hand_back"
"""The data part's key naming the agent a person hands the conversation back to."""

CLOSE_KEY = "close"
"""The data part's key (``true``) with which a person closes the conversation."""

PERSON_SHAPES = (
    f'the reply as text, and a data part {{"{HAND_BACK_KEY}": "<agent>"}} to hand the '
    f'conversation back, or {{"{CLOSE_KEY}": true}} to close it'
)
"""How a message acts as the person, as a refusal explains it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PersonMessage:
    """What a message on a conversation parked for a person says."""

    text: str
    """The person's reply ("" for none)."""
    action: str | None
    """``hand_back``, ``close``, or None to reply only."""
    agent: str | None
    """The agent to hand back to."""


def waits_for_person(waiting: Mapping[str, Any]) -> bool:
    """Whether a waiting task's data says it waits for a person of a queue."""
    pending = waiting.get("pending")
    return isinstance(pending, Mapping) and pending.get("kind") == "person"


async def act_as_person(
    swarm: Swarm,
    journal: Journal,
    waiting: Mapping[str, Any],
    message: Message | None,
    *,
    by: str,
) -> RunResult | None:
    """Journal the message's reply as ``by``'s (claiming the conversation for them when nobody
    has), then hand it back or close it; None when it only replied and still waits. Nothing is
    written when the message asks for something that cannot be done."""
    said = person_message(message)
    session_id = str(waiting.get("session_id") or "")
    if said.action == HAND_BACK_KEY:
        _check_agent(swarm, waiting, said.agent)
    if said.action is not None:  # an engine's session goes back through its decide
        await check_in_process(journal, session_id, to=said.agent, by=by)
    await _claimed(journal, session_id, by)
    if said.text:
        await queues.reply(journal, session_id, by=by, text=said.text)
    if said.action == HAND_BACK_KEY:
        assert said.agent is not None
        return await queues.hand_back(swarm, session_id, to=said.agent, by=by, journal=journal)
    if said.action == CLOSE_KEY:
        return await queues.close(swarm, session_id, by=by, journal=journal)
    return None


def person_message(message: Message | None) -> PersonMessage:
    """The reply and the action a message carries; an InteropRequestError when it carries
    neither, or a decision meant for another kind of pause."""
    parts = list(message.parts) if message is not None else []
    text = " ".join(get_text_parts(parts)).strip()
    action: str | None = None
    agent: str | None = None
    for data in get_data_parts(parts):
        if not isinstance(data, dict):
            continue
        if "decision" in data:
            raise InteropRequestError(
                f"the conversation waits for a person, not a decision: send {PERSON_SHAPES}"
            )
        if HAND_BACK_KEY in data:
            action, agent = HAND_BACK_KEY, _agent_name(data[HAND_BACK_KEY])
        elif data.get(CLOSE_KEY) is True:
            action = CLOSE_KEY
    if action is None and not text:
        raise InteropRequestError(f"nothing to do: send {PERSON_SHAPES}")
    return PersonMessage(text=text, action=action, agent=agent)


def _agent_name(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InteropRequestError(f'"{HAND_BACK_KEY}" names an agent, got {value!r}')
    return value


def _check_agent(swarm: Swarm, waiting: Mapping[str, Any], agent: str | None) -> None:
    """Refuse a hand-back to an agent the swarm does not have, before the reply is written."""
    pending = waiting.get("pending")
    take_over = TakeOver(action="hand_back", agent=agent)
    problems = swarm.check_decision(dict(pending or {}), take_over_decision(take_over))
    if problems:
        raise PeopleQueueError(
            "; ".join(p.message for p in problems), session_id=str(waiting.get("session_id"))
        )


async def _claimed(journal: Journal, session_id: str, by: str) -> None:
    """Claim the conversation for ``by`` unless they hold it already."""
    try:
        await queues.claim(journal, session_id, by=by)
    except PeopleQueueError as refused:
        if refused.claimed_by != by:
            raise
