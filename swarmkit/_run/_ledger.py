"""A run's model calls against the swarm's spend ledger: reserve before, settle after."""

from __future__ import annotations

from typing import Any

from swarmkit._run._parts import RunParts
from swarmkit.ledger import Refused, Reservation
from swarmkit.limits import LimitBreach
from swarmkit.models import ModelRequest, Usage, provider_of
from swarmkit.plan import AgentPlan


async def reserve(run: RunParts, plan: AgentPlan, request: ModelRequest) -> LimitBreach | None:
    """Hold the call's estimate in every budget that applies; the breach when one has no room
    (then nothing is held and the call must not be made)."""
    ledger = run.swarm.ledger
    assert ledger is not None
    state = run.state
    facts = {
        "tenant": ledger.tenant_of(state.context),
        "agent": plan.name,
        "model": str(getattr(plan.model, "name", None) or plan.name),
        "provider": provider_of(plan.model),
    }
    outcome = await ledger.reserve(
        session_id=state.session_id, facts=facts, estimate=ledger.estimate(request)
    )
    if isinstance(outcome, Refused):
        return _breach(outcome, plan.name)
    state.budget.reservation = outcome
    return None


async def settle(run: RunParts, usage: Usage) -> None:
    """Charge the call under way its real usage (nothing when no hold is open)."""
    ledger, reservation = run.swarm.ledger, run.state.budget.reservation
    if ledger is None or reservation is None:
        return
    run.state.budget.reservation = None
    await ledger.settle(reservation, usage)


def hold_data(held: Reservation) -> dict[str, Any]:
    """The hold as a model call's event carries it (and traces show it)."""
    return {
        "reservation": held.id,
        "estimate_tokens": held.estimate.total_tokens,
        "budgets": [hold.key for hold in held.holds],
    }


def _breach(refused: Refused, agent: str) -> LimitBreach:
    scope = f" ({refused.scope})" if refused.scope else ""
    message = (
        f"budget {refused.budget!r}{scope} for {refused.period} has no room: "
        f"{refused.spent:g} of {refused.limit:g} {refused.unit} spent or held, "
        f"the next call needs about {refused.needed:g}"
    )
    return LimitBreach(
        limit="budget",
        allowed=refused.limit,
        used=refused.spent,
        agent=agent,
        message=message,
        budget=f"{refused.budget}|{refused.scope}|{refused.period}",
    )
