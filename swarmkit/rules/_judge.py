"""What a graph would have done at a journaled turn: the first consultation where an edge fires."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from swarmkit.exceptions import GraphCycleError, RuleLearningError
from swarmkit.graph import Edge, HandoffGraph
from swarmkit.rules._corpus import Visit


@dataclass(frozen=True, kw_only=True, slots=True)
class Verdict:
    """Where, in one journaled turn, a graph decides, and whether it agrees with the journal."""

    visit: Visit
    """The journaled turn."""
    at: int
    """Index of the first point where an edge fires."""
    edge: Edge
    """The edge that fires there."""

    @property
    def agrees(self) -> bool:
        """Whether the edge goes where the turn went, decided there or by the model later."""
        return self.visit.outcome in ("llm", "rule") and self.edge.target == self.visit.target

    @property
    def saved_calls(self) -> int:
        """Model calls of the turn from the firing point on (a rule point costs nothing)."""
        return sum(1 for point in self.visit.points[self.at :] if point.call)

    @property
    def saved_tokens(self) -> int:
        """Tokens of those model calls."""
        return sum(point.tokens for point in self.visit.points[self.at :])


def judge(visit: Visit, graph: HandoffGraph) -> Verdict | None:
    """The first point of ``visit`` where ``graph`` routes, or ``None`` when it never does."""
    for index, point in enumerate(visit.points):
        edge = graph.route_edge(visit.agent, point.state)
        if edge is not None:
            return Verdict(visit=visit, at=index, edge=edge)
    return None


def with_rules(graph: HandoffGraph | None, rules: Iterable[Edge]) -> HandoffGraph:
    """A new graph: ``graph``'s edges, then ``rules`` (the given graph is left unchanged).

    ``RuleLearningError`` when a rule would close a cycle the graph refuses."""
    merged = HandoffGraph() if graph is None else HandoffGraph.from_dict(graph.to_dict())
    for edge in rules:
        try:
            merged.add_edge(
                edge.source,
                edge.target,
                edge.when,
                priority=edge.priority,
                input_mapping=edge.input_mapping,
            )
        except GraphCycleError as exc:
            raise RuleLearningError(
                f"the rule {edge.source} -> {edge.target} would close a cycle of rules, which "
                f"the graph refuses (on_cycle='error'): {exc}"
            ) from exc
    return merged
