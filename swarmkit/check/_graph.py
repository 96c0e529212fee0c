"""Findings about the swarm as a graph: dead rule edges, forced rule cycles, unreachable agents."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from swarmkit.check._finding import Finding
from swarmkit.conditions.syntax import Expr
from swarmkit.graph import Edge


@dataclass(frozen=True, kw_only=True, slots=True)
class EdgeVerdict:
    """What the check concluded about one rule edge."""

    edge: Edge
    """The edge."""
    number: int
    """Its position among its node's edges, in evaluation order, from 1."""
    where: str
    """How findings name it."""
    always: bool
    """Whether its condition holds for every state (or it has none)."""
    never: bool
    """Whether its condition holds for no state."""
    tree: Expr | None = None
    """Its condition's syntax tree (None without a condition)."""
    shadowed_by: int | None = None
    """The earlier edge that always wins over it, if one does."""

    @property
    def live(self) -> bool:
        """Whether the edge can ever fire."""
        return not self.never and self.shadowed_by is None


def shadowing(verdicts: list[EdgeVerdict]) -> list[EdgeVerdict]:
    """One node's edges in evaluation order, each marked with the earlier edge hiding it."""
    marked: list[EdgeVerdict] = []
    winner: int | None = None
    seen: dict[str, int] = {}
    for verdict in verdicts:
        when = verdict.edge.when
        earlier = winner if winner is not None else seen.get(when or "")
        if earlier is not None:
            marked.append(replace(verdict, shadowed_by=earlier))
            continue
        if verdict.always:
            winner = verdict.number
        if when is not None and not verdict.never:
            seen.setdefault(when, verdict.number)
        marked.append(verdict)
    return marked


def dead_edge_findings(verdicts: list[EdgeVerdict]) -> Iterator[Finding]:
    """An edge an earlier one always beats; an edge whose condition holds for no state."""
    for verdict in verdicts:
        if verdict.shadowed_by is not None:
            yield Finding(
                code="edge_shadowed",
                severity="error",
                where=verdict.where,
                message=(
                    f"rule {verdict.shadowed_by} of {verdict.edge.source!r} matches whenever "
                    "this one would, and is tried first, so this rule never fires"
                ),
                fix="remove the rule, give it a higher priority, or narrow the earlier one",
            )
        elif verdict.never:
            yield Finding(
                code="condition_never_true",
                severity="error",
                where=verdict.where,
                message=f"the condition {verdict.edge.when!r} is false for every state",
                fix="fix the condition (two tests of one path that contradict each other?)",
            )


def forced_cycle_findings(
    verdicts: Mapping[str, list[EdgeVerdict]], policy: Callable[[list[str]], str]
) -> Iterator[Finding]:
    """Cycles of rules that always fire: every run that enters one goes round it."""
    forced = _forced(verdicts)
    reported: set[frozenset[str]] = set()
    for start in sorted(forced):
        cycle = _cycle_from(start, forced)
        if cycle is None or frozenset(cycle) in reported:
            continue
        reported.add(frozenset(cycle))
        path = " -> ".join([*cycle, cycle[0]])
        yield Finding(
            code="rule_cycle",
            severity="warning",
            where=f"graph cycle {path}",
            message=f"these rules always fire, so every run that enters {path} goes round; "
            + policy(cycle),
            fix="add a condition that ends the loop (e.g. on swarm.handoff_count or a context "
            "flag a tool sets)",
        )


def _forced(verdicts: Mapping[str, list[EdgeVerdict]]) -> dict[str, str]:
    """Nodes whose routing always fires one edge: its first live edge always matches."""
    forced: dict[str, str] = {}
    for node, edges in verdicts.items():
        live = [v for v in edges if v.live]
        if live and live[0].always:
            forced[node] = live[0].edge.target
    return forced


def _cycle_from(start: str, forced: Mapping[str, str]) -> list[str] | None:
    order: list[str] = []
    index: dict[str, int] = {}
    node: str | None = start
    while node is not None and node not in index:
        index[node] = len(order)
        order.append(node)
        node = forced.get(node)
    if node is None or index[node] != 0:
        return None  # the chain ends, or loops without passing through ``start``
    return order


def unreachable_findings(
    entry: str, agents: list[str], successors: Mapping[str, set[str]]
) -> Iterator[Finding]:
    """Agents no chain of live rule edges and offered transfers leads to from the entry."""
    reached = {entry}
    pending = [entry]
    while pending:
        for target in successors.get(pending.pop(), ()):
            if target not in reached:
                reached.add(target)
                pending.append(target)
    for agent in agents:
        if agent not in reached:
            yield Finding(
                code="unreachable_agent",
                severity="warning",
                where=f"agent {agent}",
                message=f"no rule edge or transfer tool leads from {entry!r} to {agent!r} "
                "(after max_handoffs, handoff budgets and conditions that never hold)",
                fix="list it in a reachable agent's handoffs (or give it an LLM edge in the "
                "graph), add a rule edge to it, or remove it (ignore this if a tool's "
                "ToolResult(goto=...) reaches it)",
            )
