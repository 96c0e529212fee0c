"""Shadow rules on a turn the model decides: judged before the call, journaled after it."""

from __future__ import annotations

from swarmkit._run._handoff import is_handoff_call
from swarmkit._run._parts import RunParts
from swarmkit._run._replies import candidate_target
from swarmkit._run._state import Candidate, rule_state
from swarmkit.graph import Edge
from swarmkit.models import ModelResponse
from swarmkit.plan import AgentPlan
from swarmkit.shadow import SHADOW_RECORD, shadow_data

Trials = list[tuple[Edge, bool]]
"""Each shadow rule out of the active agent, with whether its condition held."""


def judge(run: RunParts, plan: AgentPlan) -> Trials | None:
    """Each shadow rule's verdict on the rule state the graph sees before this model call;
    None when the agent has no shadow rules (the common case costs one lookup)."""
    graph = run.swarm.shadow
    if graph is None or plan.name not in graph:
        return None
    edges = graph.compiled_edges(plan.name)
    if not edges:
        return None
    state = rule_state(run.state)
    return [(edge, condition is None or condition(state)) for edge, condition in edges]


async def journal(run: RunParts, plan: AgentPlan, trials: Trials, response: ModelResponse) -> None:
    """Journal the verdicts beside the model's decision (a strict replay checks them)."""
    data = shadow_data(plan.name, run.state.budget.turns, trials, model_target(plan, response))
    await run.tape.note(SHADOW_RECORD, data)


def model_target(plan: AgentPlan, response: ModelResponse) -> str | None:
    """The agent the model asked to hand off to (its first handoff call), or None."""
    for call in response.message.tool_calls:
        if is_handoff_call(plan, call):
            return candidate_target(plan, Candidate(call=call, decided_by="llm"))
    return None
