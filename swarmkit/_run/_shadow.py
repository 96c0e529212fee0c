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
from swarmkit.journal import Journal
from swarmkit.models import ModelResponse
from swarmkit.plan import AgentPlan
from swarmkit.shadow import (
    RULE_SET,
    SHADOW_RECORD,
    legacy_shadow_data,
    log_rule_change,
    read_rules_log,
    rule_name,
    rule_set_digest,
    rule_sets,
)


@dataclass(frozen=True, slots=True)
class _AgentRules:
    """One agent's shadow rules, in evaluation order, ready to judge."""

    agent: str
    edges: tuple[Edge, ...]
    conditions: tuple[Condition | None, ...]
    tests: tuple[Callable[[Any], object], ...]
    targets: tuple[str, ...]
    names: list[str]
    """The rules' names, one list shared by every record (nothing mutates it)."""
    digest: str
    """What a compact verdict names the list by, once the rules log holds its names."""
    reads_facts: bool
    """Whether a rule reads the loop's facts (``swarm.*``): else the context is the state."""


@dataclass(frozen=True, slots=True)
class Trials:
    """Each shadow rule out of the active agent, with the indices of those that held."""

    rules: _AgentRules
    fired: list[int]


_PREPARED: WeakKeyDictionary[HandoffGraph, dict[str, _AgentRules | None]] = WeakKeyDictionary()
_NAMED: WeakKeyDictionary[Journal, set[str]] = WeakKeyDictionary()
"""The rule lists each journal's rules log is known (by this process) to name."""


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
    """Journal the verdicts beside the model's decision, compactly: the rule list by its
    digest once the journal's rules log names it, else by its names. A strict replay writes
    the form the journal holds (the older one included) and checks it."""
    chosen = model_target(plan, response)
    rules, fired, turn = trials.rules, trials.fired, run.state.budget.turns
    held = run.tape.held(SHADOW_RECORD)
    if held is not None and held.data is not None:  # replayed: in the form journaled
        if "verdicts" in held.data:
            held_trials = [(edge, index in fired) for index, edge in enumerate(rules.edges)]
            data = legacy_shadow_data(plan.name, turn, held_trials, chosen)
            await run.tape.note(SHADOW_RECORD, data)
            return
        named = "set" in held.data
    else:
        named = await _named(run, rules)
    targets = rules.targets
    data = {
        "agent": plan.name,
        "turn": turn,
        "model_target": chosen,
        "tokens": response.usage.total_tokens,
        **({"set": rules.digest} if named else {"rules": rules.names}),
        "fired": fired,
        "agrees": [index for index in fired if targets[index] == chosen],
    }
    await run.tape.note(SHADOW_RECORD, data)


async def _named(run: RunParts, rules: _AgentRules) -> bool:
    """Whether the rules log of the journal this run writes names the list (it is written
    there the first time, once per process and journal); False with no such journal."""
    store = run.tape.store
    if store is None:
        return False
    try:
        known = _NAMED.get(store)
        if known is None:
            known = _NAMED[store] = set()
    except TypeError:  # a store of one's own that cannot be weakly referenced
        return False
    if rules.digest not in known:
        if rules.digest not in rule_sets(await read_rules_log(store, rule_lists=True)):
            data = {"set": rules.digest, "agent": rules.agent, "rules": rules.names}
            await log_rule_change(store, RULE_SET, data, at=run.seams.runtime.clock())
        known.add(rules.digest)
    return True


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
    names = [rule_name(edge) for edge, _ in edges]
    return _AgentRules(
        agent=agent,
        edges=tuple(edge for edge, _ in edges),
        conditions=conditions,
        tests=tuple(_always if c is None else c._test for c in conditions),
        targets=tuple(edge.target for edge, _ in edges),
        names=names,
        digest=rule_set_digest(agent, names),
        reads_facts=any(c is not None and RESERVED_KEY in c.roots for c in conditions),
    )


def _always(state: object) -> bool:
    return True
