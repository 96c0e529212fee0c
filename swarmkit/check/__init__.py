"""``swarm.check()``: what a swarm's configuration gets wrong, found before the first paid call.

It reads the configuration only (agents, handoffs, tools, the HandoffGraph, limits,
``context_type``), never a model or a journal. Conditions are analysed on their syntax tree
(``_satisfiable``), against the declared context and the ``swarm.*`` facts (``_conditions``);
the graph of rule edges and transfer tools is walked for dead edges, forced cycles and
agents nothing reaches (``_graph``); leaf agents left to the default offer of every peer are
warned about (``_leaves``).

What it cannot know: what tools write into the context (a ``ToolResult(update=...)`` may add
a key the context_type lacks, or a value of another type) or where a ``ToolResult(goto=...)``
leads; which conditions hold for the states real runs reach (only that none could, or all
would); what a rule's input_mapping reads (the last tool's output first, so its types are
not checked, only that it names the input type's required fields and no others);
contradictions that need arithmetic, relations between two paths (``a < b and b < a``),
or more ``or`` branch combinations inside one ``and`` than ``_satisfiable`` expands; and
what a model will choose.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Protocol

from pydantic import BaseModel

from swarmkit.check._conditions import Scope, comparison_findings, path_findings
from swarmkit.check._facts import swarm_facts
from swarmkit.check._finding import Finding, Severity
from swarmkit.check._graph import (
    EdgeVerdict,
    dead_edge_findings,
    forced_cycle_findings,
    shadowing,
    unreachable_findings,
)
from swarmkit.check._leaves import leaf_findings
from swarmkit.check._mapping import mapping_findings
from swarmkit.check._report import has_errors, render_json, render_text
from swarmkit.check._satisfiable import always_true, never_true
from swarmkit.conditions import Condition
from swarmkit.conditions.syntax import Expr
from swarmkit.graph import Edge
from swarmkit.spec import SwarmSpec


class _Compiled(Protocol):
    """A Swarm, seen only for its compiled spec (so this package never imports the facade)."""

    @property
    def spec(self) -> SwarmSpec: ...


__all__ = ["Finding", "Severity", "check_swarm", "has_errors", "render_json", "render_text"]


def check_swarm(target: _Compiled | SwarmSpec) -> tuple[Finding, ...]:
    """Every finding about a swarm (or its compiled spec), errors first, then in the order of
    the configuration."""
    swarm = target if isinstance(target, SwarmSpec) else target.spec
    tools = [name for plan in swarm.plans.values() for name in plan.tools]
    scope = Scope(context_type=swarm.context_type, facts=swarm_facts(swarm.plans, tools))
    verdicts = _edge_verdicts(swarm)
    findings: list[Finding] = []
    for node, node_verdicts in verdicts.items():
        findings.extend(dead_edge_findings(node_verdicts))
        for verdict in node_verdicts:
            if verdict.tree is not None:
                findings.extend(_condition_findings(verdict.tree, scope, verdict.where))
            findings.extend(mapping_findings(verdict, _input_type(swarm, node, verdict)))
    findings.extend(_offer_findings(swarm, scope))
    findings.extend(leaf_findings(swarm))
    findings.extend(forced_cycle_findings(verdicts, functools.partial(_cycle_policy, swarm)))
    agents = list(swarm.plans)
    findings.extend(unreachable_findings(swarm.entry_agent, agents, _successors(swarm, verdicts)))
    return tuple(sorted(findings, key=lambda f: f.severity != "error"))


def _condition_findings(tree: Expr, scope: Scope, where: str) -> Iterator[Finding]:
    yield from path_findings(tree, scope, where)
    yield from comparison_findings(tree, scope, where)


def _edge_verdicts(swarm: SwarmSpec) -> dict[str, list[EdgeVerdict]]:
    graph = swarm.graph
    if graph is None:
        return {}
    verdicts: dict[str, list[EdgeVerdict]] = {}
    for node in graph.nodes():
        edges = graph.compiled_edges(node)
        if edges:
            numbered = enumerate(edges, 1)
            verdicts[node] = shadowing([_verdict(e, c, n) for n, (e, c) in numbered])
    return verdicts


def _verdict(edge: Edge, condition: Condition | None, number: int) -> EdgeVerdict:
    tree = condition.tree if condition is not None else None
    label = edge.when if edge.when is not None else "always"
    return EdgeVerdict(
        edge=edge,
        number=number,
        where=f"graph edge {edge.source} -> {edge.target} (rule {number}: {label})",
        always=tree is None or always_true(tree),
        never=tree is not None and never_true(tree),
        tree=tree,
    )


def _offer_findings(swarm: SwarmSpec, scope: Scope) -> Iterator[Finding]:
    """``available_when`` rules of handoffs and tools: never true, or reading what is not there."""
    for name, plan in swarm.plans.items():
        handoffs = plan.handoff_configs.items()
        offers = [(f"agent {name}: handoff to {t}", h.condition) for t, h in handoffs]
        offers += [(f"agent {name}: tool {t}", f.condition) for t, f in plan.tools.items()]
        for where, condition in offers:
            if condition is None:
                continue
            tree = condition.tree
            if never_true(tree):
                yield Finding(
                    code="never_offered",
                    severity="error",
                    where=where,
                    message=f"available_when {condition.source!r} is false for every state, so "
                    "it is never offered",
                    fix="fix the condition, or remove the offer",
                )
            yield from _condition_findings(tree, scope, where)


def _input_type(swarm: SwarmSpec, node: str, verdict: EdgeVerdict) -> type[BaseModel] | None:
    """The payload type a rule's handoff from ``node`` is validated against, if any."""
    plan = swarm.plans.get(node)
    config = plan.handoff_configs.get(verdict.edge.target) if plan is not None else None
    return config.input_type if config is not None else None


def _successors(swarm: SwarmSpec, verdicts: dict[str, list[EdgeVerdict]]) -> dict[str, set[str]]:
    """Where each agent can pass control: live rule edges, offered transfers and its ``then``
    agent (within max_handoffs and its budget), and the agents it delegates to."""
    successors: dict[str, set[str]] = {}
    for name, plan in swarm.plans.items():
        targets = successors.setdefault(name, {d.agent for d in plan.delegates.values()})
        if swarm.max_handoffs == 0:
            continue
        if plan.agent.then is not None:
            targets.add(plan.agent.then)
        if plan.agent.handoff_budget == 0:
            continue
        targets.update(v.edge.target for v in verdicts.get(name, ()) if v.live)
        for target, handoff in plan.handoff_configs.items():
            condition = handoff.condition
            if condition is None or not never_true(condition.tree):
                targets.add(target)
    return successors


def _cycle_policy(swarm: SwarmSpec, cycle: list[str]) -> str:
    """What the swarm's settings do when a run goes round ``cycle``."""
    back = cycle[0]
    if not swarm.detect_cycles:
        return (
            f"cycle detection is off, so it loops until max_handoffs={swarm.max_handoffs} "
            "stops the handoffs"
        )
    rounds = "" if swarm.max_revisits == 0 else f" after max_revisits={swarm.max_revisits}"
    outcome = {
        "finish": "refuses the handoff and the agent answers itself",
        "stop": "stops the run (stop_reason='cycle')",
        "error": "raises HandoffCycleError",
    }[swarm.on_cycle]
    return f"on returning to {back!r}{rounds}, on_cycle={swarm.on_cycle!r} {outcome}"
