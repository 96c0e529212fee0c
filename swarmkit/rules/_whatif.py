"""What-if: a journal replayed with proposed rules added, offline, with zero model calls."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from swarmkit.bounds import json_problem
from swarmkit.exceptions import ConfigurationError, RuleLearningError
from swarmkit.graph import Edge, HandoffGraph
from swarmkit.journal import Journal
from swarmkit.rules._corpus import CorpusFilter, Visit, read_corpus
from swarmkit.rules._judge import Verdict, judge, with_rules

SessionStatus = Literal["unchanged", "same_route", "changed"]
"""``unchanged``: no rule fires, the run would be the journaled one. ``same_route``: rules
decide some turns the model decided, and go where the model went. ``changed``: a rule routes
differently; what follows that step cannot be known offline."""

UNKNOWN_AFTER = (
    "steps after a changed decision cannot be known offline (the next agent, its model calls "
    "and tools would differ); re-run those sessions against a model to see them"
)
"""The note a what-if report carries: steps after the first changed decision are not shown."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Change:
    """The first step of a session where the rules route differently from the journal."""

    seq: int
    """The journal seq of the model call (or rule record) where the new decision falls."""
    agent: str
    """The agent deciding."""
    turn: int
    """The run's turn at that step."""
    journaled: str
    """What the journal did: ``model -> billing``, ``model kept the turn``, ``rule -> x``."""
    now: str
    """What the rules do there: ``rule -> sales (when tier == 'gold')`` or ``model decides``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionWhatIf:
    """One session replayed with the rules."""

    session_id: str
    """The session."""
    status: SessionStatus
    """What the rules change in it."""
    rule_decided: int
    """Turns the model decided in the journal that a proposed rule now decides (up to and
    including a changed session's change, when a proposed rule makes it)."""
    agreed: int
    """Of those, how many go where the model went (all but the change)."""
    saved_calls: int
    """Model calls those agreeing rules save."""
    saved_tokens: int
    """Their tokens."""
    change: Change | None = None
    """The first step routed differently, for a changed session."""


@dataclass(frozen=True, kw_only=True, slots=True)
class WhatIfReport:
    """Every session of the corpus replayed with the rules."""

    sessions: tuple[SessionWhatIf, ...]
    """Per session, in session id order."""
    rules: tuple[Edge, ...]
    """The proposed rules."""
    damaged: Mapping[str, str] = field(default_factory=dict)
    """Sessions left out because a record is damaged: session id -> which record and why."""

    def count(self, status: SessionStatus) -> int:
        """How many sessions have this status."""
        return sum(1 for session in self.sessions if session.status == status)

    @property
    def agreed(self) -> int:
        """Turns the model decided that a proposed rule decides the same way, in the same-route
        sessions (the summary's count; a changed session's are in its own ``agreed``)."""
        return sum(s.agreed for s in self.sessions if s.status == "same_route")

    @property
    def saved_calls(self) -> int:
        """Model calls saved over the corpus."""
        return sum(session.saved_calls for session in self.sessions)

    @property
    def saved_tokens(self) -> int:
        """Tokens saved over the corpus."""
        return sum(session.saved_tokens for session in self.sessions)

    @property
    def changed(self) -> tuple[SessionWhatIf, ...]:
        """The sessions a rule routes differently."""
        return tuple(session for session in self.sessions if session.status == "changed")


def load_rules(path: str | Path, *, agents: Collection[str] | None = None) -> HandoffGraph:
    """The rules file (the graph's ``to_dict`` data as JSON) as a graph; ``RuleLearningError``
    when it does not parse or names an agent not in ``agents``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleLearningError(f"cannot read the rules file {path}: {exc}") from exc
    # A graph's data nests four levels: anything far deeper is refused before the parser
    # (which recurses once a level) reads it.
    problem = json_problem(text)
    if problem is not None:
        raise RuleLearningError(
            f"the rules file {path} is not a HandoffGraph's data: {problem}; write it with "
            "`swarmkit rules suggest --out FILE`"
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RuleLearningError(
            f"the rules file {path} is not JSON ({exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}); write it with `swarmkit rules suggest --out FILE`"
        ) from exc
    return rules_from_data(data, agents=agents, where=str(path))


def rules_from_data(
    data: Any, *, agents: Collection[str] | None = None, where: str = "the rules"
) -> HandoffGraph:
    """Rules as ``to_dict`` data, checked like ``load_rules``."""
    try:
        graph = HandoffGraph.from_dict(data)
    except (ConfigurationError, TypeError) as exc:
        raise RuleLearningError(
            f"{where} is not a HandoffGraph's data (HandoffGraph.to_dict): {exc}"
        ) from exc
    if agents is not None:
        unknown = sorted(
            {name for edge in graph.edge_list() for name in (edge.source, edge.target)}
            - set(agents)
        )
        if unknown:
            raise RuleLearningError(
                f"{where} names agents the swarm does not have: {', '.join(unknown)}; the "
                f"swarm's agents: {', '.join(sorted(agents))}"
            )
    return graph


async def whatif(
    journal: Journal,
    rules: HandoffGraph,
    *,
    graph: HandoffGraph | None = None,
    where: CorpusFilter | None = None,
) -> WhatIfReport:
    """Replay the journal's sessions with ``rules`` added after ``graph``'s edges (the swarm's
    current graph); no model is called."""
    corpus = await read_corpus(journal, where)
    return replace(whatif_visits(corpus.visits, rules, graph=graph), damaged=corpus.damaged)


def whatif_visits(
    visits: Sequence[Visit], rules: HandoffGraph, *, graph: HandoffGraph | None = None
) -> WhatIfReport:
    """``whatif`` on turns already read."""
    new = tuple(rules.edge_list())
    merged = with_rules(graph, new)
    ours = {(edge.source, edge.target, edge.when, edge.priority) for edge in new}
    by_session: dict[str, list[Visit]] = {}
    for visit in visits:
        by_session.setdefault(visit.session_id, []).append(visit)
    return WhatIfReport(
        sessions=tuple(
            _session(session_id, turns, merged, ours) for session_id, turns in by_session.items()
        ),
        rules=new,
    )


def _session(
    session_id: str,
    visits: Sequence[Visit],
    graph: HandoffGraph,
    ours: Collection[tuple[str, str, str | None, int]],
) -> SessionWhatIf:
    decided = agreed = calls = tokens = 0
    for visit in visits:
        if not visit.points:
            continue
        verdict = judge(visit, graph)
        journaled_rule = visit.outcome == "rule"
        if verdict is None:
            if journaled_rule:
                return _changed(session_id, visit, None, (decided, agreed, calls, tokens))
            continue
        edge = verdict.edge
        last = verdict.at == len(visit.points) - 1
        if journaled_rule and last and edge.target == visit.target:
            continue  # the rule that fired in the journal (or one like it) fires again
        proposed = (edge.source, edge.target, edge.when, edge.priority) in ours
        if visit.outcome != "llm" or not verdict.agrees:
            decided += proposed and visit.outcome == "llm"
            return _changed(session_id, visit, verdict, (decided, agreed, calls, tokens))
        if not proposed:
            continue  # the swarm's own graph routes it as the model did: no rule of the proposal
        decided += 1
        agreed += 1
        calls += verdict.saved_calls
        tokens += verdict.saved_tokens
    status: SessionStatus = "same_route" if agreed else "unchanged"
    return SessionWhatIf(
        session_id=session_id,
        status=status,
        rule_decided=decided,
        agreed=agreed,
        saved_calls=calls,
        saved_tokens=tokens,
    )


def _changed(
    session_id: str, visit: Visit, verdict: Verdict | None, totals: tuple[int, int, int, int]
) -> SessionWhatIf:
    decided, agreed, calls, tokens = totals
    at = verdict.at if verdict is not None else len(visit.points) - 1
    point = visit.points[at]
    now = "the model decides" if verdict is None else _rule_text(verdict.edge)
    return SessionWhatIf(
        session_id=session_id,
        status="changed",
        rule_decided=decided,
        agreed=agreed,
        saved_calls=calls,
        saved_tokens=tokens,
        change=Change(
            seq=point.seq,
            agent=visit.agent,
            turn=point.turn,
            journaled=_journaled_text(visit),
            now=now,
        ),
    )


def _rule_text(edge: Edge) -> str:
    return f"rule -> {edge.target} (when {edge.when or 'always'})"


def _journaled_text(visit: Visit) -> str:
    match visit.outcome:
        case "llm":
            return f"model -> {visit.target}"
        case "rule":
            return f"rule -> {visit.target}"
        case "answer":
            return "the model kept the turn"
        case _:
            return f"handoff -> {visit.target} (not by the model)"


def report_data(report: WhatIfReport) -> dict[str, Any]:
    """The report as JSON-safe data (the command's ``--json``)."""
    return {
        "sessions": len(report.sessions),
        "unchanged": report.count("unchanged"),
        "same_route": report.count("same_route"),
        "changed": report.count("changed"),
        "agreed": report.agreed,
        "saved_calls": report.saved_calls,
        "saved_tokens": report.saved_tokens,
        "note": UNKNOWN_AFTER,
        "per_session": [_session_data(session) for session in report.sessions],
        "damaged": dict(report.damaged),
    }


def _session_data(session: SessionWhatIf) -> Mapping[str, Any]:
    data: dict[str, Any] = {
        "session_id": session.session_id,
        "status": session.status,
        "rule_decided": session.rule_decided,
        "agreed": session.agreed,
        "saved_calls": session.saved_calls,
        "saved_tokens": session.saved_tokens,
    }
    if session.change is not None:
        change = session.change
        data["change"] = {
            "seq": change.seq,
            "agent": change.agent,
            "turn": change.turn,
            "journaled": change.journaled,
            "now": change.now,
        }
    return data
