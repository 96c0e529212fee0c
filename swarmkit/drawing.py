"""Drawings for people: the handoffs a swarm allows, and the path one journaled run took.

Both come as Mermaid (``flowchart LR``), Graphviz DOT text, or plain text for a terminal
(``ascii``, like state-graph runtimes' ``draw_ascii``). Rule edges (HandoffGraph conditions,
decided without a model call) are dashed (``==>`` in text); handoffs the LLM decides are
solid (``-->``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

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
    arrows = _rule_arrows(swarm, ids) + _llm_arrows(swarm, ids)
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


def _rule_arrows(swarm: Swarm, ids: Mapping[str, str]) -> list[_Arrow]:
    graph = swarm.graph
    if graph is None:
        return []
    arrows: list[_Arrow] = []
    for source in sorted(ids):
        if not graph.has_node(source):
            continue
        for number, edge in enumerate(graph.edge_list(source), start=1):
            label = f"rule {number}: {edge.when or 'always'}"
            if edge.priority:
                label += f" (priority {edge.priority})"
            arrows.append(
                _Arrow(source=ids[source], target=ids[edge.target], label=label, style="dashed")
            )
    return arrows


def _llm_arrows(swarm: Swarm, ids: Mapping[str, str]) -> list[_Arrow]:
    arrows: list[_Arrow] = []
    for source in sorted(ids):
        configs = swarm.plans[source].handoff_configs
        for target in sorted(configs):
            input_type = configs[target].input_type
            label = input_type.__name__ if input_type is not None else ""
            when = configs[target].available_when
            if when is not None:
                label = f"{label} when {when}".strip()
            arrows.append(_Arrow(source=ids[source], target=ids[target], label=label))
    return arrows


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
