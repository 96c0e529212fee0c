"""Checks a person's decision against what the paused run waits for, before anything is written."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from swarmkit._run._replies import goto_request
from swarmkit._run._spec import SwarmSpec
from swarmkit.exceptions import ConfigurationError, HandoffPayloadError, ToolArgumentsError
from swarmkit.interrupts import Decision, Edit

_STILL_WAITING = "the session still waits for a decision; resume it with a corrected edit"


def check_decision(spec: SwarmSpec, pending: Any, decision: Decision) -> None:
    """Raise the validation error of an edit the pending handoff or tool would refuse."""
    if not isinstance(decision, Edit) or not isinstance(pending, Mapping):
        return
    plan = spec.plans.get(str(pending.get("agent")))
    if plan is None:
        return
    if pending.get("kind") == "handoff":
        target = str(pending.get("target"))
        request = goto_request(plan, "", target, decision.payload)
        if isinstance(request, HandoffPayloadError):
            raise HandoffPayloadError(
                f"{request}; {_STILL_WAITING}", tool_name=request.tool_name, target=target
            )
    elif pending.get("kind") == "answer" and not isinstance(decision.payload.get("output"), str):
        raise ConfigurationError(
            f"an edited answer is edit(payload={{'output': '...'}}); {_STILL_WAITING}"
        )
    elif pending.get("kind") == "tool":
        tool = plan.tools.get(str(pending.get("tool_name")))
        problem = None if tool is None else tool.arguments_problem(json.dumps(decision.payload))
        if tool is not None and problem is not None:
            raise ToolArgumentsError(
                f"the edited arguments for tool {tool.name!r} do not validate: {problem}; "
                f"{_STILL_WAITING}",
                tool_name=tool.name,
            )
