"""RunContext: what a tool or a dynamic instruction can see of the run it is part of."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel


@dataclass(frozen=True, kw_only=True, slots=True)
class RunContext:
    """A read-only view of the run, injected into tools and instruction functions that ask for it.

    A tool parameter annotated ``RunContext`` is filled by the loop and never shown to the model.
    """

    context: Mapping[str, Any]
    """The run's context: the caller's ``context`` plus updates returned by tools."""
    agent: str
    """The name of the active agent."""
    session_id: str
    """The run's session id."""
    payload: BaseModel | None = None
    """The validated payload of the handoff that brought the active agent in, if typed."""
    handoff_count: int = 0
    """Handoffs performed so far in the run."""
