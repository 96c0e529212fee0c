"""Interrupts for a human: what a paused run is waiting for, and the decisions that resume it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingDecision:
    """What a paused run is about to do, waiting for a human to approve, reject or edit it."""

    kind: Literal["agent", "handoff", "tool", "answer", "question", "effect", "person"]
    """Entering an agent (``interrupt_before``), a handoff, a tool that needs approval, an
    agent's answer (``interrupt_after``), a tool's question for a person, an effect whose
    outcome is unknown (its intent was journaled, its outcome never was), or a conversation
    handed off to a queue of people (``PeopleQueue``), waiting for a person to take over."""
    agent: str
    """The active agent when the run paused."""
    target: str | None = None
    """The agent about to be entered (for ``agent`` and ``handoff``)."""
    tool_name: str | None = None
    """The tool about to run (for ``tool``)."""
    payload: Mapping[str, Any] | None = None
    """The handoff payload or the tool's arguments, as JSON-safe data; for ``answer``
    (``interrupt_after``) ``{"output": text}``; for ``question`` (a tool's ``ToolResult(ask=)``)
    ``{"question": text}``; for ``effect`` ``{"outcome": "unknown", "idempotency": key,
    "arguments": {...}, "intent_at": seconds}`` and ``"error"`` when the reconcile function
    failed (approve runs it again, ``edit(payload={"result": ...})`` says it happened with that
    result, reject says it must not run); for ``person``: the queue's name, priority and
    deadline and the handoff's payload (see ``swarmkit.people``)."""
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

    by: str | None = None
    """Who decided (a person's name or id), kept in the audit trail; None when not said."""
    note: str | None = None
    """Why, in the decider's words, kept in the audit trail."""
    kind: Literal["approve"] = "approve"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Reject:
    """Do not do it; the agent is told why and carries on."""

    reason: str = "rejected by a human"
    """Why, as the agent will read it."""
    by: str | None = None
    """Who decided, kept in the audit trail; None when not said."""
    note: str | None = None
    """A note for the audit trail (the agent reads ``reason``, not this)."""
    kind: Literal["reject"] = "reject"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Edit:
    """Go ahead with a changed payload (a handoff's) or changed arguments (a tool's)."""

    payload: Mapping[str, Any] = field(default_factory=dict)
    """The replacement payload or arguments, validated like the original."""
    by: str | None = None
    """Who decided, kept in the audit trail; None when not said."""
    note: str | None = None
    """Why it was changed, kept in the audit trail."""
    kind: Literal["edit"] = "edit"
    """Discriminator."""


Decision = Approve | Reject | Edit
"""A human's answer to a pending decision."""


def approve(*, by: str | None = None, note: str | None = None) -> Approve:
    """Approve the pending decision; ``by`` and ``note`` go into the audit trail."""
    return Approve(by=by, note=note)


def reject(
    reason: str = "rejected by a human", *, by: str | None = None, note: str | None = None
) -> Reject:
    """Reject the pending decision, telling the agent ``reason``."""
    return Reject(reason=reason, by=by, note=note)


def edit(*, payload: Mapping[str, Any], by: str | None = None, note: str | None = None) -> Edit:
    """Approve with a replacement payload (handoff) or arguments (tool)."""
    return Edit(payload=dict(payload), by=by, note=note)


def decision_to_data(decision: Decision) -> dict[str, Any]:
    """The decision as JSON-safe data, for the journal (who and why only when said)."""
    match decision:
        case Approve():
            data: dict[str, Any] = {"kind": "approve"}
        case Reject(reason=reason):
            data = {"kind": "reject", "reason": reason}
        case Edit(payload=payload):
            data = {"kind": "edit", "payload": dict(payload)}
    if decision.by is not None:
        data["decided_by"] = decision.by
    if decision.note is not None:
        data["note"] = decision.note
    return data


def decision_from_data(data: Mapping[str, Any]) -> Decision:
    """A decision read back from the journal."""
    kind = data.get("kind")
    by, note = _text(data.get("decided_by")), _text(data.get("note"))
    if kind == "reject":
        return Reject(reason=str(data.get("reason", "")), by=by, note=note)
    if kind == "edit":
        return Edit(payload=dict(data.get("payload") or {}), by=by, note=note)
    return Approve(by=by, note=note)


def decision_audit(decision: Decision, proposed: str, executed: str) -> dict[str, Any]:
    """What an audit trail keeps of a person's decision on a tool call: its kind, who and
    why, and for an edit the fields it changed (the executed arguments stand beside it)."""
    audit = decision_to_data(decision)
    audit.pop("payload", None)
    if isinstance(decision, Edit):
        audit["edited"] = list(edited_fields(_arguments(proposed), _arguments(executed)))
    return audit


def _arguments(text: str) -> dict[str, Any]:
    """Tool arguments as an object; text that is not a JSON object reads as no fields."""
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def edited_fields(proposed: Mapping[str, Any], executed: Mapping[str, Any]) -> tuple[str, ...]:
    """The top-level fields an edit changed, added or removed, sorted."""
    keys = set(proposed) | set(executed)
    return tuple(sorted(k for k in keys if proposed.get(k, _MISSING) != executed.get(k, _MISSING)))


_MISSING = object()


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


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
