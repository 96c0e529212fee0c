"""HandoffGraph: rules that pick the next agent from the state, with no model call.

A graph may also declare the handoffs the model decides (``decided_by="llm"``): they are
never routed, and in a Swarm they are the source agent's handoffs, so one graph describes
every way control can pass.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from swarmkit.conditions import (
    Condition,
    PathValue,
    compile_condition,
    compile_first_match,
    trace_condition,
)
from swarmkit.exceptions import ConfigurationError, GraphCycleError

GRAPH_FORMAT: Final = "swarmkit.handoff_graph"
"""The ``format`` tag that ``HandoffGraph.to_dict`` writes and ``from_dict`` checks."""
GRAPH_VERSION: Final = 1
"""The ``version`` of the data ``HandoffGraph.to_dict`` writes and ``from_dict`` reads."""

ON_SUCCESS: Final = "swarm.last_tool_ok == true"
"""ON_SUCCESS for a Swarm's graph: the active agent's last tool call succeeded."""
ON_FAILURE: Final = "swarm.last_tool_ok == false"
"""ON_FAILURE for a Swarm's graph: the active agent's last tool call failed."""

_ON_CYCLE: Final = ("error", "allow")
_DECIDED_BY: Final = ("rule", "llm")
_Result = TypeVar("_Result")
_Router = Callable[[Any], Any]


@dataclass(frozen=True, kw_only=True)
class Edge:
    """One rule: from ``source``, go to ``target`` when ``when`` holds."""

    source: str
    """The node the edge leaves."""
    target: str
    """The node the edge leads to."""
    when: str | None = None
    """The condition as written; ``None`` for an edge that always matches."""
    priority: int = 0
    """Higher priorities are tried first; equal priorities in the order they were added."""
    input_mapping: Mapping[str, str] | None = None
    """Input mapping: payload field -> path in the state, read when the edge fires in a Swarm to
    build the target's typed payload (the last tool's output first, then the context)."""
    decided_by: str = "rule"
    """``rule`` (routed by its condition) or ``llm`` (a handoff the source agent's model may
    choose: never routed, listed by ``llm_edges``)."""
    description: str | None = None
    """An LLM edge's description: in a Swarm, the description of the source agent's
    ``transfer_to_<target>`` tool (what the model reads to choose it)."""


@dataclass(frozen=True, kw_only=True)
class EdgeTrial:
    """One edge that ``explain`` tried, and what its condition saw."""

    edge: Edge
    """The edge tried."""
    matched: bool
    """Whether its condition held (always true for an edge without one)."""
    values: tuple[PathValue, ...]
    """What each path of its condition resolved to; empty without a condition."""


@dataclass(frozen=True, kw_only=True)
class RouteExplanation:
    """Why ``route`` picks what it picks: every edge tried, in order, and the one that fired."""

    node: str
    """The node routed from."""
    trials: tuple[EdgeTrial, ...]
    """The edges tried in evaluation order, up to and including the one that fired."""
    fired: Edge | None
    """The edge that matched, or ``None`` when none did."""
    llm_edges: tuple[Edge, ...] = ()
    """The node's LLM edges: the handoffs its model may choose when no rule fired."""

    @property
    def target(self) -> str | None:
        """What ``route`` returns: the fired edge's target, or ``None``."""
        return None if self.fired is None else self.fired.target

    def __str__(self) -> str:
        lines = [f"route from {self.node!r}:"]
        for number, trial in enumerate(self.trials, start=1):
            lines.append(f"  {number}. {_describe_trial(trial)}")
        ending = "no edge matched" if self.fired is None else f"-> {self.fired.target!r}"
        lines.append(f"  {ending}")
        for edge in self.llm_edges:
            about = f": {edge.description}" if edge.description else ""
            lines.append(f"  the model may hand off to {edge.target!r} (LLM edge){about}")
        return "\n".join(lines)


@dataclass(frozen=True, kw_only=True, slots=True)
class _Entry:
    """An edge with its compiled condition."""

    edge: Edge
    """The public description of the edge."""
    condition: Condition | None
    """The compiled ``when``; ``None`` for an edge that always matches."""


class HandoffGraph:
    """Named nodes joined by edges with optional conditions; ``route`` picks the next node.

    From a node, edges are tried by descending ``priority`` and, within one priority, in
    the order they were added; the first whose condition holds wins, and an edge without
    a condition always holds. ``edges(node)`` lists them in that evaluation order.
    """

    __slots__ = (
        "__weakref__",
        "_entries",
        "_fired",
        "_llm",
        "_nodes",
        "_on_cycle",
        "_out",
        "_targets",
        "_versions",
    )

    def __init__(self, on_cycle: str = "error") -> None:
        _require_str("on_cycle", on_cycle)
        if on_cycle not in _ON_CYCLE:
            raise ConfigurationError(f"on_cycle must be 'error' or 'allow', not {on_cycle!r}")
        self._on_cycle = on_cycle
        self._nodes: dict[str, None] = {}
        self._entries: list[_Entry] = []
        self._llm: list[Edge] = []
        self._out: dict[str, list[_Entry]] = {}
        self._targets: dict[str, _Router] = {}
        self._fired: dict[str, _Router] = {}
        # Edges added per node; a router built while an edge came in is dropped (no lock: a
        # workflow sandbox refuses to create one, and routing must stay lock-free anyway).
        self._versions: dict[str, int] = {}

    @property
    def on_cycle(self) -> str:
        """``"error"`` to reject an edge that closes a cycle, ``"allow"`` to accept it."""
        return self._on_cycle

    # Building.

    def add_node(self, name: str) -> None:
        """Add a node with no edges; adding an existing node does nothing."""
        _require_str("name", name)
        self._nodes.setdefault(str(name))

    def add_edge(
        self,
        from_node: str,
        to: str,
        when: str | None = None,
        *,
        priority: int = 0,
        input_mapping: Mapping[str, str] | None = None,
        decided_by: str = "rule",
        description: str | None = None,
    ) -> None:
        """Add an edge; raise before changing anything if ``when`` or the edge is invalid.

        Raises ``ConditionSyntaxError`` for a condition that does not parse and, with
        ``on_cycle="error"``, ``GraphCycleError`` for an edge that would close a cycle.

        ``decided_by="llm"`` declares a handoff the model decides instead of a rule: in a Swarm
        it is the same as listing ``to`` in ``from_node``'s ``handoffs=``. It takes no
        condition, priority or mapping, is never routed and closes no cycle (revisits are the
        Swarm's ``max_revisits``); ``llm_edges`` lists such edges. Its ``description``
        becomes the description of the source agent's transfer tool, unless the agent's own
        ``Handoff`` gives one.
        """
        _require_str("from_node", from_node)
        _require_str("to", to)
        if decided_by != "rule":
            ruled = when is not None or priority != 0 or input_mapping is not None
            edge = Edge(source=str(from_node), target=str(to), decided_by="llm")
            self._add_llm_edge(edge, decided_by, ruled=ruled, description=description)
            return
        _no_description(from_node, to, description)
        if when is not None:
            _require_str("when", when)
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise TypeError(f"argument 'priority' must be int, not {type(priority).__name__}")
        condition = None if when is None else compile_condition(str(when))
        text = None if when is None else str(when)
        mapping = _checked_mapping(input_mapping)
        edge = Edge(
            source=str(from_node),
            target=str(to),
            when=text,
            priority=int(priority),
            input_mapping=mapping,
        )
        if self._on_cycle == "error":
            self._reject_cycle(edge.source, edge.target)
        self._insert(_Entry(edge=edge, condition=condition))

    def _add_llm_edge(
        self, edge: Edge, decided_by: object, *, ruled: bool, description: str | None
    ) -> None:
        source, target = edge.source, edge.target
        if description is not None:
            _require_str("description", description)
        if decided_by not in _DECIDED_BY:
            raise ConfigurationError(f"decided_by must be 'rule' or 'llm', not {decided_by!r}")
        if ruled:
            raise ConfigurationError(
                f"the LLM edge {source!r} -> {target!r} takes no when=, priority= or "
                "input_mapping=: the model decides it; make it a rule edge to give it a condition"
            )
        if source == target:
            raise ConfigurationError(f"the LLM edge {source!r} -> {target!r} hands off to itself")
        same = [known for known in self._llm if (known.source, known.target) == (source, target)]
        if same and description in (None, same[0].description):
            return
        if same:
            raise ConfigurationError(
                f"the LLM edge {source!r} -> {target!r} is declared already, with the "
                f"description {same[0].description!r}; declare it once"
            )
        self._nodes.setdefault(source)
        self._nodes.setdefault(target)
        self._llm.append(dataclasses.replace(edge, description=description))

    def _insert(self, entry: _Entry) -> None:
        """Add a checked edge (build a graph from one thread; route from any)."""
        edge = entry.edge
        self._nodes.setdefault(edge.source)
        self._nodes.setdefault(edge.target)
        self._entries.append(entry)
        outgoing = self._out.setdefault(edge.source, [])
        place = len(outgoing)
        while place and outgoing[place - 1].edge.priority < edge.priority:
            place -= 1
        outgoing.insert(place, entry)
        self._versions[edge.source] = self._versions.get(edge.source, 0) + 1
        # Routers are rebuilt on first use, so building a big graph stays linear.
        self._targets[edge.source] = self._lazy_router(edge.source, self._targets, _target_of)
        self._fired[edge.source] = self._lazy_router(edge.source, self._fired, _edge_of)

    def _lazy_router(
        self, node: str, cache: dict[str, _Router], result: Callable[[Edge], object]
    ) -> _Router:
        def build_and_route(state: object) -> object:
            version = self._versions[node]
            router = _build_router(tuple(self._out[node]), result)
            if cache.get(node) is build_and_route:
                cache[node] = router
            # An edge that came in meanwhile put a new lazy router in place before or after
            # ours; if before, ours is stale, so put one back. Nothing is ever lost.
            if self._versions[node] != version:
                cache[node] = self._lazy_router(node, cache, result)
            return router(state)

        return build_and_route

    def _reject_cycle(self, source: str, target: str) -> None:
        cycle = self._path(target, source)
        if cycle is not None:
            shown = " -> ".join(repr(node) for node in [source, *cycle])
            raise GraphCycleError(
                f"adding edge {source!r} -> {target!r} would create a cycle ({shown}); "
                "build the graph with on_cycle='allow' to permit loops",
                cycle=[source, *cycle],
            )

    def _path(self, start: str, goal: str) -> list[str] | None:
        """The nodes of a shortest path from ``start`` to ``goal``, both included."""
        if start == goal:
            return [start]
        parents: dict[str, str] = {}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for entry in self._out.get(node, ()):
                child = entry.edge.target
                if child in parents or child == start:
                    continue
                parents[child] = node
                if child == goal:
                    return _walk_back(parents, start, goal)
                queue.append(child)
        return None

    # Routing.

    def route(self, node: str, state: Mapping[str, object] | None = None) -> str | None:
        """The target of the first edge from ``node`` whose condition holds, else ``None``.

        Never raises because of ``state``: any mapping works, ``None`` is an empty state,
        and values of unexpected types simply make comparisons false.
        """
        try:
            router = self._targets.get(node)
        except TypeError:  # unhashable: certainly not a node name
            router = None
        if router is None:
            if node.__class__ is not str:
                _unrouted(node)
            return None
        try:
            return router(state)  # type: ignore[no-any-return]
        except Exception:  # a foreign object in the state broke even the careful path
            return _first_match(self._out.get(node, ()), state, _target_of)  # type: ignore[return-value]

    def route_edge(self, node: str, state: Mapping[str, object] | None = None) -> Edge | None:
        """Like ``route`` but returns the edge that fired, to record which rule decided."""
        # The body repeats route's on purpose: both are hot paths, and a shared helper would
        # add a call to every routing decision.
        try:
            router = self._fired.get(node)
        except TypeError:  # unhashable: certainly not a node name
            router = None
        if router is None:
            if node.__class__ is not str:
                _unrouted(node)
            return None
        try:
            return router(state)  # type: ignore[no-any-return]
        except Exception:  # a foreign object in the state broke even the careful path
            return _first_match(self._out.get(node, ()), state, _edge_of)  # type: ignore[return-value]

    def explain(self, node: str, state: Mapping[str, object] | None = None) -> RouteExplanation:
        """What ``route(node, state)`` does, edge by edge, with the values each condition read,
        and the node's LLM edges: the handoffs left to its model when no rule fires."""
        _require_str("node", node)
        trials: list[EdgeTrial] = []
        llm = tuple(self.llm_edges(node))
        for entry in self._out.get(node, ()):
            trial = _trial(entry, state)
            trials.append(trial)
            if trial.matched:
                return RouteExplanation(
                    node=node, trials=tuple(trials), fired=entry.edge, llm_edges=llm
                )
        return RouteExplanation(node=node, trials=tuple(trials), fired=None, llm_edges=llm)

    # Introspection.

    def nodes(self) -> list[str]:
        """Every node, sorted."""
        return sorted(self._nodes)

    def edges(self, node: str) -> list[tuple[str, str | None]]:
        """``(target, when)`` for each edge from ``node``, in evaluation order."""
        _require_str("node", node)
        return [(entry.edge.target, entry.edge.when) for entry in self._out.get(node, ())]

    def edge_list(self, node: str | None = None) -> list[Edge]:
        """The edges from ``node`` in evaluation order, or every edge in insertion order."""
        if node is None:
            return [entry.edge for entry in self._entries]
        _require_str("node", node)
        return [entry.edge for entry in self._out.get(node, ())]

    def llm_edges(self, node: str | None = None) -> list[Edge]:
        """The LLM edges from ``node`` (or all), in the order they were added."""
        if node is None:
            return list(self._llm)
        _require_str("node", node)
        return [edge for edge in self._llm if edge.source == node]

    def compiled_edges(self, node: str) -> list[tuple[Edge, Condition | None]]:
        """The edges from ``node`` in evaluation order, each with its compiled condition."""
        _require_str("node", node)
        return [(entry.edge, entry.condition) for entry in self._out.get(node, ())]

    def has_node(self, node: str) -> bool:
        """Whether ``node`` was added, by ``add_node`` or as an end of an edge."""
        _require_str("node", node)
        return node in self._nodes

    def __contains__(self, node: object) -> bool:
        _require_str("node", node)
        return node in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def is_dag(self) -> bool:
        """Whether the rule edges make no cycle (a self-loop is a cycle); LLM edges are not
        routed, so they are not counted."""
        waiting = dict.fromkeys(self._nodes, 0)
        for entry in self._entries:
            waiting[entry.edge.target] += 1
        ready = [node for node, count in waiting.items() if count == 0]
        done = 0
        while ready:
            node = ready.pop()
            done += 1
            for entry in self._out.get(node, ()):
                waiting[entry.edge.target] -= 1
                if waiting[entry.edge.target] == 0:
                    ready.append(entry.edge.target)
        return done == len(waiting)

    def __repr__(self) -> str:
        llm = f", llm_edges={len(self._llm)}" if self._llm else ""
        return (
            f"HandoffGraph(nodes={len(self._nodes)}, edges={len(self._entries)}{llm}, "
            f"on_cycle={self._on_cycle!r})"
        )

    # Export and import.

    def to_dict(self) -> dict[str, Any]:
        """The graph as JSON-safe data; ``from_dict`` reads it back."""
        data: dict[str, Any] = {
            "format": GRAPH_FORMAT,
            "version": GRAPH_VERSION,
            "on_cycle": self._on_cycle,
            "nodes": self.nodes(),
            "edges": [_edge_data(entry.edge) for entry in self._entries],
        }
        if self._llm:
            # Their own key: a reader that predates them leaves them out rather than
            # reading them as rules that always fire.
            data["llm_edges"] = [_llm_edge_data(e) for e in self._llm]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HandoffGraph:
        """Rebuild a graph from ``to_dict`` data, checking it as ``add_edge`` would."""
        _check_header(data)
        graph = cls(on_cycle=_field(data, "on_cycle", str, "error"))
        for name in _field(data, "nodes", list, []):
            graph.add_node(_checked_name(name))
        for item in _field(data, "edges", list, []):
            if not isinstance(item, Mapping):
                raise ConfigurationError(f"each edge must be a mapping, not {item!r}")
            graph.add_edge(
                _checked_name(item.get("source")),
                _checked_name(item.get("target")),
                _field(item, "when", str, None),
                priority=_field(item, "priority", int, 0),
                input_mapping=_field(item, "input_mapping", dict, None),
            )
        for item in _field(data, "llm_edges", list, []):
            if not isinstance(item, Mapping):
                raise ConfigurationError(f"each LLM edge must be a mapping, not {item!r}")
            graph.add_edge(
                _checked_name(item.get("source")),
                _checked_name(item.get("target")),
                decided_by="llm",
                description=_field(item, "description", str, None),
            )
        return graph

    def to_mermaid(self) -> str:
        """A Mermaid flowchart; each condition (and any priority) labels its edge."""
        ids = {node: f"n{number}" for number, node in enumerate(self.nodes())}
        lines = ["flowchart TD"]
        lines += [f'    {ids[node]}["{_mermaid_text(node)}"]' for node in ids]
        for node, node_id in ids.items():
            for entry in self._out.get(node, ()):
                label = _label(entry.edge)
                arrow = f'-->|"{_mermaid_text(label)}"|' if label else "-->"
                lines.append(f"    {node_id} {arrow} {ids[entry.edge.target]}")
        # LLM edges dotted: the model decides them, no condition does.
        lines += [f'    {ids[e.source]} -.->|"llm"| {ids[e.target]}' for e in self._llm]
        return "\n".join(lines) + "\n"

    def to_dot(self) -> str:
        """A Graphviz DOT digraph; each condition (and any priority) labels its edge."""
        lines = ["digraph HandoffGraph {"]
        lines += [f"    {_dot_text(node)};" for node in self.nodes()]
        for node in self.nodes():
            for entry in self._out.get(node, ()):
                label = _label(entry.edge)
                attributes = f" [label={_dot_text(label)}]" if label else ""
                lines.append(
                    f"    {_dot_text(node)} -> {_dot_text(entry.edge.target)}{attributes};"
                )
        lines += [
            f'    {_dot_text(e.source)} -> {_dot_text(e.target)} [label="llm", style=dotted];'
            for e in self._llm
        ]
        lines.append("}")
        return "\n".join(lines) + "\n"

    # Copying: conditions are immutable, so copies share them and never recompile.

    def __copy__(self) -> HandoffGraph:
        clone = type(self)(on_cycle=self._on_cycle)
        clone._nodes = dict(self._nodes)
        for entry in self._entries:
            clone._insert(entry)
        clone._llm = list(self._llm)
        return clone

    def __deepcopy__(self, memo: dict[int, object]) -> HandoffGraph:
        return self.__copy__()

    def __reduce__(self) -> tuple[Callable[[Mapping[str, Any]], HandoffGraph], tuple[Any]]:
        # Pickle the plain data and recompile on load: closures cannot be pickled.
        return type(self).from_dict, (self.to_dict(),)


# Routers: one closure per node, built from its edges in evaluation order.


def _target_of(edge: Edge) -> object:
    return edge.target


def _edge_of(edge: Edge) -> object:
    return edge


def _build_router(entries: Iterable[_Entry], result: Callable[[Edge], object]) -> _Router:
    return compile_first_match([(entry.condition, result(entry.edge)) for entry in entries])


def _first_match(
    entries: Iterable[_Entry], state: object, result: Callable[[Edge], object]
) -> object:
    """The slow, total path: each compiled condition in turn (calling one never raises)."""
    for entry in entries:
        if entry.condition is None or entry.condition(state):  # type: ignore[arg-type]
            return result(entry.edge)
    return None


def _unrouted(node: object) -> None:
    _require_str("node", node)


def _trial(entry: _Entry, state: Mapping[str, object] | None) -> EdgeTrial:
    if entry.condition is None:
        return EdgeTrial(edge=entry.edge, matched=True, values=())
    seen = trace_condition(entry.condition, state)
    return EdgeTrial(edge=entry.edge, matched=seen.result, values=seen.values)


def _describe_trial(trial: EdgeTrial) -> str:
    edge = trial.edge
    if edge.when is None:
        return f"-> {edge.target!r} always matches"
    values = ", ".join(str(value) for value in trial.values)
    verdict = "matched" if trial.matched else "did not match"
    return f"-> {edge.target!r} when {edge.when} {verdict}" + (f" ({values})" if values else "")


def _walk_back(parents: dict[str, str], start: str, goal: str) -> list[str]:
    path = [goal]
    while path[-1] != start:
        path.append(parents[path[-1]])
    path.reverse()
    return path


def _require_str(argument: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"argument {argument!r} must be str, not {type(value).__name__}")


# Data and drawings.


def _edge_data(edge: Edge) -> dict[str, Any]:
    data: dict[str, Any] = {
        "source": edge.source,
        "target": edge.target,
        "when": edge.when,
        "priority": edge.priority,
    }
    if edge.input_mapping is not None:
        data["input_mapping"] = dict(edge.input_mapping)
    return data


def _checked_mapping(mapping: object) -> dict[str, str] | None:
    if mapping is None:
        return None
    if not isinstance(mapping, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and k and v for k, v in mapping.items()
    ):
        raise ConfigurationError(
            "input_mapping maps payload fields to state paths, both non-empty strings, e.g. "
            "{'invoice_id': 'ticket.invoice'}"
        )
    return dict(mapping)


def _check_header(data: object) -> None:
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"graph data must be a mapping, not {type(data).__name__}")
    if data.get("format") != GRAPH_FORMAT:
        raise ConfigurationError(f"graph data must have format {GRAPH_FORMAT!r}")
    version = data.get("version")
    if version != GRAPH_VERSION or isinstance(version, bool):
        raise ConfigurationError(
            f"graph data version {version!r} is not supported; this swarmkit reads "
            f"version {GRAPH_VERSION}"
        )


def _field(data: Mapping[str, Any], key: str, kind: type[_Result], default: _Result) -> _Result:
    value = data.get(key, default)
    if value is default or (isinstance(value, kind) and not isinstance(value, bool)):
        return value
    raise ConfigurationError(f"graph data field {key!r} must be {kind.__name__}, not {value!r}")


def _checked_name(value: object) -> str:
    if not isinstance(value, str):
        raise ConfigurationError(f"a node name in graph data must be a string, not {value!r}")
    return value


def _label(edge: Edge) -> str:
    if edge.priority == 0:
        return edge.when or ""
    return f"(priority {edge.priority}) {edge.when or 'always'}"


def _mermaid_text(text: str) -> str:
    # Mermaid reads #code; as a character: escape its own marker, quotes, markup, controls.
    return "".join(
        f"#{ord(char)};" if char in '"#<>&' or not char.isprintable() else char for char in text
    )


def _dot_text(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n")
    return '"' + "".join(char if char.isprintable() else " " for char in escaped) + '"'


def _llm_edge_data(edge: Edge) -> dict[str, Any]:
    data: dict[str, Any] = {"source": edge.source, "target": edge.target}
    if edge.description is not None:
        data["description"] = edge.description
    return data


def _no_description(source: str, target: str, description: str | None) -> None:
    """A rule edge is decided by its condition: a description would be read by no model."""
    if description is not None:
        raise ConfigurationError(
            f"the rule edge {source!r} -> {target!r} takes no description=: a rule decides it; "
            "give the description to an LLM edge (decided_by='llm'), which the model reads"
        )
