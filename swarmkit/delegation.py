"""Delegation: an agent offered to a supervisor as a tool, answering inside the parent run."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from swarmkit.bounds import load_json
from swarmkit.exceptions import ConfigurationError
from swarmkit.models import ToolSpec

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentTool:
    """Another agent of the swarm as a tool: the caller gets its answer back as the result.

    The sub-agent runs its own turn loop (its tools, its handoffs) as a sub-run of the caller's
    run, journaled as session ``{session}__swarm_{agent}_{handoff_count}_{tool_call_id}``.
    Several calls in one turn run concurrently; their results come back in call order.
    """

    agent: str
    """The name of the agent that answers (a member of the same swarm)."""
    name: str
    """The tool name the model calls."""
    description: str
    """What to ask it for, for the model."""

    def spec(self) -> ToolSpec:
        """The tool as offered to a model: one ``input`` string."""
        return ToolSpec(
            name=self.name,
            description=self.description,
            parameters={
                "type": "object",
                "properties": {
                    "input": {"type": "string", "description": "The task or question for it."}
                },
                "required": ["input"],
                "additionalProperties": False,
            },
            strict=True,
        )

    def task(self, arguments: str) -> str | None:
        """The ``input`` of a call's raw JSON arguments, or None when there is none."""
        try:
            parsed: Any = load_json(arguments or "{}")
        except ValueError:
            return None
        task = parsed.get("input") if isinstance(parsed, dict) else None
        return task if isinstance(task, str) else None


def agent_tool(agent: str, *, name: str | None = None, description: str | None = None) -> AgentTool:
    """The delegation tool for ``agent`` (named ``ask_<agent>`` unless ``name`` is given)."""
    if not isinstance(agent, str) or not agent:
        raise ConfigurationError(f"as_tool needs an agent name, got {agent!r}")
    tool_name = name if name is not None else "ask_" + _UNSAFE.sub("_", agent)[:60]
    if not isinstance(tool_name, str) or not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool_name):
        raise ConfigurationError(
            f"delegation tool name {tool_name!r} must be 1-64 letters, digits, _ or -"
        )
    text = description or f"Ask agent {agent!r} to do a task; returns its answer."
    return AgentTool(agent=agent, name=tool_name, description=text)
