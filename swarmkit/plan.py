"""The swarm's configuration compiled once per agent: resolved model, tools and transfer tools."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from swarmkit.agent import Agent
from swarmkit.delegation import AgentTool
from swarmkit.exceptions import ConfigurationError
from swarmkit.handoffs import (
    Handoff,
    LegacyHandoffTool,
    TransferTool,
    build_legacy_handoff_tool,
    build_transfer_tools,
    legacy_peer_description,
)
from swarmkit.models import Model, ToolSpec, model_from_string
from swarmkit.tools import FunctionTool


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentPlan:
    """One agent as the loop drives it, everything derivable from the configuration precomputed."""

    agent: Agent
    """The agent."""
    model: Model
    """The model its calls go to (its own, or the swarm's)."""
    tools: Mapping[str, FunctionTool]
    """Its function tools by name."""
    tool_specs: tuple[ToolSpec, ...]
    """The specs of its function tools, in declaration order."""
    transfers: Mapping[str, TransferTool]
    """Its per-target transfer tools by tool name (empty when the legacy tool is used)."""
    transfer_specs: tuple[tuple[str, ToolSpec], ...]
    """(target, spec) of each transfer tool, in order, so each turn only filters them."""
    legacy: LegacyHandoffTool | None
    """The single ``handoff(target, message)`` tool, when the swarm asks for it."""
    handoff_configs: Mapping[str, Handoff]
    """Handoff configuration per target it may hand off to."""
    delegates: Mapping[str, AgentTool] = field(default_factory=dict)
    """Agents it delegates to, by tool name (``other.as_tool()`` in its tools)."""

    name: str = field(init=False)
    """The agent's name (a field, not a property: the loop reads it many times a step)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.agent.name)


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanOptions:
    """The swarm-wide settings that shape every agent's plan."""

    peers: Mapping[str, Agent]
    """Every agent of the swarm by name."""
    peer_handoffs: Mapping[str, Handoff]
    """Swarm-level Handoff configuration per peer (from ``{name: Handoff}`` entries)."""
    default_model: Model | None
    """The swarm's model."""
    legacy_handoff_tool: bool
    """Whether agents get the single legacy tool instead of per-target tools."""
    handoff_tool_name: str
    """The legacy tool's name."""
    llm_edges: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The graph's LLM edges: each source agent's targets, as if listed in its handoffs."""
    llm_edge_descriptions: Mapping[tuple[str, str], str] = field(default_factory=dict)
    """The descriptions the graph's LLM edges give, by (source, target): each the transfer
    tool's description unless the agent's own Handoff gives one."""


def build_plan(agent: Agent, options: PlanOptions, resolve: ModelResolver) -> AgentPlan:
    """Compile one agent; raises ConfigurationError for unknown peers or clashing tool names."""
    configs = _handoff_configs(agent, options)
    _check_then(agent, options)
    transfers: tuple[TransferTool, ...] = ()
    legacy = None
    descriptions = {name: peer.description for name, peer in options.peers.items()}
    if options.legacy_handoff_tool:
        legacy = build_legacy_handoff_tool(
            agent.name,
            tuple(configs),
            tool_name=options.handoff_tool_name,
            descriptions={n: legacy_peer_description(p) for n, p in options.peers.items()},
        )
    else:
        transfers = build_transfer_tools(
            agent.name, tuple(configs.values()), descriptions=descriptions
        )
    plan = AgentPlan(
        agent=agent,
        model=resolve(agent, options.default_model),
        tools={t.name: t for t in agent.tools if isinstance(t, FunctionTool)},
        tool_specs=tuple(t.spec() for t in agent.tools),
        transfers={t.name: t for t in transfers},
        transfer_specs=tuple((t.target, t.spec()) for t in transfers),
        legacy=legacy,
        handoff_configs=configs,
        delegates=_delegates(agent, options),
    )
    _check_tool_names(plan)
    _check_tool_choice(plan)
    return plan


class ModelResolver:
    """Turns an agent's or the swarm's model setting into a Model, one instance per name."""

    def __init__(self) -> None:
        self._by_name: dict[str, Model] = {}

    def __call__(self, agent: Agent, default: Model | None) -> Model:
        chosen = agent.model if agent.model is not None else default
        if chosen is None:
            raise ConfigurationError(
                f"agent {agent.name!r} has no model: pass model= to Swarm or to the Agent"
            )
        return self._named(chosen) if isinstance(chosen, str) else chosen

    def default(self, model: Model | str | None) -> Model | None:
        """The swarm-wide model, a model string turned into its adapter."""
        return self._named(model) if isinstance(model, str) else model

    def _named(self, name: str) -> Model:
        if name not in self._by_name:
            self._by_name[name] = model_from_string(name)
        return self._by_name[name]


def _handoff_configs(agent: Agent, options: PlanOptions) -> dict[str, Handoff]:
    own = agent.handoff_configs()
    declared = options.llm_edges.get(agent.name)
    said = options.llm_edge_descriptions
    if own is None:
        targets = declared or [n for n in options.peers if n != agent.name]
        return {
            n: _described(options.peer_handoffs.get(n, Handoff(agent=n)), said.get((agent.name, n)))
            for n in targets
        }
    _check_llm_edges(agent, own, declared or ())
    configs: dict[str, Handoff] = {}
    for handoff in own:
        target = handoff.target
        if target not in options.peers:
            raise ConfigurationError(
                f"agent {agent.name!r} hands off to {target!r}, which is not in the swarm: "
                f"add the Agent named {target!r} to the swarm's agents (or pass the Agent "
                f"itself in handoffs=); agents: {', '.join(sorted(options.peers))}"
            )
        merged = _merge(handoff, options.peer_handoffs.get(target))
        configs[target] = _described(merged, said.get((agent.name, target)))
    return configs


def _described(handoff: Handoff, description: str | None) -> Handoff:
    """The handoff with an LLM edge's description, when it gives none of its own."""
    if description is None or handoff.description is not None:
        return handoff
    return replace(handoff, description=description)


def _check_llm_edges(agent: Agent, own: Sequence[Handoff], declared: Sequence[str]) -> None:
    """The graph's LLM edges from an agent with its own ``handoffs=`` must be among them."""
    listed = {handoff.target for handoff in own}
    missing = [target for target in declared if target not in listed]
    if missing:
        raise ConfigurationError(
            f"the graph declares LLM edges from {agent.name!r} to {', '.join(map(repr, missing))}"
            f", but agent {agent.name!r} lists handoffs={sorted(listed)}: add them to its "
            "handoffs=, or remove the edges (an LLM edge is the same as a listed handoff)"
        )


def _check_then(agent: Agent, options: PlanOptions) -> None:
    if agent.then is not None and agent.then not in options.peers:
        raise ConfigurationError(
            f"agent {agent.name!r} continues to {agent.then!r} (then=), which is not in the "
            "swarm; add that agent to the swarm's agents"
        )


def _delegates(agent: Agent, options: PlanOptions) -> dict[str, AgentTool]:
    delegates = {t.name: t for t in agent.tools if isinstance(t, AgentTool)}
    for delegate in delegates.values():
        if delegate.agent not in options.peers:
            raise ConfigurationError(
                f"agent {agent.name!r} delegates to {delegate.agent!r}, which is not in the "
                f"swarm; add that agent to the swarm's agents"
            )
    return delegates


def _merge(own: Handoff, swarm_level: Handoff | None) -> Handoff:
    """An agent's own Handoff wins; a bare peer name inherits the swarm-level configuration."""
    bare = own.input_type is None and own.input_filter is None and own.description is None
    bare = bare and own.available_when is None
    if swarm_level is not None and bare and own.tool_name is None:
        return swarm_level
    return own


def _check_tool_names(plan: AgentPlan) -> None:
    handoff_names = set(plan.transfers) | ({plan.legacy.name} if plan.legacy else set())
    clash = sorted(set(plan.tools) & handoff_names)
    if clash:
        raise ConfigurationError(
            f"agent {plan.name!r} has function tools named like its handoff tools: "
            f"{', '.join(clash)}; rename the tools"
        )


def _check_tool_choice(plan: AgentPlan) -> None:
    """A tool_choice that names a tool must name one of the agent's own."""
    choice = plan.agent.model_settings.tool_choice
    if choice is None or choice in ("auto", "required", "none"):
        return
    names = [*plan.tools, *plan.transfers, *([plan.legacy.name] if plan.legacy else [])]
    if choice not in names:
        raise ConfigurationError(
            f"agent {plan.name!r}: tool_choice {choice!r} is not one of its tools "
            f"({', '.join(names) or 'none'}); use 'auto', 'required', 'none' or a tool's name"
        )
