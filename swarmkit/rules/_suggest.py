"""Suggest: rules learned from the model's journaled routing, checked on held-out sessions."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from swarmkit.exceptions import RuleLearningError
from swarmkit.graph import Edge, HandoffGraph
from swarmkit.journal import Journal
from swarmkit.redaction import DEFAULT_SECRET_PATTERNS, Redactor
from swarmkit.rules._columns import judge_columns
from swarmkit.rules._corpus import (
    RESERVED_KEY,
    CorpusFilter,
    Visit,
    collector_paused,
    held_out,
    model_decided,
)
from swarmkit.rules._features import Column, Test, bitset, candidates, literal, word_tests
from swarmkit.rules._judge import with_rules
from swarmkit.rules._learn import Contested, Learned, Learning, learn
from swarmkit.rules._rows import (
    Decisions,
    Holds,
    Row,
    context_of,
    decisions_of,
    read_decisions,
    state_of,
    words_of,
)
from swarmkit.rules._withheld import KEPT, Withheld, conflicting, held_out_failure, refused

MAX_EXAMPLES = 10
"""How many counter-example sessions a suggestion lists."""
INCONSISTENT_SHARE = 0.1
"""A group of identical contexts is inconsistent when its second most chosen target holds at
least this share of it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CounterExample:
    """A journaled decision where the rule holds and the model chose otherwise."""

    session_id: str
    """The session."""
    seq: int
    """The journal seq of the model call (or rule record) where the rule would have fired."""
    chosen: str | None
    """Where the model sent the turn; ``None`` when it kept it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Suggestion:
    """One proposed rule with its evidence."""

    source: str
    """The agent the rule routes from."""
    target: str
    """The agent it hands off to."""
    when: str
    """The condition, in the HandoffGraph's language."""
    priority: int
    """Its priority: after every edge the swarm's graph already has from ``source``."""
    precision: float
    """On held-out sessions: the share of the decisions it takes where the model chose the same."""
    support: int
    """On held-out sessions: how many model decisions it takes."""
    agreed: int
    """Of those, how many went where the model sent them."""
    decided: int
    """In the whole corpus: how many model decisions it would take."""
    saved_calls: int
    """In the whole corpus: model calls it would have saved where it agrees with the model."""
    saved_tokens: int
    """In the whole corpus: the tokens of those calls."""
    counter_examples: tuple[CounterExample, ...]
    """Up to ``MAX_EXAMPLES`` decisions in the corpus where the model chose otherwise."""
    counter_count: int
    """How many such decisions the corpus holds in all."""
    conflicts: tuple[str, ...] = ()
    """How it meets the swarm's current graph (an edge that fires first, the same condition
    to another target, a journaled rule decision it contradicts)."""

    @property
    def line(self) -> str:
        """The exact ``graph.add_edge(...)`` line to paste."""
        return (
            f"graph.add_edge({self.source!r}, {self.target!r}, when={self.when!r}, "
            f"priority={self.priority})"
        )

    @property
    def edge(self) -> Edge:
        """The rule as a graph edge."""
        return Edge(source=self.source, target=self.target, when=self.when, priority=self.priority)


@dataclass(frozen=True, kw_only=True, slots=True)
class Inconsistency:
    """Decisions with the same context (on the learned features) the model routed differently."""

    source: str
    """The agent deciding."""
    context: str
    """The shared context, written as a condition."""
    counts: Mapping[str, int]
    """Target (or ``KEPT``) -> how many decisions went there."""
    sessions: Mapping[str, tuple[str, ...]]
    """Target -> a few sessions that went there."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SuggestReport:
    """What a journal says about rules the model is paying for."""

    sessions: int
    """Sessions read (after filters)."""
    held_out_sessions: int
    """Of those, how many are held out to check the rules."""
    decisions: Mapping[str, int]
    """Source agent -> model decisions read (handoffs, and answers where it could hand off)."""
    suggestions: tuple[Suggestion, ...]
    """Rules that meet both thresholds on held-out sessions, per source in priority order."""
    inconsistencies: tuple[Inconsistency, ...]
    """Groups of identical contexts the model routed differently."""
    withheld: tuple[Withheld, ...]
    """Rules the learner found and did not suggest, each with its reason (too little held-out
    support, too low held-out precision, conflicting training decisions, a rule cycle)."""
    left_out: Mapping[str, str]
    """Context paths never used in a condition, and why."""
    on_cycle: str = "error"
    """The ``on_cycle`` of the graph the suggestions are exported as."""
    damaged: Mapping[str, str] = field(default_factory=dict)
    """Sessions left out because a record is damaged: session id -> which record and why."""

    def graph(self) -> HandoffGraph:
        """The suggestions as a graph of their own (what ``to_dict`` exports)."""
        graph = HandoffGraph(on_cycle=self.on_cycle)
        for suggestion in self.suggestions:
            graph.add_edge(
                suggestion.source, suggestion.target, suggestion.when, priority=suggestion.priority
            )
        return graph

    def to_dict(self) -> dict[str, Any]:
        """The suggestions as the graph's ``to_dict`` data; ``HandoffGraph.from_dict`` loads it."""
        return self.graph().to_dict()


async def suggest_rules(
    journal: Journal,
    *,
    graph: HandoffGraph | None = None,
    agent: str | None = None,
    min_precision: float = 0.98,
    min_support: int = 20,
    where: CorpusFilter | None = None,
    redactor: Redactor | None = None,
    held_out_fraction: float = 0.3,
    held_out_by: Callable[[str], str] | None = None,
) -> SuggestReport:
    """Learn rules from the journal's model-decided handoffs (see the module docs).

    ``graph`` is the swarm's current graph (conflicts are reported against it); ``agent``
    limits the learning to one source agent; ``redactor`` says which keys are secret (the
    swarm's ``redactor``; the default patterns otherwise). ``held_out_by`` maps a session id
    to the group it is held out with (sessions that repeat one scenario, such as an eval
    task's trials, belong on the same side); by default each session is its own group.
    """
    _check_thresholds(min_precision, min_support, held_out_fraction)
    return suggest_from_decisions(
        await read_decisions(journal, where),
        graph=graph,
        agent=agent,
        min_precision=min_precision,
        min_support=min_support,
        is_secret=(redactor or Redactor.of(DEFAULT_SECRET_PATTERNS)).is_secret,
        held_out_fraction=held_out_fraction,
        held_out_by=held_out_by,
    )


def suggest_from_visits(
    visits: Sequence[Visit],
    *,
    graph: HandoffGraph | None,
    agent: str | None,
    min_precision: float,
    min_support: int,
    is_secret: Callable[[str], bool],
    held_out_fraction: float = 0.3,
    damaged: Mapping[str, str] | None = None,
    held_out_by: Callable[[str], str] | None = None,
) -> SuggestReport:
    """``suggest_rules`` on turns already read (``damaged``: the sessions left out)."""
    return suggest_from_decisions(
        decisions_of(visits, damaged),
        graph=graph,
        agent=agent,
        min_precision=min_precision,
        min_support=min_support,
        is_secret=is_secret,
        held_out_fraction=held_out_fraction,
        held_out_by=held_out_by,
    )


def suggest_from_decisions(
    decisions: Decisions,
    *,
    graph: HandoffGraph | None,
    agent: str | None,
    min_precision: float,
    min_support: int,
    is_secret: Callable[[str], bool],
    held_out_fraction: float,
    held_out_by: Callable[[str], str] | None,
) -> SuggestReport:
    """``suggest_rules`` on the decisions read."""
    decided = [row for row in model_decided(decisions.rows) if agent in (None, row.agent)]
    _check_evidence(
        decisions.turns, decided, agent, min_support, held_out_fraction, damaged=decisions.damaged
    )
    by_source = _by_source(decided)
    sessions = set(decisions.sessions)
    group = held_out_by or str
    held = {sid for sid in sessions if held_out(group(sid), held_out_fraction)}
    found = _Findings()
    on_cycle = graph.on_cycle if graph is not None else "error"
    accepted_graph = graph
    # Learning builds short-lived objects beside the rows' millions that live on: the cyclic
    # collector would walk those again and again, and learning makes no cycles worth it.
    with collector_paused():
        for source in sorted(by_source):
            accepted_graph = _source_findings(
                found,
                source,
                by_source[source],
                visits=decisions.rows,
                held=held,
                graph=graph,
                base=accepted_graph,
                is_secret=is_secret,
                min_precision=min_precision,
                min_support=min_support,
            )
    report = found.report(sessions=sessions, held=held, by_source=by_source, on_cycle=on_cycle)
    return replace(report, damaged=dict(decisions.damaged))


def _source_findings(
    found: _Findings,
    source: str,
    rows: Sequence[Row],
    *,
    visits: Sequence[Row],
    held: set[str],
    graph: HandoffGraph | None,
    base: HandoffGraph | None,
    is_secret: Callable[[str], bool],
    min_precision: float,
    min_support: int,
) -> HandoffGraph:
    """Learn and judge one source's rules into ``found``; the graph with those kept added."""
    learning, left_out, columns = _learn_source(
        rows, held, min_precision=min_precision, min_support=min_support, is_secret=is_secret
    )
    found.left_out.update(left_out)
    holds = _holds(source, rows, learning, graph, columns)
    del columns  # the learner's columns: judging is done with them
    kept, withheld = _check_source(
        source,
        learning.rules,
        rows,
        holds,
        visits=visits,
        held=held,
        graph=graph,
        base=base,
        min_precision=min_precision,
        min_support=min_support,
    )
    found.suggestions.extend(kept)
    found.withheld.extend(withheld)
    found.withheld.extend(_conflicting(source, learning.contested, min_precision))
    found.inconsistent.extend(_inconsistencies(source, rows, learning.atoms, holds))
    return with_rules(base, [s.edge for s in kept])


def _damaged_note(damaged: Mapping[str, str]) -> str:
    """One line on the sessions left out for a damaged record: how many, and the first."""
    count = len(damaged)
    first = next(iter(damaged.values()))
    sessions = "1 session was" if count == 1 else f"{count} sessions were"
    return f"{sessions} left out for a damaged record ({first})"


def _by_source(decided: Sequence[Row]) -> dict[str, list[Row]]:
    """The model's decisions grouped by the agent that made them, in journal order."""
    by_source: dict[str, list[Row]] = {}
    for visit in decided:
        by_source.setdefault(visit.agent, []).append(visit)
    return by_source


@dataclass(kw_only=True, slots=True)
class _Findings:
    """What the sources' rules came to, gathered one source at a time in name order."""

    suggestions: list[Suggestion] = field(default_factory=list)
    withheld: list[Withheld] = field(default_factory=list)
    inconsistent: list[Inconsistency] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)

    def report(
        self,
        *,
        sessions: set[str],
        held: set[str],
        by_source: Mapping[str, Sequence[Row]],
        on_cycle: str,
    ) -> SuggestReport:
        """The report of these findings on ``sessions``, ``held`` of them held out."""
        return SuggestReport(
            sessions=len(sessions),
            held_out_sessions=len(held),
            decisions={source: len(rows) for source, rows in sorted(by_source.items())},
            suggestions=tuple(self.suggestions),
            inconsistencies=tuple(self.inconsistent),
            withheld=tuple(self.withheld),
            left_out=dict(sorted(self.left_out.items())),
            on_cycle=on_cycle,
        )


def _check_thresholds(min_precision: float, min_support: int, fraction: float) -> None:
    if not 0 < min_precision <= 1:
        raise RuleLearningError(f"min_precision must be in (0, 1], got {min_precision!r}")
    if isinstance(min_support, bool) or not isinstance(min_support, int) or min_support < 1:
        raise RuleLearningError(f"min_support must be a positive int, got {min_support!r}")
    if not 0 < fraction < 1:
        raise RuleLearningError(f"the held-out fraction must be in (0, 1), got {fraction!r}")


def _check_evidence(
    turns: int,
    decided: Sequence[Row],
    agent: str | None,
    min_support: int,
    fraction: float,
    *,
    damaged: Mapping[str, str] | None,
) -> None:
    """Enough decisions to learn from; when not, the sessions left out are named too."""
    try:
        _check_enough(turns, decided, agent, min_support, fraction)
    except RuleLearningError as exc:
        if damaged:  # the sessions left out may be why the evidence is short
            raise RuleLearningError(f"{exc}; {_damaged_note(damaged)}") from None
        raise


def _check_enough(
    turns: int,
    decided: Sequence[Row],
    agent: str | None,
    min_support: int,
    fraction: float,
) -> None:
    handoffs = sum(1 for visit in decided if visit.outcome == "llm")
    if not turns:
        raise RuleLearningError(
            "the journal holds no agent turns to learn from (no sessions, or the filters left "
            "none); run the swarm with a journal first, or widen --since/--until/--prefix/--tag"
        )
    if handoffs == 0:
        who = f" by agent {agent!r}" if agent else ""
        raise RuleLearningError(
            f"the journal holds no model-decided handoffs{who} ({turns} agent turns read): "
            "there is nothing a rule could save; check --agent, or run more sessions"
        )
    needed = int(min_support / fraction) + 1
    if len(decided) < min_support or handoffs < min_support:
        raise RuleLearningError(
            f"{handoffs} model-decided handoffs are too few for --min-support {min_support}: "
            f"each rule needs {min_support} decisions in the held-out sessions (about "
            f"{fraction:.0%} of them), so about {needed} in all; lower --min-support or journal "
            "more sessions"
        )


def _learn_source(
    rows: Sequence[Row],
    held: set[str],
    *,
    min_precision: float,
    min_support: int,
    is_secret: Callable[[str], bool],
) -> tuple[Learning, dict[str, str], Mapping[str, Column]]:
    contexts = (context_of(row.points[-1]) for row in rows)
    found = candidates(contexts, is_secret=is_secret, skip=RESERVED_KEY)
    tests = found.tests
    labels: dict[str | None, list[int]] = {}
    train_rows: list[int] = []
    for index, visit in enumerate(rows):
        labels.setdefault(visit.target if visit.outcome == "llm" else None, []).append(index)
        if visit.session_id not in held:
            train_rows.append(index)
    label_bits = {target: bitset(indices) for target, indices in labels.items()}
    words = [words_of(row.points[-1]) for row in rows]
    tests = [*tests, *word_tests(words, labels, train_rows, min_support=min_support)]
    # The held-out part checks the thresholds; on the training part a rule needs the same
    # support, which its ~2x larger size gives any rule that can pass.
    learning = learn(
        tests, label_bits, bitset(train_rows), min_precision=min_precision, min_support=min_support
    )
    return learning, dict(found.left_out), found.columns


def _priorities(source: str, graph: HandoffGraph | None, count: int) -> list[int]:
    """Priorities that keep a rule list's order and put it after the graph's own edges."""
    existing = (
        [edge.priority for edge in graph.edge_list(source)] if graph and source in graph else []
    )
    if not existing:
        return [count - index - 1 for index in range(count)]
    low = min(existing)
    return [low - 1 - index for index in range(count)]


def _holds(
    source: str,
    rows: Sequence[Row],
    learning: Learning,
    graph: HandoffGraph | None,
    columns: Mapping[str, Column],
) -> Holds:
    """Which of the source's conditions (the graph's own and the learned) hold where, and
    the rows' values on the paths inconsistencies are grouped by. With no edges of the
    graph's own, the learned rules are read off the learner's columns where they can be."""
    own = _own(source, graph)
    whens = [*(edge.when for edge in own), *(r.when for r in learning.rules)]
    equal = _equal_paths(learning.atoms)
    judged = None
    if not own:
        rules = [rule.tests for rule in learning.rules]
        judged = judge_columns(rules, columns, rows, equal=equal, spell=_equality)
    return Holds(source, rows, whens, equal, _equality, judged=judged)


def _own(source: str, graph: HandoffGraph | None) -> list[Edge]:
    """The graph's own edges from ``source``, in the order it tries them."""
    return graph.edge_list(source) if graph is not None and source in graph else []


def _check_source(
    source: str,
    learned: Sequence[Learned],
    rows: Sequence[Row],
    holds: Holds,
    *,
    visits: Sequence[Row],
    held: set[str],
    graph: HandoffGraph | None,
    base: HandoffGraph | None,
    min_precision: float,
    min_support: int,
) -> tuple[list[Suggestion], list[Withheld]]:
    """Keep the learned rules that meet the thresholds on held-out decisions, judging the
    whole list as the graph would run it; re-judge after dropping any that fail."""
    kept = list(learned)
    tried = {id(rule): len(_own(source, graph)) + index for index, rule in enumerate(learned)}
    withheld: list[Withheld] = []
    while True:
        priorities = _priorities(source, graph, len(kept))
        edges = [
            Edge(source=source, target=rule.target, when=rule.when, priority=priority)
            for rule, priority in zip(kept, priorities, strict=True)
        ]
        refusal = _refusal(base, edges)
        if refusal is not None:
            withheld.append(refused(edges[refusal[0]], refusal[1]))
            del kept[refusal[0]]
            continue
        judged = _Judged(
            source=source, edges=edges, tried=[tried[id(rule)] for rule in kept], graph=graph
        )
        evidence = _evidence(judged, rows, holds, merged=with_rules(base, edges), held=held)
        drop = _first_failing(edges, evidence, min_precision=min_precision, min_support=min_support)
        if drop is None:
            break
        failed = evidence[edges[drop].when or ""]
        withheld.append(
            held_out_failure(
                edges[drop], failed.chosen, min_precision=min_precision, min_support=min_support
            )
        )
        del kept[drop]
    suggestions = [
        _suggestion(edge, evidence[edge.when or ""], _conflicts(edge, graph, visits))
        for edge in edges
    ]
    return suggestions, withheld


def _refusal(base: HandoffGraph | None, edges: Sequence[Edge]) -> tuple[int, str] | None:
    """The first edge the graph refuses after ``base``'s and the edges before it, and why."""
    try:
        with_rules(base, edges)
    except RuleLearningError:
        for index in range(len(edges)):
            try:
                with_rules(base, edges[: index + 1])
            except RuleLearningError as exc:
                return index, str(exc)
    return None


def _conflicting(
    source: str, contested: Sequence[Contested], min_precision: float
) -> list[Withheld]:
    """The rules the training decisions contradicted, as the report lists them."""
    return [
        conflicting(
            Edge(source=source, target=found.rule.target, when=found.rule.when),
            {KEPT if label is None else label: count for label, count in found.counts.items()},
            min_precision=min_precision,
        )
        for found in contested
    ]


def _first_failing(
    edges: Sequence[Edge],
    evidence: Mapping[str, _Evidence],
    *,
    min_precision: float,
    min_support: int,
) -> int | None:
    """The index of the first edge whose held-out evidence misses a threshold, if any."""
    for index, edge in enumerate(edges):
        found = evidence[edge.when or ""]
        if found.support < min_support or found.precision < min_precision:
            return index
    return None


@dataclass(kw_only=True, slots=True)
class _Evidence:
    support: int = 0
    agreed: int = 0
    decided: int = 0
    saved_calls: int = 0
    saved_tokens: int = 0
    counter: list[CounterExample] = field(default_factory=list)
    chosen: Counter[str] = field(default_factory=Counter)
    """Held-out decisions it takes: where the model sent them (``KEPT`` when it kept the turn)."""

    @property
    def precision(self) -> float:
        return self.agreed / self.support if self.support else 0.0


@dataclass(frozen=True, kw_only=True, slots=True)
class _Judged:
    """A rule list being judged: its edges, and each one's index among the source's tried
    conditions (the graph's own edges from the source come first)."""

    source: str
    edges: Sequence[Edge]
    tried: Sequence[int]
    graph: HandoffGraph | None


def _evidence(
    judged: _Judged,
    rows: Sequence[Row],
    holds: Holds,
    *,
    merged: HandoffGraph,
    held: set[str],
) -> dict[str, _Evidence]:
    """Each edge's evidence: the rows where, routing from the source as ``merged`` does, it
    is the edge that fires first."""
    source, edges = judged.source, judged.edges
    found = {edge.when or "": _Evidence() for edge in edges}
    ours = {(edge.target, edge.when) for edge in edges}
    order = merged.edge_list(source)
    index_of = {
        (edge.target, edge.when, edge.priority): index
        for index, edge in enumerate([*_own(source, judged.graph), *edges])
    }
    own_count = len(index_of) - len(edges)
    tried = [
        index if index < own_count else judged.tried[index - own_count]
        for index in (index_of[(edge.target, edge.when, edge.priority)] for edge in order)
    ]
    for row, fired in zip(rows, holds.fires(tried), strict=True):
        if fired is not None:
            edge = order[fired[1]]
            if (edge.target, edge.when) in ours:
                _count(found[edge.when or ""], row, fired[0], edge, row.session_id in held)
    return found


def _count(evidence: _Evidence, row: Row, at: int, edge: Edge, is_held: bool) -> None:
    """Count a row where ``edge`` fires first, at its point ``at``."""
    agrees = row.outcome in ("llm", "rule") and edge.target == row.target
    chosen = row.target if row.outcome != "answer" else None
    evidence.decided += 1
    if is_held:
        evidence.support += 1
        evidence.agreed += agrees
        evidence.chosen[chosen or KEPT] += 1
    if agrees:
        # Model calls from the firing point on (a rule point costs nothing), and their tokens.
        evidence.saved_calls += sum(1 for point in row.points[at:] if point.call)
        evidence.saved_tokens += sum(point.tokens for point in row.points[at:])
    else:
        evidence.counter.append(
            CounterExample(session_id=row.session_id, seq=row.points[at].seq, chosen=chosen)
        )


def _suggestion(edge: Edge, evidence: _Evidence, conflicts: tuple[str, ...]) -> Suggestion:
    return Suggestion(
        source=edge.source,
        target=edge.target,
        when=edge.when or "",
        priority=edge.priority,
        precision=evidence.precision,
        support=evidence.support,
        agreed=evidence.agreed,
        decided=evidence.decided,
        saved_calls=evidence.saved_calls,
        saved_tokens=evidence.saved_tokens,
        counter_examples=tuple(evidence.counter[:MAX_EXAMPLES]),
        counter_count=len(evidence.counter),
        conflicts=conflicts,
    )


def _conflicts(edge: Edge, graph: HandoffGraph | None, visits: Sequence[Row]) -> tuple[str, ...]:
    """How the rule meets the edges the swarm's graph already has from its source."""
    if graph is None or edge.source not in graph:
        return ()
    found: list[str] = []
    own = HandoffGraph(on_cycle="allow")
    own.add_edge(edge.source, edge.target, edge.when)
    for existing in graph.edge_list(edge.source):
        shown = f"{existing.source} -> {existing.target} when {existing.when or 'always'}"
        if existing.when is None:
            found.append(
                f"the existing edge {shown} always fires first: this rule would never fire"
            )
        elif existing.when == edge.when and existing.target != edge.target:
            found.append(f"the existing edge {shown} has the same condition and fires first")
    contradicted: Counter[str] = Counter()
    for visit in visits:
        if visit.agent != edge.source or visit.outcome != "rule" or visit.target == edge.target:
            continue
        point = visit.points[-1] if visit.points else None
        if point is not None and own.route(edge.source, state_of(point)) is not None:
            contradicted[str(visit.target)] += 1
    for target, count in sorted(contradicted.items()):
        found.append(
            f"holds on {count} journaled decision(s) an existing rule sent to {target!r}; the "
            "existing rule keeps them (it is tried first)"
        )
    return tuple(found)


def _equal_paths(atoms: Sequence[Test]) -> list[str]:
    """The paths inconsistencies group by value: those of the equality atoms."""
    return list(dict.fromkeys(a.path for a in atoms if " == " in a.text))


def _inconsistencies(
    source: str, rows: Sequence[Row], atoms: Sequence[Test], holds: Holds
) -> list[Inconsistency]:
    """Rows grouped by the learned features: an equality's path by its value, any other atom
    by whether it holds; groups the model split between targets are reported."""
    if not atoms:
        return []
    equal_paths = _equal_paths(atoms)
    others = [a for a in atoms if " == " not in a.text and a.path not in equal_paths]
    count = len(rows)
    # A row's group: its equalities, then a "1" or "0" per other atom (all made at C speed).
    # The keys are made twice (to count, to find examples), never held: 100,000 of them
    # would be megabytes at the learner's peak.
    marks = [format(a.bits, f"0{count}b")[::-1] for a in others]
    chosen = [row.target if row.outcome == "llm" and row.target else KEPT for row in rows]
    groups: dict[tuple[Any, ...], Counter[str]] = {}
    keys = zip(holds.equalities, *marks, strict=True)
    for (key, target), number in Counter(zip(keys, chosen, strict=True)).items():
        groups.setdefault(key, Counter())[target] = number
    split = {key: counts for key, counts in groups.items() if _split(counts)}
    keys = zip(holds.equalities, *marks, strict=True)
    examples = _examples(split, keys, chosen, rows)
    texts = [a.text for a in others]
    found = [
        Inconsistency(
            source=source,
            context=_grouped(key, texts),
            counts=dict(sorted(counts.items(), key=lambda item: (-item[1], item[0]))),
            sessions={t: tuple(s) for t, s in sorted(examples[key].items())},
        )
        for key, counts in split.items()
    ]
    found.sort(key=lambda item: (-sum(item.counts.values()), item.context))
    return found


def _split(counts: Counter[str]) -> bool:
    """Whether the model split a group: its second target holds a share of it, twice at least."""
    ranked = counts.most_common()
    total = sum(counts.values())
    return len(ranked) > 1 and ranked[1][1] >= INCONSISTENT_SHARE * total and ranked[1][1] > 1


def _examples(
    split: Mapping[tuple[Any, ...], Counter[str]],
    keys: Iterator[tuple[Any, ...]],
    chosen: Sequence[str],
    rows: Sequence[Row],
) -> dict[tuple[Any, ...], dict[str, list[str]]]:
    """The first three sessions of each split group that went to each target (``keys``:
    each row's group, in row order)."""
    examples: dict[tuple[Any, ...], dict[str, list[str]]] = {key: {} for key in split}
    for index, key in enumerate(keys):
        if key in split:
            found = examples[key].setdefault(chosen[index], [])
            if len(found) < 3:
                found.append(rows[index].session_id)
    return examples


def _grouped(key: tuple[Any, ...], texts: Sequence[str]) -> str:
    """A group's shared context, written as a condition."""
    parts = list(key[0])
    for text, mark in zip(texts, key[1:], strict=True):
        parts.append(text if mark == "1" else f"not ({text})")
    return " and ".join(parts)


def _equality(state: Mapping[str, Any], path: str) -> str:
    value: Any = state
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if isinstance(value, str | bool | int | float) or value is None:
        key = (path, value.__class__, value)  # True and 1 are one key, but not one literal
        spelt = _SPELT.get(key)
        if spelt is None:
            spelt = f"{path} == {literal(value)}"
            if len(_SPELT) < 65_536:
                _SPELT[key] = spelt
        return spelt
    return f"{path} == {json.dumps(value, sort_keys=True)}"


_SPELT: dict[tuple[str, type, Any], str] = {}
"""``path == value`` texts spelt so far: a path holds the same few values in most rows."""
