"""Effects: tool calls that change the outside world once, and how an unknown outcome is settled.

A tool declared ``@tool(effect=True)`` has its intent (tool, arguments, idempotency key)
journaled and committed before it runs. A run that resumes and finds an intent with no outcome
does not know whether the effect happened: it asks the tool's reconcile function, or pauses
for a person; it never runs the effect again silently.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal


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
