"""Which tools and handoffs an agent is offered this turn, by their ``available_when`` rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from swarmkit._run._state import RunState, rule_state
from swarmkit.conditions import Condition
from swarmkit.events import RefusalReason
from swarmkit.plan import AgentPlan
from swarmkit.result import DecidedBy


@dataclass(frozen=True, kw_only=True, slots=True)
class Withheld:
    """What ``available_when`` rules take away from an agent on one turn."""

    tools: frozenset[str] = frozenset()
    """Function tools not offered (a call to one is refused with a tool result)."""
    targets: frozenset[str] = frozenset()
    """Peers the agent is offered no transfer to (a call is a handoff refused as not offered)."""


NOTHING_WITHHELD = Withheld()
"""The common case: no rule takes anything away."""


def withheld(plan: AgentPlan, state: RunState) -> Withheld:
    """Evaluate the agent's ``available_when`` rules on the state the HandoffGraph sees."""
    tools = [(n, t.condition) for n, t in plan.tools.items() if t.condition is not None]
    handoffs = [(n, h.condition) for n, h in plan.handoff_configs.items() if h.condition]
    if not tools and not handoffs:
        return NOTHING_WITHHELD
    seen = rule_state(state)
    hidden = frozenset(name for name, condition in tools if not _holds(condition, seen))
    targets = frozenset(name for name, condition in handoffs if not _holds(condition, seen))
    return Withheld(tools=hidden, targets=targets)


def not_offered(
    state: RunState, target: str, decided_by: DecidedBy
) -> tuple[RefusalReason, str] | None:
    """Why the model's handoff to ``target`` is refused: its offer's rule was false this turn."""
    if decided_by != "llm" or target not in state.offer.withheld_targets:
        return None
    return "not_offered", f"the handoff to {target!r} was not offered on this turn"


def _holds(condition: Condition | None, seen: dict[str, Any]) -> bool:
    return condition is None or condition(seen)
