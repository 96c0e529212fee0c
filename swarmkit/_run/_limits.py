"""The limits on a run's handoffs and model calls: caps, budgets, cycles, and their policies."""

from __future__ import annotations

from collections.abc import Callable

from swarmkit._run._state import RunState, StopRun
from swarmkit.events import RefusalReason
from swarmkit.exceptions import HandoffCycleError, MaxHandoffsExceeded, MaxTurnsExceeded
from swarmkit.plan import AgentPlan
from swarmkit.spec import SwarmSpec


def may_hand_off(
    swarm: SwarmSpec,
    state: RunState,
    plan: AgentPlan,
    *,
    had_options: bool | Callable[[], bool],
) -> bool:
    """Whether the agent may still hand off.

    When the cap says no, it records that the cap shaped the run only if it withheld something
    the agent would otherwise have had: ``had_options`` (asked lazily when it is a function),
    and a handoff budget that was not used up anyway.
    """
    budget = plan.agent.handoff_budget
    within_budget = budget is None or state.trail.used_by_agent[plan.name] < budget
    if handoffs_made(swarm, state) >= swarm.max_handoffs:
        if within_budget and not state.limited.handoffs:
            state.limited.handoffs = had_options() if callable(had_options) else had_options
        return False
    return within_budget


def allowed_targets(swarm: SwarmSpec, state: RunState, plan: AgentPlan) -> frozenset[str]:
    """The peers the agent is offered transfer tools for right now."""
    targets = frozenset(plan.handoff_configs)
    if state.limited.cycle:
        # After a refused cycle, stop offering the way back to agents already on the trail.
        targets = frozenset(t for t in targets if not closes_cycle(swarm, state, t))
    if not may_hand_off(swarm, state, plan, had_options=bool(targets)):
        return frozenset()
    return targets


def closes_cycle(swarm: SwarmSpec, state: RunState, target: str) -> bool:
    """Whether entering ``target`` again would exceed its allowed revisits."""
    visits = state.trail.visits[target]
    if swarm.handoffs_per == "conversation" and state.start is not None:
        visits += state.start.spent.visits.get(target, 0)
    return visits > swarm.max_revisits


def handoffs_made(swarm: SwarmSpec, state: RunState) -> int:
    """Handoffs counted against ``max_handoffs``: this run's, and with ``handoffs_per=
    "conversation"`` the earlier turns' too."""
    made = state.handoff_count
    if swarm.handoffs_per == "conversation" and state.start is not None:
        made += state.start.spent.handoffs
    return made


def refusal(
    swarm: SwarmSpec, state: RunState, plan: AgentPlan, target: str, *, continuation: bool = False
) -> tuple[RefusalReason, str] | None:
    """Why a handoff from ``plan`` to ``target`` must be refused, or None when it may happen."""
    if target == plan.name:
        return "self", f"agent {target!r} cannot hand off to itself"
    if target not in swarm.plans:
        known = ", ".join(sorted(swarm.plans))
        return "unknown_agent", f"there is no agent {target!r}; known agents: {known}"
    if handoffs_made(swarm, state) >= swarm.max_handoffs:
        state.limited.handoffs = True
        whose = "conversation" if swarm.handoffs_per == "conversation" else "run"
        return "max_handoffs", (
            f"the {whose} has used all {swarm.max_handoffs} handoffs (max_handoffs); "
            "answer the user yourself"
        )
    budget = plan.agent.handoff_budget
    spent = budget is not None and state.trail.used_by_agent[plan.name] >= budget
    if spent and not continuation:
        return "budget", f"agent {plan.name!r} has used its handoff budget of {budget}"
    if swarm.detect_cycles and closes_cycle(swarm, state, target):
        state.limited.cycle = True
        path = " -> ".join([*state.trail.agents, target])
        return "cycle", f"handing off to {target!r} would close a cycle ({path})"
    return None


def apply_refusal_policy(
    swarm: SwarmSpec, state: RunState, reason: RefusalReason, target: str
) -> None:
    """Stop or raise when the swarm's policy for this refusal says so; "finish" goes on."""
    if reason == "cycle" and swarm.on_cycle == "error":
        cycle = [*state.trail.agents[state.trail.agents.index(target) :], target]
        raise HandoffCycleError(
            f"handoff cycle {' -> '.join(cycle)}; allow loops with max_revisits= "
            "or use on_cycle='finish'",
            trail=state.trail.agents,
            session_id=state.session_id,
            cycle=cycle,
        )
    if reason == "max_handoffs" and swarm.on_max_handoffs == "error":
        raise MaxHandoffsExceeded(
            f"the run asked for more than max_handoffs={swarm.max_handoffs} handoffs",
            trail=state.trail.agents,
            session_id=state.session_id,
        )
    if reason == "cycle" and swarm.on_cycle == "stop":
        raise StopRun("cycle")
    if reason == "max_handoffs" and swarm.on_max_handoffs == "stop":
        raise StopRun("max_handoffs")


def check_turn_budget(swarm: SwarmSpec, state: RunState) -> None:
    """Before a model call: stop or raise when max_turns calls were made already."""
    if state.budget.turns < swarm.max_turns:
        return
    state.limited.turns = True
    if swarm.on_max_turns == "error":
        raise MaxTurnsExceeded(
            f"the run used all {swarm.max_turns} model calls (max_turns) without an "
            "answer; raise max_turns or use on_max_turns='finish'",
            trail=state.trail.agents,
            session_id=state.session_id,
        )
    raise StopRun("max_turns")


def must_answer(swarm: SwarmSpec, state: RunState) -> bool:
    """Whether the next model call is the last max_turns allows and must answer (then the cap
    shaped the run)."""
    if state.budget.turns + 1 < swarm.max_turns or swarm.on_max_turns != "finish":
        return False
    state.limited.turns = True
    return True


def continuation(state: RunState, plan: AgentPlan) -> str | None:
    """The ``then`` agent of an agent whose handoff budget is spent, if it has one."""
    agent = plan.agent
    budget = agent.handoff_budget
    if agent.then is None or budget is None or state.trail.used_by_agent[plan.name] < budget:
        return None
    return agent.then
