"""Drawings for people: the handoffs a swarm allows, and the path one journaled run took.

Both come as Mermaid (``flowchart LR``), Graphviz DOT text, or plain text for a terminal
(``ascii``, like state-graph runtimes' ``draw_ascii``). Rule edges (HandoffGraph conditions,
decided without a model call) are dashed (``==>`` in text); handoffs the LLM decides are
solid (``-->``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from swarmkit.exceptions import ConfigurationError, JournalError
from swarmkit.journal import JournalRecord
from swarmkit.swarm import Swarm

DrawingFormat = Literal["mermaid", "dot", "ascii"]
"""The text formats a drawing comes in."""

FORMATS: tuple[DrawingFormat, ...] = ("mermaid", "dot", "ascii")
"""Every drawing format, in the order the CLI offers them."""

_Shape = Literal["agent", "entry", "stop"]
_Style = Literal["solid", "dashed"]

_SWARM_LEGEND = "dashed: rule edge (HandoffGraph condition, no model call); solid: LLM handoff"
_SESSION_LEGEND = "the path of one run: edges numbered in order; dashed: decided by a rule"


@dataclass(frozen=True, kw_only=True, slots=True)
class _Node:
    """A box in a drawing."""

    id: str
    """An identifier safe in both formats (letters and digits)."""
    label: str
    """The text shown, escaped when rendered."""
    shape: _Shape = "agent"
    """Entry agents and stop markers are drawn apart from other agents."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _Arrow:
    """An edge in a drawing."""

    source: str
    """The source node's id."""
    target: str
    """The target node's id."""
    label: str = ""
    """The edge's text, escaped when rendered; empty for none."""
    style: _Style = "solid"
    """Dashed for rules, solid for everything else."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleEdge:
    """A HandoffGraph rule: control passes with no model call when its condition holds."""

    source: str
    """The agent it leaves."""
    target: str
    """The agent it enters."""
    number: int
    """Its place in the source's evaluation order, from 1 (the first that matches wins)."""
    condition: str | None
    """The condition as written; None for a rule that always matches."""
    priority: int = 0
    """Its priority: higher ones are tried first."""
    kind: Literal["rule"] = "rule"
    """Tells a rule edge from an LLM edge."""

    @property
    def label(self) -> str:
        """Its number and condition, as every drawing writes them."""
        return f"rule {self.number}: {self.condition or 'always'}"


@dataclass(frozen=True, kw_only=True, slots=True)
class LLMEdge:
    """A handoff the source agent's model may choose (one of its transfer tools)."""

    source: str
    """The agent it leaves."""
    target: str
    """The agent it enters."""
    payload_type: str | None = None
    """The name of its payload type, for a typed handoff."""
    available_when: str | None = None
    """The condition under which it is offered; None when it always is."""
    kind: Literal["llm"] = "llm"
    """Tells an LLM edge from a rule edge."""

    @property
    def label(self) -> str:
        """Its payload type and when it is offered, as drawings write them ("" for neither)."""
        label = self.payload_type or ""
        if self.available_when is not None:
            label = f"{label} when {self.available_when}".strip()
        return label


SwarmEdge = RuleEdge | LLMEdge
"""One way control may pass between two agents of a swarm."""


def swarm_edges(swarm: Swarm) -> tuple[SwarmEdge, ...]:
    """Every edge of ``swarm``, agent by agent in name order: its rule edges in evaluation
    order, then its LLM edges by target. Every drawing of a swarm draws these."""
    edges: list[SwarmEdge] = []
    graph = swarm.graph
    for source in sorted(swarm.plans):
        if graph is not None and graph.has_node(source):
            edges += [
                RuleEdge(
                    source=source,
                    target=edge.target,
                    number=number,
                    condition=edge.when,
                    priority=edge.priority,
                )
                for number, edge in enumerate(graph.edge_list(source), start=1)
            ]
        configs = swarm.plans[source].handoff_configs
        edges += [
            LLMEdge(
                source=source,
                target=target,
                payload_type=_type_name(configs[target].input_type),
                available_when=configs[target].available_when,
            )
            for target in sorted(configs)
        ]
    return tuple(edges)


def draw_swarm(swarm: Swarm, format: DrawingFormat = "mermaid") -> str:
    """Every agent, its rule edges (conditions as labels) and its LLM handoff edges.

    Rule edges come from ``swarm.graph`` in evaluation order and are numbered in that order
    per agent (the first that matches wins); LLM edges come from each agent's transfer
    targets, labelled with the payload type for typed handoffs.
    """
    _check_format(format)
    ids = {name: f"n{number}" for number, name in enumerate(sorted(swarm.agents))}
    nodes = [
        _Node(id=ids[name], label=name, shape="entry" if name == swarm.entry_agent else "agent")
        for name in ids
    ]
    # Rule edges are listed first: they are consulted before any model is asked.
    edges = sorted(swarm_edges(swarm), key=lambda edge: edge.kind == "llm")
    arrows = [_swarm_arrow(edge, ids) for edge in edges]
    return _render(format, "swarm", nodes, arrows, _SWARM_LEGEND)


def draw_session(records: Sequence[JournalRecord], format: DrawingFormat = "mermaid") -> str:
    """The path a journaled run took: its agents in order, each handoff numbered and marked
    rule, llm or tool, and why the run stopped."""
    _check_format(format)
    if not records:
        raise JournalError("nothing to draw: the session has no records")
    nodes: list[_Node] = []
    arrows: list[_Arrow] = []
    handoff: Mapping[str, Any] | None = None
    for record in records:
        if record.kind == "handoff":
            handoff = record.data
        elif record.kind == "agent_started":
            node = _Node(
                id=f"s{len(nodes)}",
                label=str(record.data.get("agent")),
                shape="agent" if nodes else "entry",
            )
            if nodes:
                arrows.append(_handoff_arrow(nodes[-1].id, node.id, handoff))
            nodes.append(node)
            handoff = None
    stop = _Node(id="done", label=_stop_label(records), shape="stop")
    if nodes:
        arrows.append(_Arrow(source=nodes[-1].id, target=stop.id))
    return _render(format, "session", [*nodes, stop], arrows, _SESSION_LEGEND)


# -- what to draw ----------------------------------------------------------------------------


def _type_name(kind: type | None) -> str | None:
    return kind.__name__ if kind is not None else None


def _swarm_arrow(edge: SwarmEdge, ids: Mapping[str, str]) -> _Arrow:
    source, target = ids[edge.source], ids[edge.target]
    match edge:
        case RuleEdge(priority=priority):
            label = edge.label + (f" (priority {priority})" if priority else "")
            return _Arrow(source=source, target=target, label=label, style="dashed")
        case LLMEdge():
            return _Arrow(source=source, target=target, label=edge.label)
        case _:
            assert_never(edge)


def _handoff_arrow(source: str, target: str, handoff: Mapping[str, Any] | None) -> _Arrow:
    if handoff is None:  # an agent entered without a journaled handoff: draw the step alone
        return _Arrow(source=source, target=target)
    decided_by = str(handoff.get("decided_by"))
    label = f"({handoff.get('number')}) {decided_by}"
    if decided_by == "rule":
        label += f": {handoff.get('condition') or 'always'}"
    if handoff.get("payload") is not None:
        label += " + payload"
    style: _Style = "dashed" if decided_by == "rule" else "solid"
    return _Arrow(source=source, target=target, label=label, style=style)


def _stop_label(records: Sequence[JournalRecord]) -> str:
    finished = [r for r in records if r.kind == "run_finished"]
    if not finished:
        return "not finished"
    return f"stop: {finished[-1].data.get('stop_reason')}"


def _check_format(format: str) -> None:
    if format not in FORMATS:
        raise ConfigurationError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")


# -- rendering -------------------------------------------------------------------------------


def _render(
    format: DrawingFormat, name: str, nodes: list[_Node], arrows: list[_Arrow], legend: str
) -> str:
    if format == "mermaid":
        return _mermaid(nodes, arrows, legend)
    if format == "ascii":
        return _ascii(nodes, arrows, legend)
    return _dot(name, nodes, arrows, legend)


_ASCII_SHAPES = {"agent": ("[", "]"), "entry": ("[[", "]]"), "stop": ("(", ")")}


def _ascii(nodes: list[_Node], arrows: list[_Arrow], legend: str) -> str:
    """Each node, then its outgoing edges indented under it, in order."""
    labels = {node.id: node.label for node in nodes}
    lines = [f"# {legend.replace('dashed', '==>').replace('solid', '-->')}"]
    for node in nodes:
        opening, closing = _ASCII_SHAPES[node.shape]
        lines.append(f"{opening}{_plain(node.label)}{closing}")
        for arrow in (a for a in arrows if a.source == node.id):
            link = "==>" if arrow.style == "dashed" else "-->"
            label = f"  ({_plain(arrow.label)})" if arrow.label else ""
            lines.append(f"  {link} {_plain(labels[arrow.target])}{label}")
    return "\n".join(lines) + "\n"


def _plain(text: str) -> str:
    return "".join(char if char.isprintable() else " " for char in text)


_MERMAID_SHAPES = {"agent": ('["', '"]'), "entry": ('(["', '"])'), "stop": ('(("', '"))')}


def _mermaid(nodes: list[_Node], arrows: list[_Arrow], legend: str) -> str:
    lines = ["flowchart LR", f"    %% {legend}"]
    for node in nodes:
        opening, closing = _MERMAID_SHAPES[node.shape]
        lines.append(f"    {node.id}{opening}{_mermaid_text(node.label)}{closing}")
    for arrow in arrows:
        link = "-.->" if arrow.style == "dashed" else "-->"
        label = f'|"{_mermaid_text(arrow.label)}"|' if arrow.label else ""
        lines.append(f"    {arrow.source} {link}{label} {arrow.target}")
    return "\n".join(lines) + "\n"


_DOT_SHAPES = {"agent": "", "entry": ", peripheries=2", "stop": ", shape=ellipse"}


def _dot(name: str, nodes: list[_Node], arrows: list[_Arrow], legend: str) -> str:
    lines = [
        f"digraph {name} {{",
        f"    // {legend}",
        "    rankdir=LR;",
        "    node [shape=box];",
    ]
    for node in nodes:
        lines.append(f"    {node.id} [label={_dot_text(node.label)}{_DOT_SHAPES[node.shape]}];")
    for arrow in arrows:
        attributes = [f"label={_dot_text(arrow.label)}"] if arrow.label else []
        if arrow.style == "dashed":
            attributes.append("style=dashed")
        shown = f" [{', '.join(attributes)}]" if attributes else ""
        lines.append(f"    {arrow.source} -> {arrow.target}{shown};")
    lines.append("}")
    return "\n".join(lines) + "\n"


# Characters Mermaid would read as syntax inside a quoted label, written as its #code; entities.
_MERMAID_SPECIAL = frozenset('"#&<>|`')


def _mermaid_text(text: str) -> str:
    return "".join(
        f"#{ord(char)};" if char in _MERMAID_SPECIAL else char if char.isprintable() else " "
        for char in text
    )


def _dot_text(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(char if char.isprintable() else " " for char in escaped) + '"'
