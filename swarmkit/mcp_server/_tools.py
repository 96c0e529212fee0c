"""What an MCP client sees of a served swarm: its tools, their arguments, and the results a
call answers with (an output, a waiting run, an error)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import mcp_types as types
from mcp.server.elicitation import render_elicitation_schema
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from swarmkit.exceptions import ConfigurationError
from swarmkit.result import RunResult
from swarmkit.swarm import Swarm

DECIDE_TOOL = "decide_paused_run"
"""The tool that decides a paused run by its session id (listed when decisions are enabled)."""

_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Entry:
    """One tool: the agent a call starts with and the arguments it takes."""

    tool: str
    """The tool's name."""
    agent: str
    """The agent the session starts with."""
    arguments: type[BaseModel]
    """``prompt`` and the context fields, validated by Pydantic."""


class DecideArguments(BaseModel):
    """The arguments of ``decide_paused_run``."""

    session_id: str = Field(description="The paused session, as the waiting result named it.")
    decision: Literal["approve", "reject", "edit"] = Field(description="What to do.")
    reason: str | None = Field(default=None, description="Why, for a reject.")
    payload: dict[str, Any] | None = Field(
        default=None, description="The edited payload (a JSON object), for an edit."
    )


class DecisionForm(BaseModel):
    """What the elicitation form asks a person."""

    model_config = ConfigDict(title="Decision")

    decision: Literal["approve", "reject"] = Field(description="approve or reject")
    reason: str = Field(default="", description="Why (for a reject)")


FORM_SCHEMA = render_elicitation_schema(DecisionForm)
"""The form a person answers: approve or reject, and why."""


def entries_of(swarm: Swarm, names: Sequence[str] | None) -> list[Entry]:
    chosen = list(names) if names is not None else [swarm.entry_agent]
    if not chosen:
        raise ConfigurationError("entries must name at least one agent of the swarm")
    entries = [_entry(swarm, name) for name in chosen]
    tools = [e.tool for e in entries]
    clash = {t for t in tools if tools.count(t) > 1} | ({DECIDE_TOOL} & set(tools))
    if clash:
        raise ConfigurationError(f"two tools would be named {sorted(clash)}: rename the agents")
    return entries


def _entry(swarm: Swarm, agent: str) -> Entry:
    if agent not in swarm.agents:
        raise ConfigurationError(
            f"entry {agent!r} is not an agent of the swarm; agents: {', '.join(swarm.agents)}"
        )
    tool = _TOOL_NAME.sub("_", agent)[:128]
    fields: dict[str, Any] = {"prompt": (str, Field(description="What to ask the swarm."))}
    context_type = swarm.spec.context_type
    for field_name, field in (context_type.model_fields if context_type else {}).items():
        if field_name == "prompt":
            raise ConfigurationError(
                "the context_type has a field named 'prompt', which the MCP tool's prompt "
                "argument takes: rename the field"
            )
        fields[field_name] = (field.annotation, field)
    arguments = create_model(f"{tool}_arguments", **fields)
    return Entry(tool=tool, agent=agent, arguments=arguments)


def describe(swarm: Swarm, agent: str) -> str:
    described = swarm.agents[agent].description
    return described or f"Ask the swarm, starting with its {agent} agent."


def question_of(session_id: str, pending: Mapping[str, Any]) -> str:
    """What a paused run asks: the pending step, its payload as shown (secrets hidden)."""
    about = pending.get("target") or pending.get("tool_name") or pending.get("agent")
    payload = f" with {json.dumps(pending['payload'])}" if pending.get("payload") else ""
    return (
        f"The run {session_id} waits for a decision on {pending.get('kind')} {about}"
        f"{payload}: approve or reject?"
    )


def finished(result: RunResult) -> types.CallToolResult:
    if result.stop_reason == "final_output":
        output = result.final_output
        text = output if isinstance(output, str) else result.final_output_text or ""
        structured = output.model_dump(mode="json") if isinstance(output, BaseModel) else None
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=structured
        )
    failure = f": {result.failure.type}: {result.failure.message}" if result.failure else ""
    return error_result(f"the run {result.session_id} stopped ({result.stop_reason}){failure}")


def waiting(
    session_id: str, text: str, how: str, pending: Mapping[str, Any] | None = None
) -> types.CallToolResult:
    """A result that says the run waits: its session, what is pending, how to decide."""
    structured = {
        "status": "input_required",
        "session_id": session_id,
        "pending": dict(pending) if pending is not None else None,
        "decide_with": DECIDE_TOOL,
    }
    return types.CallToolResult(
        content=[types.TextContent(text=f"{text} To decide, {how}.")],
        structured_content=structured,
    )


def error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ())) or '(arguments)'}: {e.get('msg')}"
        for e in exc.errors()
    )
