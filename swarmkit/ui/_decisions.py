"""Decisions from the page: approve, reject with a reason, or edit a paused session's payload."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from swarmkit.interrupts import Decision, approve, edit, reject
from swarmkit.journal import Journal
from swarmkit.swarm import Swarm


class DecisionRefused(Exception):
    """The decision cannot be taken; the session keeps waiting. Carries what the page shows."""

    def __init__(self, message: str, *, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []
        """Validation errors of an edited payload, one per field."""


def decision_from(body: Mapping[str, Any], pending: Mapping[str, Any], swarm: Swarm) -> Decision:
    """The decision a request body asks for; an edited payload is validated first."""
    action = body.get("action")
    if action == "approve":
        return approve()
    if action == "reject":
        reason = str(body.get("reason") or "").strip()
        return reject(reason) if reason else reject()
    if action == "edit":
        payload = body.get("payload")
        if not isinstance(payload, dict):
            raise DecisionRefused("the edited payload must be a JSON object")
        _validate(payload, pending, swarm)
        return edit(payload=payload)
    raise DecisionRefused(f"action must be approve, reject or edit, got {action!r}")


async def decide(
    swarm: Swarm, journal: Journal, session_id: str, decision: Decision
) -> dict[str, Any]:
    """Resume the paused session with ``decision``; how the run ended then."""
    result = await swarm.resume(session_id, journal, decision=decision)
    return {
        "stop_reason": result.stop_reason,
        "final_agent": result.final_agent,
        "trail": list(result.trail),
        "final_output": result.final_output,
    }


def _validate(payload: dict[str, Any], pending: Mapping[str, Any], swarm: Swarm) -> None:
    problems = swarm.check_decision(pending, edit(payload=payload))
    if problems:
        raise DecisionRefused(
            "the edited payload does not validate",
            errors=[{"field": p.field, "message": p.message} for p in problems],
        )
