"""People who take over: a queue of people as a handoff target, and the records of what
people do with a conversation parked there (claim, reply, escalate; hand back or close).

A ``PeopleQueue`` is a peer like any agent (in ``handoffs=[...]``, as a graph rule's
target) whose turn is a person's: handing off to it parks the conversation as a pause of
kind ``person``. The work on it (``swarmkit.queues``) adds notes to the session between
runs; handing it back resumes the run with a decision that carries the person's replies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from swarmkit.agent import Agent
from swarmkit.exceptions import ConfigurationError, PeopleQueueError
from swarmkit.interrupts import Decision, Edit, FieldProblem
from swarmkit.models import ModelRequest, ModelResponse

__all__ = ["PeopleQueue", "PersonReply", "TakeOver"]


class _NobodysModel:
    """The model slot of a queue of people: a person answers there, never a model."""

    provider = "person"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise PeopleQueueError(
            "a queue of people has no model: its turn is a person's (swarmkit queue reply)"
        )


_NOBODY = _NobodysModel()


@dataclass(frozen=True, kw_only=True, eq=False)
class PeopleQueue(Agent):
    """A queue of people that conversations are handed off to, usable wherever a peer agent
    is: in an agent's ``handoffs=[...]`` (its transfer tool is ``transfer_to_<name>``, typed
    with ``Handoff(queue, Payload)``), in ``Swarm(agents)``, and as a graph rule's target.

    Handing off to it parks the conversation, waiting for a person: ``swarmkit queue``
    lists it, a person claims it, replies, and hands it back to an agent or closes it.
    """

    priority: int = 0
    """How urgent its conversations are: higher ones are listed first."""
    deadline: timedelta | None = None
    """How long a parked conversation may wait unclaimed before it is escalated (a journaled
    record, shown in the list); None never escalates."""

    def __post_init__(self) -> None:
        if self.model is None:
            object.__setattr__(self, "model", _NOBODY)
        if not self.description:
            object.__setattr__(self, "description", f"A person from {self.name} takes over.")
        super().__post_init__()
        if isinstance(self.priority, bool) or not isinstance(self.priority, int):
            raise ConfigurationError(
                f"PeopleQueue {self.name!r}: priority must be an int, got {self.priority!r}"
            )
        _check_deadline(self.name, self.deadline)

    @property
    def deadline_seconds(self) -> float | None:
        """The deadline in seconds, as the journal keeps it."""
        return None if self.deadline is None else self.deadline.total_seconds()


def _check_deadline(name: str, deadline: object) -> None:
    if deadline is None:
        return
    if not isinstance(deadline, timedelta):
        raise ConfigurationError(
            f"PeopleQueue {name!r}: deadline must be a datetime.timedelta or None, "
            f"got {type(deadline).__name__}"
        )
    if deadline < timedelta(0):
        raise ConfigurationError(
            f"PeopleQueue {name!r}: deadline must be zero or more, got {deadline}; "
            "pass e.g. timedelta(minutes=30), or None for no deadline"
        )


def is_people_queue(agent: object) -> bool:
    """Whether a peer is a queue of people."""
    return isinstance(agent, PeopleQueue)


def parked_data(
    queue: PeopleQueue,
    *,
    source: str | None,
    payload: Mapping[str, Any] | None,
    payload_type: str | None,
    message: str | None,
) -> dict[str, Any]:
    """What a pause for a person holds: the queue, its priority and deadline, who handed the
    conversation over and the handoff's payload (typed, as JSON) or note."""
    return {
        "queue": queue.name,
        "priority": queue.priority,
        "deadline": queue.deadline_seconds,
        "source": source,
        "payload": None if payload is None else dict(payload),
        "payload_type": payload_type,
        "message": message,
    }


@dataclass(frozen=True, kw_only=True, slots=True)
class PersonReply:
    """One message a person wrote in a parked conversation."""

    by: str
    """Who wrote it."""
    text: str
    """What they wrote."""
    at: float | None = None
    """When (Unix seconds on the clock that recorded it)."""

    def to_data(self) -> dict[str, Any]:
        """As JSON-safe data."""
        return {"by": self.by, "text": self.text, "at": self.at}


@dataclass(frozen=True, kw_only=True, slots=True)
class TakeOver:
    """What a person's hand-back or close says: the replies, then the agent that goes on."""

    action: Literal["hand_back", "close"]
    """Hand the conversation back to ``agent``, or close it (the last reply is the answer)."""
    replies: tuple[PersonReply, ...] = ()
    """The person's replies, in order; the agents see them as assistant messages."""
    agent: str | None = None
    """The agent the run continues with, for ``hand_back``."""
    by: str | None = None
    """Who handed it back or closed it."""


def take_over_decision(take_over: TakeOver) -> Edit:
    """The decision that resumes a parked conversation (journaled as the run's ``resumed``)."""
    payload: dict[str, Any] = {
        "action": take_over.action,
        "replies": [reply.to_data() for reply in take_over.replies],
    }
    if take_over.agent is not None:
        payload["agent"] = take_over.agent
    return Edit(payload=payload, by=take_over.by, note=f"{take_over.action} by a person")


def take_over_of(decision: Decision) -> TakeOver:
    """The hand-back or close a decision on a parked conversation carries."""
    if not isinstance(decision, Edit):
        raise PeopleQueueError(
            "a conversation waiting for a person goes on only when a person hands it back "
            "or closes it (swarmkit.queues.hand_back / close)"
        )
    payload = decision.payload
    replies = tuple(
        PersonReply(by=str(r.get("by")), text=str(r.get("text")), at=r.get("at"))
        for r in payload.get("replies") or ()
        if isinstance(r, Mapping)
    )
    action: Literal["hand_back", "close"] = (
        "close" if payload.get("action") == "close" else "hand_back"
    )
    agent = payload.get("agent")
    return TakeOver(
        action=action,
        replies=replies,
        agent=agent if isinstance(agent, str) else None,
        by=decision.by,
    )


def take_over_problems(agents: Mapping[str, Agent], decision: Decision) -> tuple[FieldProblem, ...]:
    """What is wrong with a decision on a parked conversation; () when none."""
    if not isinstance(decision, Edit) or decision.payload.get("action") not in (
        "hand_back",
        "close",
    ):
        return (
            FieldProblem(
                field="action",
                message="hand the conversation back to an agent or close it "
                "(swarmkit.queues.hand_back / close)",
            ),
        )
    if decision.payload.get("action") == "close":
        return ()
    agent = decision.payload.get("agent")
    takers = agents_to_hand_back_to(agents)
    if agent not in takers:
        return (
            FieldProblem(
                field="agent",
                message=f"no agent named {agent!r} to hand back to; agents: {', '.join(takers)}",
            ),
        )
    return ()


def agents_to_hand_back_to(agents: Mapping[str, Agent]) -> tuple[str, ...]:
    """The swarm's agents a person may hand a conversation to (not its queues)."""
    return tuple(name for name, agent in agents.items() if not is_people_queue(agent))


def replies_of(notes: Sequence[Mapping[str, Any]]) -> tuple[PersonReply, ...]:
    """The replies among a parked conversation's notes' data, in order."""
    return tuple(
        PersonReply(by=str(n["by"]), text=str(n["text"]), at=n.get("at"))
        for n in notes
        if "text" in n
    )
