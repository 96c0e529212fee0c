"""SwarmConfig: a swarm's settings as one frozen value, checked and compiled into its SwarmSpec."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel

from swarmkit._typed_context import check_context_type
from swarmkit.agent import Agent
from swarmkit.conversation import NextTurnSetting, as_next_turn
from swarmkit.events import EventObserver
from swarmkit.exceptions import ConfigurationError
from swarmkit.graph import HandoffGraph
from swarmkit.handoffs import Handoff
from swarmkit.interrupts import DecisionSource
from swarmkit.journal import Journal
from swarmkit.ledger import Ledger
from swarmkit.limits import UsageLimits, check_timeout
from swarmkit.models import Model, provider_of
from swarmkit.plan import AgentPlan, ModelResolver, PlanOptions, build_plan
from swarmkit.redaction import DEFAULT_SECRET_PATTERNS
from swarmkit.runtime import Runtime
from swarmkit.shadow import RuleAudit, shadow_graph
from swarmkit.spec import LimitPolicy, SwarmSpec
from swarmkit.tools import ToolRunner

__all__ = [
    "DEFAULT_LEASE_TTL",
    "DEFAULT_REDACT_KEYS",
    "SwarmConfig",
    "check_journal",
    "check_usage_limits",
    "compile_spec",
    "fingerprint",
]

DEFAULT_REDACT_KEYS = DEFAULT_SECRET_PATTERNS
"""Words that make a key secret (whole words of it): a journal holds its value as "[redacted]"."""

DEFAULT_LEASE_TTL = 60.0
"""Seconds a run's lease on its session outlives the last write of a run that died."""

_POLICIES = ("finish", "stop", "error")

Members = Mapping[str, Agent | Handoff] | Sequence[Agent | Handoff]
"""What ``Swarm(agents)`` takes: a list of agents (or Handoff configs), or ``{name: ...}``."""


@dataclass(frozen=True, kw_only=True)
class SwarmConfig:
    """Everything ``Swarm(...)`` was given, as one frozen value; ``swarm.config`` returns it.

    Each field is the ``Swarm`` keyword of the same name. A variant of a swarm
    (``with_model``, ``with_models``, ``with_seams``) is a new swarm built from a changed copy.
    """

    agents: Members
    """The peers: a list of Agent (or Handoff(agent=...) configs), or the
    ``{name: Agent | Handoff}`` dict of jeevesagent (a Python agent framework whose Swarm and
    Handoff keywords swarmkit keeps) whose keys name them. An agent an agent hands off to joins
    the swarm even when the list does not repeat it."""
    entry_agent: str | Agent
    """The agent (or its name) that takes the first turn."""
    model: Model | str | None = None
    """The model of every agent without its own: a Model, or a name for OpenAIModel."""
    models: Mapping[str, Model | str] = field(default_factory=dict)
    """Per-agent models that replace the agents' own (``with_models``); none by default."""
    graph: HandoffGraph | None = None
    """Rules consulted before each model call; a match hands off with no model call."""
    max_handoffs: int = 8
    """Handoffs a run may perform, rule or model; then the active agent must answer."""
    detect_cycles: bool = True
    """Whether a handoff back to an agent already on the trail counts as a cycle."""
    max_revisits: int = 0
    """How often an agent may be entered again before that counts as a cycle."""
    pass_full_history: bool = True
    """Whether a receiving agent without an input filter sees the whole history (else only
    the latest user message)."""
    handoff_tool_name: str | None = None
    """Name of the single legacy ``handoff(target, message)`` tool; naming it turns it on."""
    legacy_handoff_tool: bool | None = None
    """Offer the single legacy handoff tool instead of per-target ``transfer_to_<name>``."""
    max_turns: int = 50
    """Model calls a run may make."""
    on_max_handoffs: LimitPolicy = "finish"
    """At the handoff cap: ``finish`` (the agent answers), ``stop`` (end now) or ``error``."""
    on_max_turns: LimitPolicy = "finish"
    """At the turn cap: ``finish``, ``stop`` or ``error``."""
    on_cycle: LimitPolicy = "finish"
    """On a detected cycle: ``finish`` (refuse the handoff), ``stop`` or ``error``."""
    session_ids: Callable[[], str] | None = None
    """Makes new session ids (the runtime's random ids by default)."""
    journal: Journal | None = None
    """Where runs are journaled by default; None journals nothing unless a call passes one."""
    interrupt_before: Collection[str] = ()
    """Agents a run pauses before entering, for a human decision."""
    interrupt_after: Collection[str] = ()
    """Agents a run pauses after, when they answer or hand off."""
    interrupt_on_handoff: bool = False
    """Whether every handoff pauses for a human decision."""
    redact_keys: Collection[str] = DEFAULT_REDACT_KEYS
    """Words that make a key secret: journals, logs and pages show its value as redacted."""
    runtime: Runtime | None = None
    """Ids, clock, sleep and randomness (the real ones by default)."""
    tool_runner: ToolRunner | None = None
    """Runs every function tool call (in process by default)."""
    decisions: DecisionSource | None = None
    """Decides pause points (by default a run pauses and waits for ``resume``)."""
    lease_ttl: float = DEFAULT_LEASE_TTL
    """Seconds a dead run's lease on its session outlives its last write."""
    limits: UsageLimits | None = None
    """What a run may spend: model calls, tokens, tool calls, cost."""
    run_timeout: float | None = None
    """Seconds on the run's clock a run (or each resumed part of it) may take."""
    agent_timeout: float | None = None
    """Seconds on the run's clock one agent's stay may take."""
    context_type: type[BaseModel] | None = None
    """A Pydantic model the context must validate against; the check reads its fields."""
    observers: Sequence[EventObserver] = ()
    """Functions that wrap a run's event stream (tracing, logging), outermost last."""
    next_turn: NextTurnSetting = "last"
    """Who answers a conversation's next user message (``history=`` or
    ``continue_session=True``): ``"last"`` (the agent that answered goes on), ``"entry"`` (the
    entry agent re-routes every message), or a ``NextTurn`` (or its list of ``(when, agent)``
    rules) over the context and the new message. The decision is journaled with the turn."""
    handoffs_per: Literal["run", "conversation"] = "run"
    """What ``max_handoffs`` and cycle detection count over: each run (each turn of a
    conversation afresh, the default), or the whole conversation, so a turn counts the
    handoffs its earlier turns made and a handoff back to an agent an earlier turn visited
    closes a cycle. (Usage limits choose with ``UsageLimits(per=...)``.)"""
    shadow: HandoffGraph | Mapping[str, Any] | None = None
    """Rules in shadow: a HandoffGraph (or its ``to_dict`` data, as a rules file holds it)
    whose rules are judged on every turn the model decides, on the rule state ``graph`` would
    see, and journaled with that decision (fired or not, target, agreement with the model);
    never followed, so runs, calls and answers are as without it. ``swarmkit rules status``
    reads the verdicts; a rule naming an agent the swarm lacks is a ConfigurationError."""
    audit: RuleAudit | None = None
    """Audit the graph's active rules on a deterministic sample of the turns they decide
    (the model is asked anyway, its answer journaled, the rule's routing standing), and
    demote a rule whose agreement drifts, for every swarm sharing the journal. None: never."""
    ledger: Ledger | None = None
    """A spend ledger: budgets by tenant, agent, model and provider, checked before every
    live model call (see ``swarmkit.ledger``)."""


SPEC_FREE = frozenset(
    {"session_ids", "journal", "runtime", "tool_runner", "decisions", "lease_ttl", "observers"}
)
"""Fields a run reads but the compiled spec does not hold: changing them needs no compiling."""


def compile_spec(config: SwarmConfig) -> SwarmSpec:
    """Check every setting and compile the swarm; raises ConfigurationError before any call."""
    check_settings(config)
    peers, peer_handoffs = _peers(config.agents)
    entry = _entry_name_of(config.entry_agent, peers)
    if entry not in peers:
        raise ConfigurationError(
            f"entry_agent {entry!r} is not an agent of the swarm; agents: {', '.join(peers)}"
        )
    _check_graph(config.graph, peers)
    _check_interrupts(config.interrupt_before, peers, "interrupt_before")
    _check_interrupts(config.interrupt_after, peers, "interrupt_after")
    resolve = ModelResolver()
    options = PlanOptions(
        peers=peers,
        peer_handoffs=peer_handoffs,
        default_model=resolve.default(config.model),
        llm_edges=_llm_edges(config.graph),
        llm_edge_descriptions=_llm_edge_descriptions(config.graph),
        **_legacy_tool(config.legacy_handoff_tool, config.handoff_tool_name),
    )
    built = {name: build_plan(agent, options, resolve) for name, agent in peers.items()}
    plans = with_models(built, config.models, resolve)
    return SwarmSpec(
        plans=plans,
        entry_agent=entry,
        graph=config.graph,
        peer_handoffs=peer_handoffs,
        max_handoffs=config.max_handoffs,
        detect_cycles=config.detect_cycles,
        max_revisits=config.max_revisits,
        pass_full_history=config.pass_full_history,
        max_turns=config.max_turns,
        on_max_handoffs=config.on_max_handoffs,
        on_max_turns=config.on_max_turns,
        on_cycle=config.on_cycle,
        interrupt_before=frozenset(config.interrupt_before),
        interrupt_after=frozenset(config.interrupt_after),
        interrupt_on_handoff=config.interrupt_on_handoff,
        fingerprint=fingerprint(built, config.graph),
        usage_limits=config.limits,
        run_timeout=check_timeout("run_timeout", config.run_timeout),
        agent_timeout=check_timeout("agent_timeout", config.agent_timeout),
        context_type=config.context_type,
        next_turn=as_next_turn(config.next_turn, tuple(peers)),
        handoffs_per=config.handoffs_per,
        shadow=shadow_graph(config.shadow, peers),
        audit=_check_audit(config.audit),
        ledger=_checked_ledger(config.ledger, plans),
    )


def _llm_edge_descriptions(graph: HandoffGraph | None) -> dict[tuple[str, str], str]:
    """The descriptions the graph's LLM edges give their transfer tools."""
    edges = graph.llm_edges() if graph is not None else ()
    return {(e.source, e.target): e.description for e in edges if e.description is not None}


def with_models(
    plans: Mapping[str, AgentPlan],
    models: Mapping[str, Model | str],
    resolve: ModelResolver | None = None,
) -> dict[str, AgentPlan]:
    """The plans with the given agents' models replaced (the rest of each plan unchanged)."""
    if not isinstance(models, Mapping):
        raise ConfigurationError("models takes a {agent name: Model | model name} dict")
    unknown = sorted(set(models) - set(plans))
    if unknown:
        raise ConfigurationError(
            f"models names agents the swarm does not have: {', '.join(map(str, unknown))}"
        )
    resolve = resolve or ModelResolver()
    replaced = dict(plans)
    for name, model in models.items():
        check_model(model, f"models[{name!r}]")
        replaced[name] = replace(plans[name], model=resolve.default(model) or plans[name].model)
    return replaced


def check_settings(config: SwarmConfig) -> None:
    """The checks of settings that need no peers: each names the keyword to fix."""
    check_model(config.model, "model=")
    check_journal(config.journal)
    _check_limits(
        max_handoffs=config.max_handoffs,
        max_turns=config.max_turns,
        max_revisits=config.max_revisits,
    )
    if config.handoffs_per not in ("run", "conversation"):
        raise ConfigurationError(
            f"handoffs_per must be 'run' or 'conversation', got {config.handoffs_per!r}"
        )
    for name in ("on_max_handoffs", "on_max_turns", "on_cycle"):
        if getattr(config, name) not in _POLICIES:
            raise ConfigurationError(
                f"{name} must be one of {', '.join(_POLICIES)}, got {getattr(config, name)!r}"
            )
    check_usage_limits(config.limits)
    check_context_type(config.context_type)
    _check_lease_ttl(config.lease_ttl)
    check_observers(config.observers)


def check_model(model: object, option: str) -> None:
    """A model setting: a Model, a model name, or None."""
    if model is None or (isinstance(model, str) and model) or isinstance(model, Model):
        return
    raise ConfigurationError(
        f"{option} must be a Model (e.g. OpenAIModel('gpt-4o')), a model name such as "
        f"'gpt-4o', or None; got {type(model).__name__} {short(model)}"
    )


_JOURNAL_TYPES: set[type] = set()
"""Classes that hold every method of ``Journal`` themselves, so each of their instances is one
(a protocol's ``isinstance`` costs some microseconds, and every run checks its journal)."""


def check_journal(journal: object) -> None:
    """A journal setting: a Journal or None (a path is a mistake with a clear fix)."""
    if journal is None or type(journal) in _JOURNAL_TYPES:
        return
    if isinstance(journal, Journal):
        if issubclass(type(journal), Journal):
            _JOURNAL_TYPES.add(type(journal))
        return
    hint = f"SQLiteJournal({journal!r})" if isinstance(journal, str) else "SQLiteJournal(path)"
    raise ConfigurationError(
        f"journal= must be a Journal, e.g. {hint} or InMemoryJournal(); "
        f"got {type(journal).__name__} {short(journal)}"
    )


def _checked_ledger(ledger: object, plans: Mapping[str, AgentPlan]) -> Ledger | None:
    """A ledger setting: None or a Ledger with a price for every model a money budget counts."""
    if ledger is None:
        return None
    if not isinstance(ledger, Ledger):
        raise ConfigurationError(f"ledger must be a swarmkit.Ledger, got {type(ledger).__name__}")
    ledger.check_models(
        (name, str(getattr(plan.model, "name", None) or name), provider_of(plan.model))
        for name, plan in plans.items()
    )
    return ledger


def check_usage_limits(limits: UsageLimits | None) -> UsageLimits | None:
    """A limits setting: a UsageLimits or None."""
    if limits is not None and not isinstance(limits, UsageLimits):
        raise ConfigurationError(f"limits must be a UsageLimits, got {type(limits).__name__}")
    return limits


def short(value: object) -> str:
    """A value's repr, cut to fit an error message."""
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ must not hide the real mistake
        return "(unprintable)"
    return text if len(text) <= 60 else text[:57] + "..."


def fingerprint(plans: Mapping[str, AgentPlan], graph: HandoffGraph | None) -> dict[str, Any]:
    """Digests that say whether a journal was recorded with this configuration."""
    instructions = {n: _describe(p.agent.instructions) for n, p in plans.items()}
    tools = {n: [[s.name, dict(s.parameters)] for s in p.tool_specs] for n, p in plans.items()}
    return {
        "agents": sorted(plans),
        "instructions": _digest(instructions),
        "tools": _digest(tools),
        "graph": _digest(graph.to_dict()) if graph is not None else None,
    }


def _describe(instructions: object) -> str:
    if isinstance(instructions, str):
        return instructions
    return str(getattr(instructions, "__qualname__", repr(instructions)))


def _digest(value: object) -> str:
    import hashlib  # noqa: PLC0415 - only compiling a swarm digests

    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _peers(agents: Members) -> tuple[dict[str, Agent], dict[str, Handoff]]:
    peers: dict[str, Agent] = {}
    configs: dict[str, Handoff] = {}
    for name, entry in _entries(agents):
        agent = entry.agent if isinstance(entry, Handoff) else entry
        if not isinstance(agent, Agent):
            raise ConfigurationError(
                f"swarm member {name!r} must be an Agent (or a Handoff wrapping one), "
                f"got {type(agent).__name__}"
            )
        if name in peers:
            raise ConfigurationError(f"two agents are named {name!r}; agent names must be unique")
        peers[name] = agent if agent.name == name else replace(agent, name=name)
        if isinstance(entry, Handoff):
            configs[name] = entry
    if not peers:
        raise ConfigurationError("a swarm needs at least one agent")
    _add_handoff_targets(peers)
    return peers, configs


def _add_handoff_targets(peers: dict[str, Agent]) -> None:
    """An Agent an agent hands off to joins the swarm, so the peer list need not repeat it."""
    queue = list(peers.values())
    while queue:
        configs = queue.pop().handoff_configs() or ()
        for target in (h.agent for h in configs):
            if isinstance(target, Agent) and target.name not in peers:
                peers[target.name] = target
                queue.append(target)


def _entry_name_of(entry: str | Agent, peers: Mapping[str, Agent]) -> str:
    if not isinstance(entry, Agent):
        return entry
    for name, peer in peers.items():
        if peer is entry:
            return name
    return entry.name


def _entries(agents: Members) -> list[tuple[str, Agent | Handoff]]:
    if isinstance(agents, Mapping):
        return list(agents.items())
    if isinstance(agents, str) or not isinstance(agents, Sequence):
        raise ConfigurationError("agents must be a list of Agent or a {name: Agent | Handoff} dict")
    return [(_entry_name(entry), entry) for entry in agents]


def _entry_name(entry: object) -> str:
    if isinstance(entry, Agent):
        return entry.name
    if isinstance(entry, Handoff) and isinstance(entry.agent, Agent):
        return entry.agent.name
    raise ConfigurationError(
        f"agents must be Agent or Handoff(agent=Agent(...)) objects, got {entry!r}"
    )


def _check_limits(**limits: int) -> None:
    for name, value in limits.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigurationError(f"{name} must be an int >= 0, got {value!r}")
    if limits["max_turns"] < 1:
        raise ConfigurationError("max_turns must be at least 1: the entry agent needs one call")


def _check_graph(graph: HandoffGraph | None, peers: Mapping[str, Agent]) -> None:
    if graph is None:
        return
    if not isinstance(graph, HandoffGraph):
        raise ConfigurationError(f"graph must be a HandoffGraph, got {type(graph).__name__}")
    unknown = [node for node in graph.nodes() if node not in peers]
    if unknown:
        raise ConfigurationError(
            f"the graph names agents the swarm does not have: {', '.join(unknown)}"
        )


def _check_audit(audit: object) -> RuleAudit | None:
    if audit is None or isinstance(audit, RuleAudit):
        return audit
    raise ConfigurationError(f"audit takes a RuleAudit, got {type(audit).__name__}")


def _llm_edges(graph: HandoffGraph | None) -> dict[str, tuple[str, ...]]:
    """Each agent's LLM edges in the graph: the handoffs it declares for the agent."""
    edges: dict[str, tuple[str, ...]] = {}
    for edge in graph.llm_edges() if graph is not None else ():
        edges[edge.source] = (*edges.get(edge.source, ()), edge.target)
    return edges


def _check_interrupts(names: Collection[str], peers: Mapping[str, Agent], option: str) -> None:
    if isinstance(names, str):
        raise ConfigurationError(f"{option} takes a list of agent names, not one string")
    unknown = sorted(set(names) - set(peers))
    if unknown:
        raise ConfigurationError(f"{option} names unknown agents: {', '.join(unknown)}")


def _check_lease_ttl(ttl: float) -> None:
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        raise ConfigurationError(f"lease_ttl must be a positive number of seconds, got {ttl!r}")


def check_observers(observers: Sequence[EventObserver], *, one_by_one: bool = False) -> None:
    """ConfigurationError unless ``observers`` is a sequence of callables; ``one_by_one`` for
    ``with_observers(*observers)``, whose callers pass a list whole by mistake."""
    if isinstance(observers, str) or not isinstance(observers, Sequence):
        raise ConfigurationError("observers takes a list of event observers (e.g. [traced])")
    for observer in observers:
        if not callable(observer):
            hint = (
                ": pass them one by one, with_observers(*observers)"
                if one_by_one and isinstance(observer, list | tuple)
                else ": pass a function that takes a run's events and yields them on"
            )
            raise ConfigurationError(f"observer {observer!r:.80} is not callable{hint}")


def _legacy_tool(legacy: bool | None, name: str | None) -> dict[str, Any]:
    # jeevesagent code names its single handoff tool with handoff_tool_name; naming it asks for it.
    if legacy is False and name is not None:
        raise ConfigurationError(
            f"handoff_tool_name={name!r} names the single legacy handoff tool, which "
            "legacy_handoff_tool=False turns off; drop one of the two"
        )
    return {
        "legacy_handoff_tool": bool(legacy) or name is not None,
        "handoff_tool_name": name or "handoff",
    }
