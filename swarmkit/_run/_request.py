"""What the active agent's model is asked: instructions, the history it may see, its tools."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from swarmkit._run._limits import allowed_targets, check_turn_budget, must_answer
from swarmkit._run._offers import Withheld, withheld
from swarmkit._run._output import request_schema
from swarmkit._run._state import RunState, run_context
from swarmkit.filters import payload_json
from swarmkit.handoffs import build_legacy_handoff_tool, legacy_peer_description
from swarmkit.messages import AssistantMessage, SystemMessage
from swarmkit.models import ModelRequest, ModelSettings, OutputSchema, ToolSpec
from swarmkit.plan import AgentPlan
from swarmkit.spec import SwarmSpec


async def build_request(swarm: SwarmSpec, state: RunState, plan: AgentPlan) -> ModelRequest:
    """The next model request of the active agent (after checking max_turns allows one), with
    only its system message: the caller holds the history by reference (``RequestHistory``)
    and adds it where the request is sent or shown."""
    check_turn_budget(swarm, state)
    hidden = withheld(plan, state)
    tools = offered_tools(swarm, state, plan, hidden)
    state.offer.withheld, state.offer.withheld_targets = hidden.tools, hidden.targets
    settings = plan.agent.model_settings
    if tools and must_answer(swarm, state):
        # The last call the cap allows must answer: tools stay listed (the history mentions
        # them) but the model may not call them.
        settings = answer_only(settings)
    settings = offered_choice(settings, tools, state)
    state.offer.tool_choice = settings.tool_choice if tools else None
    text, schema = await instructions(state, plan), request_schema(plan)
    payload = _payload_data(state)
    last = state.offer.request
    if (
        last is not None
        and last.agent == plan.name
        and _same_request(
            last, text=text, tools=tools, settings=settings, schema=schema, payload=payload
        )
    ):
        # The agent asks what it asked last time: the same (frozen) request serves, and the
        # journal's digest of it, taken by identity, is not recomputed.
        return last
    request = ModelRequest(
        messages=(SystemMessage(content=text),),
        tools=tools,
        settings=settings,
        agent=plan.name,
        output_schema=schema,
        handoff_payload=payload,
    )
    state.offer.request = request
    return request


def _same_request(
    last: ModelRequest,
    *,
    text: str,
    tools: tuple[ToolSpec, ...],
    settings: ModelSettings,
    schema: OutputSchema | None,
    payload: dict[str, Any] | None,
) -> bool:
    """Whether ``last`` is the request these parts make (the very same tools, settings and
    schema, equal instructions, no payload)."""
    return (
        payload is None
        and last.handoff_payload is None
        and last.tools is tools
        and last.settings is settings
        and last.output_schema is schema
        and last.messages[0].content == text
    )


def _payload_data(state: RunState) -> dict[str, Any] | None:
    """The typed handoff payload the active agent came in with, as JSON data."""
    payload = state.trail.payload
    return None if payload is None else payload.model_dump(mode="json")


def answer_only(settings: ModelSettings) -> ModelSettings:
    """The settings of a call that must answer: our ``tool_choice="none"`` wins over the
    agent's, also over one hidden in ``extra_body``, so a limit can always end the run."""
    extra = {k: v for k, v in settings.extra_body.items() if k != "tool_choice"}
    return replace(settings, tool_choice="none", extra_body=extra)


def offered_choice(
    settings: ModelSettings, tools: tuple[ToolSpec, ...], state: RunState
) -> ModelSettings:
    """A forcing tool_choice (``required`` or a tool's name) holds until the agent has called a
    tool since it became active; then ``auto``, so it can answer instead of looping. A named
    tool a limit withdrew leaves ``required``: the model must still call one it has."""
    choice = settings.tool_choice
    if choice in (None, "auto", "none"):
        return settings
    if any(isinstance(m, AssistantMessage) and m.tool_calls for m in state.conversation.own_items):
        return replace(settings, tool_choice="auto")
    if choice == "required" or any(t.name == choice for t in tools):
        return settings
    return replace(settings, tool_choice="required")


def offered_tools(
    swarm: SwarmSpec, state: RunState, plan: AgentPlan, hidden: Withheld | None = None
) -> tuple[ToolSpec, ...]:
    """The agent's function tools, then the transfer tools its limits still allow (``hidden``:
    what the agent's rules withhold this turn, when the caller has it already)."""
    hidden = hidden if hidden is not None else withheld(plan, state)
    allowed = allowed_targets(swarm, state, plan) - hidden.targets
    transfers = tuple(spec for target, spec in plan.transfer_specs if target in allowed)
    tools = plan.tool_specs
    if hidden.tools:
        tools = tuple(spec for spec in tools if spec.name not in hidden.tools)
    return tools + transfers + _legacy_specs(swarm, plan, allowed)


async def instructions(state: RunState, plan: AgentPlan) -> str:
    """The agent's instructions, with a note of the handoff that brought it in."""
    agent = plan.agent
    # Fixed text needs no run context: building one per call is a replayed step's cost.
    fixed = agent.instructions if isinstance(agent.instructions, str) else None
    text = fixed if fixed is not None else await agent.render_instructions(run_context(state))
    if state.trail.previous_agent is None:
        return text
    note = [f"You were handed this conversation by agent {state.trail.previous_agent!r}."]
    if state.trail.handoff_message:
        note.append(f"Handoff message: {state.trail.handoff_message}")
    if state.trail.payload is not None:
        name = type(state.trail.payload).__name__
        note.append(f"Handoff payload ({name}): {payload_json(state.trail.payload)}")
    return "\n\n".join([text, "\n".join(note)]) if text else "\n".join(note)


def _legacy_specs(
    swarm: SwarmSpec, plan: AgentPlan, allowed: frozenset[str]
) -> tuple[ToolSpec, ...]:
    legacy = plan.legacy
    if legacy is None or not allowed:
        return ()
    if allowed.issuperset(legacy.targets):
        return (legacy.spec(),)
    # Limits took some peers away: the target enum lists only the ones still allowed.
    targets = [t for t in legacy.targets if t in allowed]
    descriptions = {t: legacy_peer_description(swarm.plans[t].agent) for t in targets}
    narrowed = build_legacy_handoff_tool(
        plan.name, targets, tool_name=legacy.name, descriptions=descriptions
    )
    return (narrowed.spec(),) if narrowed is not None else ()
