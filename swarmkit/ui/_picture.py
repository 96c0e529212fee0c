"""The swarm's drawing as SVG, with the path one session took highlighted.

Mermaid's JavaScript is not shipped, so the page gets a small layered layout drawn here:
agents in columns by their distance from the entry agent, rule edges dashed (labelled with
their condition), LLM handoffs solid (labelled with the payload type), as in ``swarmkit draw``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from swarmkit import drawing
from swarmkit.swarm import Swarm

_BOX_W, _BOX_H = 150, 40
_COL, _ROW, _MARGIN = 400, 100, 30
_CHAR_W = 6.8  # about how wide one character of an 11px label is


@dataclass(kw_only=True, slots=True)
class Edge:
    """One arrow of the drawing."""

    source: str
    """The agent it leaves."""
    target: str
    """The agent it enters."""
    rule: bool
    """A HandoffGraph rule (dashed) rather than an LLM handoff (solid)."""
    label: str = ""
    """The condition of a rule, or the payload type of a typed handoff."""
    steps: list[int] = field(default_factory=list)
    """The numbers of the session's handoffs that took this edge; empty when off the path."""


def swarm_edges(swarm: Swarm) -> list[Edge]:
    """The swarm's edges (``swarmkit.drawing.swarm_edges``) as the picture draws them, none
    on the session's path yet."""
    return [
        Edge(source=edge.source, target=edge.target, rule=edge.kind == "rule", label=edge.label)
        for edge in drawing.swarm_edges(swarm)
    ]


def mark_path(edges: list[Edge], path: Sequence[Mapping[str, Any]]) -> list[Edge]:
    """Number the edges each handoff of ``path`` took; add an edge a handoff took that the
    drawing lacks (a tool's goto, or a swarm that changed since)."""
    for position, step in enumerate(path, start=1):
        source, target = str(step.get("source")), str(step.get("target"))
        rule = step.get("decided_by") == "rule"
        edge = next(
            (e for e in edges if (e.source, e.target, e.rule) == (source, target, rule)), None
        )
        if edge is None:
            edge = Edge(source=source, target=target, rule=rule, label=str(step.get("decided_by")))
            edges.append(edge)
        edge.steps.append(_count(step.get("number"), position))
    return edges


def _count(number: object, position: int) -> int:
    """A handoff's number as journaled, or its place on the path when a damaged record holds
    something else there ("many", 1.5, a list)."""
    if isinstance(number, int) and not isinstance(number, bool) and number > 0:
        return number
    return position


def draw_svg(agents: Sequence[str], entry: str, edges: Sequence[Edge], trail: Sequence[str]) -> str:
    """The drawing as one ``<svg>`` element."""
    places = _layout(agents, entry, edges)
    width = max(max(x for x, _ in places.values()) + _BOX_W + _MARGIN, 760)
    height = max(y for _, y in places.values()) + _BOX_H + _MARGIN + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="swarm-drawing" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="the swarm, with the path of this session highlighted">',
        "<defs>",
        _marker("arrow", "#667"),
        _marker("arrow-on", "#d9480f"),
        "</defs>",
    ]
    bends = _bends(edges)
    parts += [_edge_svg(e, places, bend) for e, bend in zip(edges, bends, strict=True)]
    parts += [_node_svg(a, places[a], a == entry, a in trail) for a in agents]
    parts.append(
        f'<text class="legend" x="{_MARGIN}" y="{height - 10}">dashed: rule edge (no model '
        "call); solid: LLM handoff; orange: this session's path, numbered in order</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)


def _layout(agents: Sequence[str], entry: str, edges: Sequence[Edge]) -> dict[str, tuple[int, int]]:
    layer = {entry: 0}
    frontier = [entry]
    while frontier:
        following: list[str] = []
        for name in frontier:
            for edge in edges:
                if edge.source == name and edge.target not in layer:
                    layer[edge.target] = layer[name] + 1
                    following.append(edge.target)
        frontier = following
    columns: dict[int, list[str]] = {}
    for name in agents:
        columns.setdefault(layer.get(name, 0), []).append(name)
    return {
        name: (_MARGIN + column * _COL, _MARGIN + row * _ROW)
        for column, names in columns.items()
        for row, name in enumerate(names)
    }


def _bends(edges: Sequence[Edge]) -> list[float]:
    # Edges between the same two agents (a rule and an LLM edge, or both directions) curve apart.
    seen: dict[frozenset[str], int] = {}
    bends: list[float] = []
    for edge in edges:
        pair = frozenset((edge.source, edge.target))
        index = seen.get(pair, 0)
        seen[pair] = index + 1
        reverse = any(e.source == edge.target and e.target == edge.source for e in edges)
        bend = 56.0 * (index + (1 if reverse else 0))
        bends.append(bend if edge.source < edge.target else -bend)
    return bends


def _edge_svg(edge: Edge, places: Mapping[str, tuple[int, int]], bend: float) -> str:
    (x1, y1), (x2, y2) = _centre(places[edge.source]), _centre(places[edge.target])
    dx, dy = x2 - x1, y2 - y1
    length = math.hypot(dx, dy) or 1.0
    if abs(dx) < 1 and abs(dy) > 0 and not bend:
        bend = 40.0  # same column: curve round the boxes between
    cx, cy = (x1 + x2) / 2 - dy / length * bend, (y1 + y2) / 2 + dx / length * bend
    sx, sy = _border(x1, y1, cx, cy)
    ex, ey = _border(x2, y2, cx, cy)
    lx, ly = (sx + 2 * cx + ex) / 4, (sy + 2 * cy + ey) / 4
    on = bool(edge.steps)
    classes = "edge " + ("rule" if edge.rule else "llm") + (" on-path" if on else "")
    label = edge.label
    if on:
        label = f"({', '.join(str(n) for n in edge.steps)}) {label}".strip()
    dash = ' stroke-dasharray="6 4"' if edge.rule else ""
    stroke = "#d9480f" if on else "#667"
    return (
        f"<g class={quoteattr(classes)} data-source={quoteattr(edge.source)} "
        f"data-target={quoteattr(edge.target)} data-steps="
        f"{quoteattr(','.join(str(n) for n in edge.steps))}>"
        f'<path d="M{sx:.1f},{sy:.1f} Q{cx:.1f},{cy:.1f} {ex:.1f},{ey:.1f}" fill="none" '
        f'stroke="{stroke}" stroke-width="{3 if on else 1.4}"{dash} '
        f'marker-end="url(#{"arrow-on" if on else "arrow"})"/>'
        f"{_label(label, lx, ly)}</g>"
    )


def _label(text: str, x: float, y: float) -> str:
    if not text:
        return ""
    width = len(text) * _CHAR_W + 6
    return (
        f'<rect x="{x - width / 2:.1f}" y="{y - 9:.1f}" width="{width:.1f}" height="14" rx="3"/>'
        f'<text x="{x:.1f}" y="{y + 2:.1f}" text-anchor="middle">{escape(text)}</text>'
    )


def _node_svg(name: str, place: tuple[int, int], entry: bool, on_trail: bool) -> str:
    x, y = place
    classes = "node" + (" entry" if entry else "") + (" on-trail" if on_trail else "")
    fill = "#fff4e6" if on_trail else "#f8f9fa"
    stroke = "#d9480f" if on_trail else "#667"
    return (
        f"<g class={quoteattr(classes)} data-agent={quoteattr(name)}>"
        f'<rect x="{x}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="{18 if entry else 6}" '
        f'fill="{fill}" stroke="{stroke}" stroke-width="{2 if on_trail else 1}"/>'
        f'<text x="{x + _BOX_W / 2}" y="{y + _BOX_H / 2 + 5}" text-anchor="middle">'
        f"{escape(name)}</text></g>"
    )


def _marker(name: str, colour: str) -> str:
    return (
        f'<marker id="{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="10" '
        'markerHeight="10" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" '
        f'fill="{colour}"/></marker>'
    )


def _centre(place: tuple[int, int]) -> tuple[float, float]:
    return place[0] + _BOX_W / 2, place[1] + _BOX_H / 2


def _border(x: float, y: float, towards_x: float, towards_y: float) -> tuple[float, float]:
    """Where the line from a box's centre towards a point leaves the box."""
    dx, dy = towards_x - x, towards_y - y
    if dx == 0 and dy == 0:
        return x, y
    scale = min(
        (_BOX_W / 2) / abs(dx) if dx else math.inf, (_BOX_H / 2) / abs(dy) if dy else math.inf
    )
    return x + dx * scale, y + dy * scale
