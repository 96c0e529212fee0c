"""The viewer's queue of people: the conversations waiting for a person, and a person's claim,
reply, hand-back or close sent from the page (behind the token and ``--allow-decisions``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from swarmkit import queues
from swarmkit.journal import Journal
from swarmkit.swarm import Swarm

ACTIONS = ("claim", "reply", "hand-back", "close")
"""What a person may do from the queue page."""


async def waiting_list(journal: Journal) -> list[dict[str, Any]]:
    """The conversations waiting for a person, highest priority and oldest first (overdue
    ones escalated on the way, on the viewer's clock)."""
    return [c.to_data() for c in await queues.waiting(journal)]


async def act(
    swarm: Swarm | None, journal: Journal, session_id: str, action: str, body: Mapping[str, Any]
) -> dict[str, Any]:
    """Do ``action`` for the person the body names; ``PeopleQueueError`` when refused."""
    by = str(body.get("by") or "")
    if action == "claim":
        return (await queues.claim(journal, session_id, by=by)).to_data()
    if action == "reply":
        text = str(body.get("text") or "")
        return (await queues.reply(journal, session_id, by=by, text=text)).to_data()
    assert swarm is not None
    to = body.get("to") if action == "hand-back" else None
    if action == "hand-back" and not isinstance(to, str):
        to = ""
    if to is None:
        result = await queues.close(swarm, session_id, by=by, journal=journal)
    else:
        result = await queues.hand_back(swarm, session_id, to=to, by=by, journal=journal)
    return {
        "stop_reason": result.stop_reason,
        "final_agent": result.final_agent,
        "trail": list(result.trail),
        "final_output": result.final_output,
    }
