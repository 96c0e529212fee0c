"""Shadow rules on a turn the model decides: judged before the call, journaled after it.

A model-decided turn is the hot path, so each agent's shadow rules are prepared once per graph
(their compiled tests, targets and names), and a turn journals only the indices of the rules
that fired and agreed beside the names' one shared list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from swarmkit._run._handoff import is_handoff_call
from swarmkit._run._parts import RunParts
from swarmkit._run._replies import candidate_target
from swarmkit._run._state import RESERVED_KEY, Candidate, rule_state
from swarmkit.conditions import Condition
from swarmkit.graph import Edge, HandoffGraph
from swarmkit.models import ModelResponse
from swarmkit.plan import AgentPlan
from swarmkit.shadow import SHADOW_RECORD, legacy_shadow_data, rule_name


@dataclass(frozen=True, slots=True)
class _AgentRules:
    """One agent's shadow rules, in evaluation order, ready to judge."""

    edges: tuple[Edge, ...]
    conditions: tuple[Condition | None, ...]
    tests: tuple[Callable[[Any], object], ...]
    targets: tuple[str, ...]
    names: list[str]
    """The rules' names, one list shared by every record (nothing mutates it)."""
    reads_facts: bool
    """Whether a rule reads the loop's facts (``swarm.*``): else the context is the state."""


@dataclass(frozen=True, slots=True)
class Trials:
    """Each shadow rule out of the active agent, with the indices of those that held."""

    rules: _AgentRules
    fired: list[int]


_PREPARED: WeakKeyDictionary[HandoffGraph, dict[str, _AgentRules | None]] = WeakKeyDictionary()


def judge(run: RunParts, plan: AgentPlan) -> Trials | None:
    """Each shadow rule's verdict on the rule state the graph sees before this model call;
    None when the agent has no shadow rules (the common case costs one lookup), or when no
    journal keeps the verdicts (a run with no journal judges nothing)."""
    graph = run.swarm.shadow
    if graph is None or not run.tape.keeps_records:
        return None
    rules = _prepared(graph, plan.name)
    if rules is None:
        return None
    context = run.state.context
    # Rules that read only the context see it as it is: the rule state would copy it.
    state = context if type(context) is dict and not rules.reads_facts else rule_state(run.state)
    try:
        # The compiled tests straight on the state (a dict): a condition's own call adds a
        # check and a frame per rule. Anything odd in the state takes the careful path.
        fired = [index for index, test in enumerate(rules.tests) if test(state)]
    except Exception:
        fired = [
            index
            for index, condition in enumerate(rules.conditions)
            if condition is None or condition(state)
        ]
    return Trials(rules, fired)


async def journal(run: RunParts, plan: AgentPlan, trials: Trials, response: ModelResponse) -> None:
    """Journal the verdicts beside the model's decision, compactly (a strict replay checks
    them; replaying a journal of the older form writes and checks that form)."""
    chosen = model_target(plan, response)
    rules, fired, turn = trials.rules, trials.fired, run.state.budget.turns
    held = run.tape.held(SHADOW_RECORD)
    if held is not None and held.data is not None and "verdicts" in held.data:
        held_trials = [(edge, index in fired) for index, edge in enumerate(rules.edges)]
        await run.tape.note(SHADOW_RECORD, legacy_shadow_data(plan.name, turn, held_trials, chosen))
        return
    targets = rules.targets
    data = {
        "agent": plan.name,
        "turn": turn,
        "model_target": chosen,
        "tokens": response.usage.total_tokens,
        "rules": rules.names,
        "fired": fired,
        "agrees": [index for index in fired if targets[index] == chosen],
    }
    await run.tape.note(SHADOW_RECORD, data)


def model_target(plan: AgentPlan, response: ModelResponse) -> str | None:
    """The agent the model asked to hand off to (its first handoff call), or None."""
    for call in response.message.tool_calls:
        if is_handoff_call(plan, call):
            return candidate_target(plan, Candidate(call=call, decided_by="llm"))
    return None


def _prepared(graph: HandoffGraph, agent: str) -> _AgentRules | None:
    by_agent = _PREPARED.get(graph)
    if by_agent is None:
        by_agent = _PREPARED[graph] = {}
    if agent not in by_agent:
        by_agent[agent] = _prepare(graph, agent)
    return by_agent[agent]


def _prepare(graph: HandoffGraph, agent: str) -> _AgentRules | None:
    edges = graph.compiled_edges(agent) if agent in graph else []
    if not edges:
        return None
    conditions = tuple(condition for _, condition in edges)
    return _AgentRules(
        edges=tuple(edge for edge, _ in edges),
        conditions=conditions,
        tests=tuple(_always if c is None else c._test for c in conditions),
        targets=tuple(edge.target for edge, _ in edges),
        names=[rule_name(edge) for edge, _ in edges],
        reads_facts=any(c is not None and RESERVED_KEY in c.roots for c in conditions),
    )


def _always(state: object) -> bool:
    return True
