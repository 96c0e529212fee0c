"""Interrupts for a human: what a paused run is waiting for, and the decisions that resume it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingDecision:
    """What a paused run is about to do, waiting for a human to approve, reject or edit it."""

    kind: Literal["agent", "handoff", "tool", "answer", "question"]
    """Entering an agent (``interrupt_before``), a handoff, a tool that needs approval, an
    agent's answer (``interrupt_after``), or a tool's question for a person."""
    agent: str
    """The active agent when the run paused."""
    target: str | None = None
    """The agent about to be entered (for ``agent`` and ``handoff``)."""
    tool_name: str | None = None
    """The tool about to run (for ``tool``)."""
    payload: Mapping[str, Any] | None = None
    """The handoff payload or the tool's arguments, as JSON-safe data; for ``answer``
    (``interrupt_after``) ``{"output": text}``; for ``question`` (a tool's ``ToolResult(ask=)``)
    ``{"question": text}``."""
    decided_by: str | None = None
    """For a handoff: rule, llm or tool."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FieldProblem:
    """Why a person's decision cannot be taken: one field of an edited payload, or all of it."""

    field: str
    """The dotted path of the field in the edited payload; ``""`` for the payload as a whole."""
    message: str
    """What is wrong with it, and what to send instead."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Approve:
    """Go ahead as planned."""

    kind: Literal["approve"] = "approve"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Reject:
    """Do not do it; the agent is told why and carries on."""

    reason: str = "rejected by a human"
    """Why, as the agent will read it."""
    kind: Literal["reject"] = "reject"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Edit:
    """Go ahead with a changed payload (a handoff's) or changed arguments (a tool's)."""

    payload: Mapping[str, Any] = field(default_factory=dict)
    """The replacement payload or arguments, validated like the original."""
    kind: Literal["edit"] = "edit"
    """Discriminator."""


Decision = Approve | Reject | Edit
"""A human's answer to a pending decision."""


def approve() -> Approve:
    """Approve the pending decision."""
    return Approve()


def reject(reason: str = "rejected by a human") -> Reject:
    """Reject the pending decision, telling the agent ``reason``."""
    return Reject(reason=reason)


def edit(*, payload: Mapping[str, Any]) -> Edit:
    """Approve with a replacement payload (handoff) or arguments (tool)."""
    return Edit(payload=dict(payload))


def decision_to_data(decision: Decision) -> dict[str, Any]:
    """The decision as JSON-safe data, for the journal."""
    match decision:
        case Approve():
            return {"kind": "approve"}
        case Reject(reason=reason):
            return {"kind": "reject", "reason": reason}
        case Edit(payload=payload):
            return {"kind": "edit", "payload": dict(payload)}


def decision_from_data(data: Mapping[str, Any]) -> Decision:
    """A decision read back from the journal."""
    kind = data.get("kind")
    if kind == "reject":
        return Reject(reason=str(data.get("reason", "")))
    if kind == "edit":
        return Edit(payload=dict(data.get("payload") or {}))
    return Approve()


class DecisionSource(Protocol):
    """Where a pause point gets its decision when neither the journal nor ``resume`` has one."""

    async def decide(self, pending: PendingDecision) -> Decision | None:
        """The decision for ``pending``; None pauses the run (``stop_reason="interrupted"``).

        A source may wait as long as it likes (an engine waits for a signal); the decision it
        returns is journaled, so a replay takes the same path without asking again.
        """
        ...


class PauseForDecision:
    """The default source: decides nothing, so the run pauses and ``resume(decision=)`` goes on."""

    async def decide(self, pending: PendingDecision) -> Decision | None:
        """Pause."""
        return None
