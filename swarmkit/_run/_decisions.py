"""Checks a person's decision against what the paused run waits for, before anything is written.

One rule for every door a decision comes through: ``resume``, Temporal's update, the viewer and
the command all ask ``decision_problems`` (or ``check_decision``, which raises its verdict).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from pydantic import ValidationError

from swarmkit.exceptions import (
    ConfigurationError,
    HandoffPayloadError,
    PeopleQueueError,
    SwarmkitError,
    ToolArgumentsError,
)
from swarmkit.interrupts import Approve, Decision, Edit, FieldProblem, PendingDecision
from swarmkit.people import take_over_problems
from swarmkit.plan import AgentPlan
from swarmkit.redaction import REDACTED
from swarmkit.spec import SwarmSpec

_EFFECT_EDIT = (
    "an effect whose outcome is unknown is settled by edit(payload={'result': ...}) when it "
    "happened, approve() to run it again or reject() when it must not run"
)
_STILL_WAITING = "the session still waits for a decision; resume it with a corrected edit"


def decision_problems(
    spec: SwarmSpec, pending: Any, decision: Decision
) -> tuple[FieldProblem, ...]:
    """What the paused handoff, tool or answer would refuse in an edited decision; () if none.
    ``pending`` is the journaled pause (a mapping) or the ``PendingDecision`` itself."""
    if isinstance(pending, PendingDecision):
        pending = {f.name: getattr(pending, f.name) for f in fields(pending)}
    if isinstance(pending, Mapping) and pending.get("kind") == "person":
        return take_over_problems({n: p.agent for n, p in spec.plans.items()}, decision)
    if isinstance(decision, Approve) and isinstance(pending, Mapping):
        return _withheld(pending)
    if not isinstance(decision, Edit) or not isinstance(pending, Mapping):
        return ()
    plan = spec.plans.get(str(pending.get("agent")))
    if plan is None:
        return ()
    payload = decision.payload
    match pending.get("kind"):
        case "handoff" | "agent":
            return _payload_problems(plan, str(pending.get("target")), payload)
        case "answer" if not isinstance(payload.get("output"), str):
            return (FieldProblem(field="output", message="an edited answer is a string"),)
        case "effect" if "result" not in payload:
            return (FieldProblem(field="result", message=_EFFECT_EDIT),)
        case "tool":
            tool = plan.tools.get(str(pending.get("tool_name")))
            problem = None if tool is None else tool.arguments_problem(json.dumps(payload))
            return () if problem is None else (FieldProblem(field="", message=problem),)
    return ()


def check_decision(spec: SwarmSpec, pending: Any, decision: Decision) -> None:
    """Raise, from our error tree, what ``decision_problems`` finds (the session keeps waiting)."""
    problems = decision_problems(spec, pending, decision)
    if not problems:
        return
    assert isinstance(pending, Mapping)
    if isinstance(decision, Approve):
        raise _error(spec, pending, _withheld_text(problems), approved=True)
    text = "; ".join(f"{p.field}: {p.message}" if p.field else p.message for p in problems)
    raise _error(spec, pending, text)


def _withheld(pending: Mapping[str, Any]) -> tuple[FieldProblem, ...]:
    """A journaled pause's arguments or payload whose secret values the journal withheld:
    approving would run the call with ``[redacted]`` in their place."""
    if pending.get("kind") not in ("tool", "handoff", "agent"):
        return ()
    return tuple(
        FieldProblem(field=path, message=f"journaled as {REDACTED!r}")
        for path in _redacted_paths(pending.get("payload"))
    )


def _withheld_text(problems: tuple[FieldProblem, ...]) -> str:
    fields_ = ", ".join(p.field for p in problems)
    return (
        f"the journal keeps {fields_} as {REDACTED!r} (secret values are never journaled), so "
        "approving would go on without them; the session still waits for a decision: resume "
        "it with edit(payload=...) giving every value, or reject it"
    )


def _redacted_paths(value: Any) -> list[str]:
    """The dotted paths of ``[redacted]`` values in ``value``; no recursion."""
    found: list[str] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if item == REDACTED:
            found.append(path or "(the value)")
        elif isinstance(item, Mapping):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(item))
    return sorted(found)


def _error(
    spec: SwarmSpec, pending: Mapping[str, Any], text: str, *, approved: bool = False
) -> SwarmkitError:
    kind, target, tool = pending.get("kind"), str(pending.get("target")), pending.get("tool_name")
    if kind == "person":
        return PeopleQueueError(f"{text}; {_STILL_WAITING}")
    if kind == "answer":
        return ConfigurationError(
            f"an edited answer is edit(payload={{'output': '...'}}); {_STILL_WAITING}"
        )
    if kind == "effect":
        return ConfigurationError(f"{_EFFECT_EDIT}; {_STILL_WAITING}")
    if kind == "tool":
        if approved:
            return ToolArgumentsError(f"approve for tool {tool!r}: {text}", tool_name=str(tool))
        return ToolArgumentsError(
            f"the edited arguments for tool {tool!r} do not validate: {text}; {_STILL_WAITING}",
            tool_name=str(tool),
        )
    plan = spec.plans[str(pending.get("agent"))]
    names = (t.name for t in plan.transfers.values() if t.target == target)
    edited = f"the edited payload for the handoff to {target!r} does not validate"
    head = f"approve for the handoff to {target!r}" if approved else edited
    return HandoffPayloadError(
        f"{head}: {text}" + ("" if approved else f"; {_STILL_WAITING}"),
        tool_name=next(names, f"transfer_to_{target}"),
        target=target,
    )


def _payload_problems(
    plan: AgentPlan, target: str, payload: Mapping[str, Any]
) -> tuple[FieldProblem, ...]:
    config = plan.handoff_configs.get(target)
    if config is None or config.input_type is None:
        return ()
    try:
        config.input_type.model_validate(dict(payload))
    except ValidationError as exc:
        return tuple(
            FieldProblem(field=".".join(str(p) for p in e["loc"]), message=e["msg"])
            for e in exc.errors()
        )
    return ()
