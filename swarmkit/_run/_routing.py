"""Before the model is asked: a spent budget's ``then`` agent, then the handoff graph's rules."""

from __future__ import annotations

from swarmkit import events as ev
from swarmkit._run import _replies as replies
from swarmkit._run._audit import rule_stands
from swarmkit._run._handoff import refuse, try_handoff
from swarmkit._run._limits import continuation, may_hand_off
from swarmkit._run._mapping import mapped_payload
from swarmkit._run._parts import RunParts
from swarmkit._run._state import rule_state
from swarmkit._run._steps import Continued, HandedOff, HandoffOutcome, Refused
from swarmkit.exceptions import HandoffPayloadError
from swarmkit.graph import Edge
from swarmkit.handoffs import HandoffRequest
from swarmkit.plan import AgentPlan
from swarmkit.result import RuleDecision


def routes(run: RunParts, plan: AgentPlan) -> bool:
    """Whether anything but the model may decide this step (a budget's ``then``, or rules)."""
    return plan.agent.then is not None or has_rules(run, plan)


async def route(run: RunParts, plan: AgentPlan) -> HandedOff | Continued:
    """A spent budget's continuation, else the rules; ``Continued`` leaves it to the model."""
    before = await continue_when_spent(run, plan)
    if isinstance(before, HandedOff) or not has_rules(run, plan):
        return before
    after = await consult_rules(run, plan)
    if not before.events:
        return after
    events = (*before.events, *after.events)
    return HandedOff(after.record, events) if isinstance(after, HandedOff) else Continued(events)


async def continue_when_spent(run: RunParts, plan: AgentPlan) -> HandedOff | Continued:
    """An agent whose handoff budget is spent continues to its ``then`` agent."""
    target = continuation(run.state, plan)
    if target is None:
        return Continued()
    request = HandoffRequest(target=target, payload=None, message=None)
    outcome = await try_handoff(run, plan, request, "budget")
    if isinstance(outcome, Refused):
        return Continued((outcome.event,))
    return outcome


def has_rules(run: RunParts, plan: AgentPlan) -> bool:
    """Whether the graph has rules out of this agent."""
    graph = run.swarm.graph
    return graph is not None and plan.name in graph and bool(graph.edges(plan.name))


async def consult_rules(run: RunParts, plan: AgentPlan) -> HandedOff | Continued:
    """The first rule whose condition holds hands off with no model call; none: the model
    decides."""
    graph, state = run.swarm.graph, run.state
    if graph is None or not has_rules(run, plan):
        return Continued()
    if not may_hand_off(
        run.swarm,
        state,
        plan,
        had_options=lambda: graph.route_edge(plan.name, rule_state(state)) is not None,
    ):
        return Continued()
    edge = graph.route_edge(plan.name, rule_state(state))
    if edge is None:
        return Continued((ev.RuleEvaluated(agent=plan.name, target=None, condition=None),))
    stands, audited = await rule_stands(run, plan, edge)
    evaluated = ev.RuleEvaluated(
        agent=plan.name,
        target=edge.target,
        condition=edge.when,
        audited=audited is not None,
        audit_choice=audited.choice if audited else None,
        audit_replayed=audited.replayed if audited else False,
    )
    if not stands:
        return Continued((evaluated,))
    outcome = await _follow(run, plan, edge)
    if isinstance(outcome, HandedOff):
        return HandedOff(outcome.record, (evaluated, *outcome.events))
    return Continued((evaluated, outcome.event))


async def _follow(run: RunParts, plan: AgentPlan, edge: Edge) -> HandoffOutcome:
    """Journal the rule that fired, then try its handoff; the decision joins the result."""
    turn = run.state.budget.turns
    # Journaled before the handoff it causes, so the journal reads in the order of events.
    fired = {"agent": plan.name, "target": edge.target, "condition": edge.when, "turn": turn}
    await run.tape.note("rule", fired)
    request = _rule_request(run, plan, edge)
    outcome: HandoffOutcome
    if isinstance(request, HandoffPayloadError):
        # The mapped payload does not validate: recorded, and the model decides instead.
        outcome = Refused(
            await refuse(run, plan, edge.target, "rule", reason="payload", detail=str(request))
        )
    else:
        outcome = await try_handoff(run, plan, request, "rule", condition=edge.when)
    decision = RuleDecision(
        agent=plan.name,
        target=edge.target,
        condition=edge.when,
        turn=turn,
        performed=isinstance(outcome, HandedOff),
    )
    run.state.trail.follow_rule(decision)
    return outcome


def _rule_request(
    run: RunParts, plan: AgentPlan, edge: Edge
) -> HandoffRequest | HandoffPayloadError:
    if edge.input_mapping is None:
        return HandoffRequest(target=edge.target, payload=None, message=None)
    payload = mapped_payload(edge.input_mapping, run.state)
    return replies.goto_request(plan, "", edge.target, payload)
