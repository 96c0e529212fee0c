"""Effects: tool calls that change the outside world once, and how an unknown outcome is settled.

A tool declared ``@tool(effect=True)`` has its intent (tool, arguments, idempotency key)
journaled and committed before it runs. A run that resumes and finds an intent with no outcome
does not know whether the effect happened: it asks the tool's reconcile function, or pauses
for a person; it never runs the effect again silently.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from swarmkit.context import RunContext
from swarmkit.exceptions import EffectOutcomeUnknownError
from swarmkit.tools import FunctionTool, ToolOutcome, ToolResult, serialize_output


@dataclass(frozen=True, kw_only=True, slots=True)
class Happened:
    """A reconcile function's answer: the effect already happened; this is its result."""

    result: Any = None
    """What the tool would have returned (a str as is, anything else as JSON for the model)."""
    kind: Literal["happened"] = "happened"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class NotDone:
    """A reconcile function's answer: the effect did not happen; run it (same key)."""

    kind: Literal["not_done"] = "not_done"
    """Discriminator."""


Reconciled = Happened | NotDone
"""What a reconcile function answers."""

Reconcile = Callable[[str, dict[str, Any]], "Reconciled | Awaitable[Reconciled]"]
"""``reconcile(idempotency_key, arguments)``: asks the system of record whether the effect
with this key happened (sync or async)."""


async def reconcile_effect(
    reconcile: Reconcile, key: str, arguments: Mapping[str, Any]
) -> Reconciled | str:
    """The reconcile function's answer, or why there is none (it raised, or answered
    something other than ``Happened`` or ``NotDone``)."""
    try:
        answer = reconcile(key, dict(arguments))
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as exc:
        return f"the reconcile function raised {type(exc).__name__}: {exc}"
    if isinstance(answer, Happened | NotDone):
        return answer
    return (
        f"the reconcile function returned {type(answer).__name__}; "
        "it must return Happened(result=...) or NotDone()"
    )


async def run_again(tool: FunctionTool, arguments: str, context: RunContext) -> ToolOutcome:
    """For an engine that runs a call again after losing an attempt (a killed worker): an
    effect asks its reconcile function first and runs only on ``NotDone``; without an answer
    it raises ``EffectOutcomeUnknownError`` (the run pauses for a person). Any other tool
    simply runs again."""
    if not tool.effect:
        return await tool.invoke(arguments, context)
    why = "the engine lost an attempt of this effect, which may have happened"
    if tool.reconcile is not None:
        answer = await reconcile_effect(
            tool.reconcile, str(context.idempotency_key), arguments_of(arguments)
        )
        match answer:
            case Happened(result=result):
                return happened(result)
            case NotDone():
                return await tool.invoke(arguments, context)
            case str():
                why = f"{why}; {answer}"
    raise EffectOutcomeUnknownError(why, tool_name=tool.name)


def happened(result: Any) -> ToolOutcome:
    """The outcome of an effect that happened with ``result``."""
    return ToolOutcome(
        content=serialize_output(result), is_error=False, result=ToolResult(output=result)
    )


def arguments_of(arguments: str) -> dict[str, Any]:
    """Raw JSON arguments as an object (what a reconcile function and a person are shown)."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {"raw": arguments}
    return value if isinstance(value, dict) else {"value": value}
