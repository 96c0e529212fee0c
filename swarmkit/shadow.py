"""Shadow rules: handoff rules judged beside the model on the turns it decides, never followed.

A swarm given ``shadow=`` (a HandoffGraph, or its ``to_dict`` data) evaluates, on every turn
the model decides, each shadow rule out of the active agent on the rule state the graph would
have seen, and journals every rule's verdict with that decision in a ``shadow`` record: whether
it fired, its target, and whether it agreed with the model (it fired and named the agent the
model handed off to). Nothing else changes: no call is added, no routing follows a shadow rule.
Standard library only, like the graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from swarmkit.exceptions import ConfigurationError
from swarmkit.graph import Edge, HandoffGraph

__all__ = ["SHADOW_RECORD", "rule_name", "shadow_data", "shadow_graph"]

SHADOW_RECORD = "shadow"
"""The kind of the record that holds one model decision's shadow verdicts."""


def rule_name(edge: Edge) -> str:
    """The name a rule is counted and promoted under: ``"source -> target if when"``
    (``"source -> target"`` for a rule with no condition)."""
    when = "" if edge.when is None else f" if {edge.when}"
    return f"{edge.source} -> {edge.target}{when}"


def shadow_graph(value: object, agents: Mapping[str, object]) -> HandoffGraph | None:
    """``shadow=`` as a graph, checked against the swarm's agents; ``ConfigurationError`` for a
    value that is neither a HandoffGraph nor its data, or a rule naming an unknown agent."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        graph = HandoffGraph.from_dict(value)
    elif isinstance(value, HandoffGraph):
        graph = value
    else:
        raise ConfigurationError(
            f"shadow takes a HandoffGraph or its to_dict data, got {type(value).__name__}"
        )
    unknown = [node for node in graph.nodes() if node not in agents]
    if unknown:
        raise ConfigurationError(
            f"the shadow rules name agents the swarm does not have: {', '.join(unknown)}; "
            f"agents: {', '.join(agents)}"
        )
    return graph


def shadow_data(
    agent: str, turn: int, trials: Sequence[tuple[Edge, bool]], model_target: str | None
) -> dict[str, Any]:
    """The ``shadow`` record of one model decision: ``trials`` holds each shadow rule out of
    ``agent`` with whether its condition held; ``model_target`` is the agent the model handed
    off to (None: it kept the turn or answered). A rule agrees when it fired and its target is
    the model's; a rule that did not fire neither agrees nor disagrees."""
    verdicts = [
        {
            "rule": rule_name(edge),
            "target": edge.target,
            "fired": fired,
            "agrees": fired and edge.target == model_target,
        }
        for edge, fired in trials
    ]
    return {"agent": agent, "turn": turn, "model_target": model_target, "verdicts": verdicts}
