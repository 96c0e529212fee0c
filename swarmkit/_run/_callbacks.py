"""The user's callbacks the loop calls: a Handoff's ``on_handoff``, its outcome journaled."""

from __future__ import annotations

import inspect

from swarmkit._run._state import RunState, run_context
from swarmkit.events import RefusalReason
from swarmkit.exceptions import ToolExecutionError
from swarmkit.handoffs import Handoff, HandoffRequest, on_handoff_arity
from swarmkit.lowlevel import StepWriter
from swarmkit.plan import AgentPlan


async def handoff_callback(
    tape: StepWriter, state: RunState, plan: AgentPlan, request: HandoffRequest
) -> tuple[RefusalReason, str] | None:
    """Run the handoff's ``on_handoff`` (None when it ran, or there is none); if it raised, why
    the handoff is refused. Replay serves the journaled outcome instead of calling it again."""
    config = plan.handoff_configs.get(request.target)
    if config is None or config.on_handoff is None:
        return None
    held = tape.held("on_handoff")
    if held is None:
        error = await _call(config, state, request)
    else:
        error = held.data.get("error") if held.data is not None else None
    await tape.note("on_handoff", {"agent": plan.name, "target": request.target, "error": error})
    return None if error is None else ("on_handoff_failed", str(error))


async def _call(config: Handoff, state: RunState, request: HandoffRequest) -> str | None:
    callback = config.on_handoff
    assert callback is not None
    context = run_context(state)
    try:
        if on_handoff_arity(callback) == 1:
            result = callback(context)
        else:
            result = callback(context, request.payload)
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        message = f"on_handoff for {request.target!r} raised {type(exc).__name__}: {exc}"
        error = ToolExecutionError(message, tool_name=f"on_handoff:{request.target}")
        if config.raise_errors:
            raise error from exc
        return message
    return None
