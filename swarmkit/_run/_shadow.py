"""Shadow rules on a turn the model decides: judged before the call, journaled after it.

A model-decided turn is the hot path, so each agent's shadow rules are prepared once per graph:
their compiled tests, and every verdict a rule can give already built (not fired; fired and
disagreeing; fired and agreeing), so a turn evaluates the conditions and picks verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from swarmkit._run._handoff import is_handoff_call
from swarmkit._run._parts import RunParts
from swarmkit._run._replies import candidate_target
from swarmkit._run._state import Candidate, rule_state
from swarmkit.conditions import Condition
from swarmkit.graph import HandoffGraph
from swarmkit.models import ModelResponse
from swarmkit.plan import AgentPlan
from swarmkit.shadow import SHADOW_RECORD, rule_name


@dataclass(frozen=True, slots=True)
class _AgentRules:
    """One agent's shadow rules, in evaluation order, ready to judge."""

    conditions: tuple[Condition | None, ...]
    tests: tuple[Callable[[Any], object], ...]
    targets: tuple[str, ...]
    verdicts: tuple[tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]], ...]


@dataclass(frozen=True, slots=True)
class Trials:
    """Each shadow rule out of the active agent, with whether its condition held."""

    rules: _AgentRules
    fired: list[bool]


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
    state = rule_state(run.state)
    try:
        # The compiled tests straight on the state (a dict): a condition's own call adds a
        # check and a frame per rule. Anything odd in the state takes the careful path.
        fired = [bool(test(state)) for test in rules.tests]
    except Exception:
        fired = [condition is None or condition(state) for condition in rules.conditions]
    return Trials(rules, fired)


async def journal(run: RunParts, plan: AgentPlan, trials: Trials, response: ModelResponse) -> None:
    """Journal the verdicts beside the model's decision (a strict replay checks them)."""
    chosen = model_target(plan, response)
    rules = trials.rules
    verdicts = [
        (kinds[2] if target == chosen else kinds[1]) if fired else kinds[0]
        for fired, target, kinds in zip(trials.fired, rules.targets, rules.verdicts, strict=True)
    ]
    data = {
        "agent": plan.name,
        "turn": run.state.budget.turns,
        "model_target": chosen,
        "verdicts": verdicts,
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
    verdicts = []
    for edge, _ in edges:
        name, target = rule_name(edge), edge.target
        verdicts.append(
            tuple(
                {"rule": name, "target": target, "fired": fired, "agrees": agrees}
                for fired, agrees in ((False, False), (True, False), (True, True))
            )
        )
    return _AgentRules(
        conditions=tuple(condition for _, condition in edges),
        tests=tuple(_always if c is None else c._test for _, c in edges),
        targets=tuple(edge.target for edge, _ in edges),
        verdicts=tuple(verdicts),  # type: ignore[arg-type]
    )


def _always(state: object) -> bool:
    return True
