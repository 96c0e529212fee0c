"""SwarmSpec: the compiled swarm a run loop drives, and the seams it reaches the world through."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from swarmkit.conversation import NextTurn
from swarmkit.events import Event
from swarmkit.graph import HandoffGraph
from swarmkit.handoffs import Handoff
from swarmkit.interrupts import DecisionSource
from swarmkit.journal import Journal
from swarmkit.ledger import Ledger
from swarmkit.limits import Spend, UsageLimits
from swarmkit.plan import AgentPlan
from swarmkit.runtime import Runtime
from swarmkit.shadow import RuleAudit
from swarmkit.tools import ToolRunner

LimitPolicy = Literal["finish", "stop", "error"]
"""What a limit does: let the agent answer without handoffs, stop at once, or raise."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SwarmSpec:
    """Everything about a swarm that a run reads and never changes; built once by ``Swarm``."""

    plans: Mapping[str, AgentPlan]
    """Each agent's compiled plan (model, tools, transfer tools), by name."""
    entry_agent: str
    """The agent that takes the first turn."""
    graph: HandoffGraph | None
    """Rules consulted before each model call."""
    peer_handoffs: Mapping[str, Handoff]
    """Swarm-level Handoff configs of peers, by name."""
    max_handoffs: int
    """Handoffs a run may perform."""
    detect_cycles: bool
    """Whether returning to an agent on the trail is a cycle."""
    max_revisits: int
    """How often an agent may be entered again before it counts as a cycle."""
    pass_full_history: bool
    """Whether a receiving agent without a filter sees the whole history."""
    max_turns: int
    """Model calls a run may make."""
    on_max_handoffs: LimitPolicy
    """What reaching ``max_handoffs`` does."""
    on_max_turns: LimitPolicy
    """What reaching ``max_turns`` does."""
    on_cycle: LimitPolicy
    """What a detected cycle does."""
    interrupt_before: frozenset[str]
    """Agents a run pauses before entering."""
    interrupt_after: frozenset[str]
    """Agents a run pauses after, when they answer or hand off."""
    interrupt_on_handoff: bool
    """Whether every handoff pauses for a decision."""
    fingerprint: Mapping[str, Any]
    """Digests of the configuration that runs record."""
    usage_limits: UsageLimits | None = None
    """What a run may spend: model calls, tokens, tool calls, cost."""
    run_timeout: float | None = None
    """Seconds on the run's clock a run (or each resumed part of it) may take."""
    agent_timeout: float | None = None
    """Seconds on the run's clock one agent's stay may take."""
    context_type: type[BaseModel] | None = None
    """The Pydantic model the context validates against, when the swarm declares one."""
    next_turn: NextTurn = field(default_factory=NextTurn)
    """Who answers a conversation's next user message."""
    handoffs_per: Literal["run", "conversation"] = "run"
    """What ``max_handoffs`` and cycle detection count over: the run, or the conversation."""
    shadow: HandoffGraph | None = None
    """Rules judged beside the model on the turns it decides, journaled, never followed."""
    audit: RuleAudit | None = None
    """How the graph's active rules are audited against the model (None: never)."""
    ledger: Ledger | None = None
    """The spend ledger every live model call reserves its estimate in."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SubRun:
    """What a delegation tool call asks a Delegator to run."""

    agent: str
    """The agent that answers."""
    task: str
    """Its prompt: the call's ``input``."""
    session_id: str
    """The sub-run's session id."""
    context: Mapping[str, Any]
    """A copy of the delegating run's context."""
    spend: Spend
    """The sub-run's call counts, chained to the delegating run's (usage limits are shared)."""
    streaming: bool = False
    """Whether the delegating run streams text deltas (the sub-run then does too)."""
    quiet: bool = False
    """Whether only the result is read (the sub-run builds no per-step events)."""
    replay_only: bool = False
    """The delegating run's journal already holds the outcome: replay the journaled sub-run
    for its events only (nothing if it is not in the journal), never calling anything."""


class Delegator(Protocol):
    """Runs a sub-run for a delegation tool call: its events, ending with RunFinished."""

    def __call__(self, sub: SubRun) -> AsyncGenerator[Event, None]:
        """Run (or resume, or replay) ``sub.agent`` on ``sub.task`` as ``sub.session_id``."""
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class RunSeams:
    """How one run reaches the world beyond its model: the loop sees nothing else."""

    runtime: Runtime
    """Ids, clock, sleep and randomness."""
    tool_runner: ToolRunner
    """Runs every function tool call."""
    decisions: DecisionSource
    """Decides a pause point the journal has no decision for."""
    deps: Any = None
    """The caller's Python objects for tools and instructions; never journaled."""
    delegate: Delegator | None = None
    """Runs the sub-runs of delegation tools (``agent.as_tool()``); None offers none."""
    rules_log: Journal | None = None
    """The journal whose rules log an audited run reads (demotions) and writes (audits)."""
