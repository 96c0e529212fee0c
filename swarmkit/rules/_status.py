"""How shadow and active rules agree with the model, read from the journal's verdicts."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from swarmkit.exceptions import RuleLearningError
from swarmkit.graph import Edge, HandoffGraph
from swarmkit.journal import Journal, JournalRecord, read_many
from swarmkit.rules._corpus import CorpusFilter
from swarmkit.rules._evidence import Evidence
from swarmkit.shadow import (
    AUDIT_RECORD,
    AUDITED,
    RULES_LOG,
    SHADOW_MEMBER,
    SHADOW_RECORD,
    parse_verdicts,
    read_rules_log,
    rule_name,
    rule_set_digest,
    rule_sets,
    rule_target,
)

if TYPE_CHECKING:
    from swarmkit.swarm import Swarm

_KINDS = (SHADOW_RECORD, "rule", AUDIT_RECORD)
"""The record kinds status reads whole (the journal decodes no other)."""
_LEADING = {"model_call": (SHADOW_MEMBER, "agent", "turn")}
"""What it reads of model calls: their verdicts (their first member, when they hold any),
and the agent and turn that follow them."""
_LEGACY_KINDS = ("model_call", *_KINDS)
"""What it reads of a session holding verdicts of 0.2's form, which lack the tokens."""
_BATCH = 1000
"""Sessions read in one bulk read."""

Mode = Literal["shadow", "active", "journaled"]
"""How the swarm holds a rule: in shadow, active in its graph, or not at all (only its
journaled verdicts name it)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Disagreement:
    """One decision where a rule fired and the model chose otherwise."""

    session_id: str
    """The session."""
    seq: int
    """The seq of the record holding the verdict (the step)."""
    turn: int
    """The run's turn of the model call."""
    model_target: str | None
    """Where the model handed off (None: it kept the turn)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleStatus:
    """One rule's record against the model."""

    rule: str
    """Its name, ``"source -> target if when"``."""
    agent: str
    """The agent it routes from."""
    target: str
    """The agent it routes to."""
    mode: Mode
    """How the swarm holds it (``journaled`` without a swarm, or for a rule it lacks)."""
    decisions: int
    """Model decisions seen at its agent while it was judged (in shadow, or audited)."""
    evidence: Evidence
    """Agreements in fired decisions, shadow verdicts and audits together."""
    audits: Evidence
    """The part of ``evidence`` from audits of its own decisions as an active rule."""
    decided: int
    """Turns it decided as an active rule (no model call)."""
    calls_saved: int
    """Model calls it would have saved where it fired in shadow."""
    tokens_saved: int
    """Total tokens of those calls, as journaled."""
    disagreements: tuple[Disagreement, ...]
    """Where it fired and the model chose otherwise, in journal order."""
    changes: tuple[Mapping[str, Any], ...] = ()
    """Its promotions and demotions from the journal's rules log, oldest first."""

    @property
    def share(self) -> float:
        """The share of the model decisions it saw that it would take over (fired)."""
        return self.evidence.fired / self.decisions if self.decisions else 0.0

    def to_data(self) -> dict[str, Any]:
        """JSON-safe."""
        return {
            "rule": self.rule,
            "agent": self.agent,
            "target": self.target,
            "mode": self.mode,
            "decisions": self.decisions,
            **self.evidence.to_data(),
            "share": self.share,
            "audits": self.audits.to_data(),
            "decided": self.decided,
            "calls_saved": self.calls_saved,
            "tokens_saved": self.tokens_saved,
            "disagreements": [
                {"session_id": d.session_id, "seq": d.seq, "turn": d.turn, "model": d.model_target}
                for d in self.disagreements
            ],
            "changes": [dict(change) for change in self.changes],
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class RulesStatus:
    """Every shadow and active rule's agreement with the model in a journal."""

    sessions: int
    """Sessions read (after the filter)."""
    rules: tuple[RuleStatus, ...]
    """Each rule: the swarm's in its order (active, then shadow), then the journal's others."""

    def rule(self, name: str) -> RuleStatus:
        """The status of the rule of that name; ``RuleLearningError`` naming those known."""
        for status in self.rules:
            if status.rule == name:
                return status
        known = "; ".join(status.rule for status in self.rules) or "none"
        raise RuleLearningError(f"no rule {name!r} in the journal or the swarm; rules: {known}")

    def to_data(self) -> dict[str, Any]:
        """JSON-safe."""
        return {"sessions": self.sessions, "rules": [rule.to_data() for rule in self.rules]}


@dataclass(kw_only=True, slots=True)
class _Tally:
    """One rule's counts while the journal is read."""

    agent: str
    target: str
    mode: Mode = "journaled"
    decisions: int = 0
    fired: int = 0
    agreements: int = 0
    audited: int = 0
    audit_agreements: int = 0
    decided: int = 0
    calls: int = 0
    tokens: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)
    sorted: bool = True
    """Whether ``disagreements`` is in journal order (counts of rule lists append later)."""

    def status(self, rule: str, changes: Sequence[Mapping[str, Any]]) -> RuleStatus:
        return RuleStatus(
            rule=rule,
            agent=self.agent,
            target=self.target,
            mode=self.mode,
            decisions=self.decisions,
            evidence=Evidence(fired=self.fired, agreements=self.agreements),
            audits=Evidence(fired=self.audited, agreements=self.audit_agreements),
            decided=self.decided,
            calls_saved=self.calls,
            tokens_saved=self.tokens,
            disagreements=tuple(self.disagreements),
            changes=tuple(changes),
        )


async def status(
    journal: Journal,
    swarm: Swarm | None = None,
    *,
    since: float | None = None,
    until: float | None = None,
    session_prefix: str | None = None,
) -> RulesStatus:
    """Each shadow and active rule's agreement with the model over the journal's sessions
    (started in ``[since, until)``, ids starting with ``session_prefix``): decisions seen,
    times fired, agreements with their Wilson 95% bounds, the share it would take over, the
    calls and tokens it would save, the disagreeing sessions with their step. With ``swarm``,
    its rules are listed even where they never fired. ``RuleLearningError`` when the sessions
    hold no rule verdict or decision at all."""
    where = CorpusFilter(since=since, until=until, prefix=session_prefix)
    tallies = _swarm_tallies(swarm)
    infos = sorted(
        (
            info
            for info in await journal.sessions()
            if info.session_id != RULES_LOG and where.admits(info)
        ),
        key=lambda info: info.session_id,
    )
    log = await read_rules_log(journal, rule_lists=True)
    reading = _Reading(tallies, lists={**_swarm_lists(swarm), **rule_sets(log)})
    await _read_all(journal, [info.session_id for info in infos], reading)
    if not reading.held:
        raise RuleLearningError(
            f"the journal's {len(infos)} sessions (after the filters) hold no rule verdicts or "
            "decisions: run the swarm with shadow= rules (or graph rules) to gather them"
        )
    reading.close()
    changes = _changes(log)
    rules = tuple(tally.status(name, changes.get(name, ())) for name, tally in tallies.items())
    return RulesStatus(sessions=len(infos), rules=rules)


def _swarm_tallies(swarm: Swarm | None) -> dict[str, _Tally]:
    tallies: dict[str, _Tally] = {}
    if swarm is None:
        return tallies
    # Active first: a rule kept in shadow too (to be judged again once demoted) is active.
    held: tuple[tuple[Mode, HandoffGraph | None], ...] = (
        ("active", swarm.graph),
        ("shadow", swarm.spec.shadow),
    )
    for mode, graph in held:
        for edge in _rule_edges(graph):
            tallies.setdefault(
                rule_name(edge), _Tally(agent=edge.source, target=edge.target, mode=mode)
            )
    return tallies


def _swarm_lists(swarm: Swarm | None) -> dict[str, tuple[str, tuple[str, ...]]]:
    """The rule lists of the swarm's agents by digest (a journal whose rules log is lost
    still resolves the verdicts of the rules the swarm holds)."""
    lists: dict[str, tuple[str, tuple[str, ...]]] = {}
    graphs = () if swarm is None else (swarm.graph, swarm.spec.shadow)
    for graph in graphs:
        if graph is None:
            continue
        for agent in graph.nodes():
            names = tuple(rule_name(edge) for edge, _ in graph.compiled_edges(agent))
            if names:
                lists[rule_set_digest(agent, names)] = (agent, names)
    return lists


def _rule_edges(graph: HandoffGraph | None) -> Iterable[Edge]:
    return () if graph is None else graph.edge_list()


@dataclass(kw_only=True, slots=True)
class _RuleSet:
    """The counts of one agent's rule list as compact verdicts name it, per rule index."""

    agent: str
    names: tuple[str, ...]
    decisions: int = 0
    fired: list[int] = field(default_factory=list)
    agreements: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    disagreements: list[list[Disagreement]] = field(default_factory=list)

    def __post_init__(self) -> None:
        size = len(self.names)
        self.fired, self.agreements, self.tokens = [0] * size, [0] * size, [0] * size
        self.disagreements = [[] for _ in range(size)]


@dataclass(slots=True)
class _Reading:
    """What status has read so far: the tallies, and the compact verdicts by rule list."""

    tallies: dict[str, _Tally]
    lists: dict[str, tuple[str, tuple[str, ...]]]
    """The rule lists verdicts may name by digest: the rules log's and the swarm's."""
    sets: dict[tuple[str, tuple[str, ...]], _RuleSet] = field(default_factory=dict)
    held: int = 0

    def close(self) -> None:
        """Fold the rule lists' counts into the tallies, disagreements in journal order."""
        for rule_set in self.sets.values():
            for index, name in enumerate(rule_set.names):
                tally = _tally(self.tallies, name, rule_set.agent, rule_target(name))
                tally.decisions += rule_set.decisions
                tally.fired += rule_set.fired[index]
                tally.calls += rule_set.fired[index]
                tally.agreements += rule_set.agreements[index]
                tally.tokens += rule_set.tokens[index]
                found = rule_set.disagreements[index]
                if found:
                    tally.sorted = tally.sorted and not tally.disagreements
                    tally.disagreements.extend(found)
        for tally in self.tallies.values():
            if not tally.sorted:
                tally.disagreements.sort(key=lambda d: (d.session_id, d.seq))


async def _read_all(journal: Journal, ids: Sequence[str], reading: _Reading) -> None:
    """Read the sessions' verdicts in bulk; a session holding the older form is read again
    with its model calls (whose tokens that form lacks)."""
    # Reading decodes many small objects with no cycles: the cyclic collector would only
    # walk them again and again.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for start in range(0, len(ids), _BATCH):
            asked = ids[start : start + _BATCH]
            batch = await read_many(journal, asked, kinds=_KINDS, leading=_LEADING)
            legacy = [sid for sid, records in batch.items() if not _read_session(records, reading)]
            if legacy:
                for records in (await read_many(journal, legacy, kinds=_LEGACY_KINDS)).values():
                    _read_legacy(records, reading)
    finally:
        if collecting:
            gc.enable()


def _read_session(records: Sequence[JournalRecord], reading: _Reading) -> bool:
    """Count one session's compact verdicts, rule decisions and audits; False (and nothing
    counted) when it holds verdicts of the older form."""
    if any(r.kind == SHADOW_RECORD and "verdicts" in r.data for r in records):
        return False
    _read_legacy(records, reading)
    return True


def _read_legacy(records: Sequence[JournalRecord], reading: _Reading) -> None:
    """Count one session's records, verdicts of any form: those in model calls, those in
    records of their own; the tokens of 0.2's form come from the model calls before them."""
    tokens, tallies = 0, reading.tallies
    for record in records:
        kind = record.kind
        if kind == "model_call":
            member = record.data.get(SHADOW_MEMBER)
            if member is None:  # a call with no verdicts
                tokens = _tokens(record.data)
                continue
            verdicts = parse_verdicts(member, record.session_id, record.seq)
            verdicts["agent"], verdicts["turn"] = record.data.get("agent"), record.data.get("turn")
            _compact(record, verdicts, reading)
        elif kind == SHADOW_RECORD:
            if "verdicts" in record.data:
                _legacy(record, tokens, tallies)
            else:
                _compact(record, record.data, reading)
        elif kind == "rule":
            _decided(record.data, tallies)
        elif kind == AUDIT_RECORD:
            _audit(record, tallies)
        else:
            continue
        reading.held += 1


def _compact(record: JournalRecord, data: Mapping[str, Any], reading: _Reading) -> None:
    digest = data.get("set")
    key = (data["agent"], tuple(data["rules"])) if digest is None else reading.lists.get(digest)
    if key is None:  # a list no rules log here names: its rules by number
        size = 1 + max((*data["fired"], *data["agrees"]), default=-1)
        key = (data["agent"], _unnamed(data["agent"], str(digest), size))  # merged by name
    rule_set = reading.sets.get(key)
    if rule_set is None:
        rule_set = reading.sets[key] = _RuleSet(agent=key[0], names=key[1])
    rule_set.decisions += 1
    fired, agrees, tokens = data["fired"], data["agrees"], data["tokens"]
    for index in fired:
        rule_set.fired[index] += 1
        rule_set.tokens[index] += tokens
    for index in agrees:
        rule_set.agreements[index] += 1
    if len(agrees) != len(fired):
        disagreement = _disagreement(record, data)
        for index in set(fired).difference(agrees):
            rule_set.disagreements[index].append(disagreement)


def _unnamed(agent: str, digest: str, size: int) -> tuple[str, ...]:
    return tuple(f"{agent} -> rule {index} of unnamed list {digest}" for index in range(size))


def _decided(data: Mapping[str, Any], tallies: dict[str, _Tally]) -> None:
    edge = Edge(source=data["agent"], target=data["target"], when=data.get("condition"))
    _tally(tallies, rule_name(edge), edge.source, edge.target).decided += 1


def _legacy(record: JournalRecord, tokens: int, tallies: dict[str, _Tally]) -> None:
    data = record.data
    for verdict in data["verdicts"]:
        tally = tallies.get(verdict["rule"])
        if tally is None:
            tally = _tally(tallies, verdict["rule"], data["agent"], verdict["target"])
        tally.decisions += 1
        if not verdict["fired"]:
            continue
        tally.fired += 1
        tally.calls += 1
        tally.tokens += tokens
        if verdict["agrees"]:
            tally.agreements += 1
        else:
            tally.disagreements.append(_disagreement(record, data))


def _audit(record: JournalRecord, tallies: dict[str, _Tally]) -> None:
    data = record.data
    tally = _tally(tallies, data["rule"], data["agent"], data["target"])
    tally.decisions += 1
    tally.fired += 1
    tally.audited += 1
    if data["agrees"]:
        tally.agreements += 1
        tally.audit_agreements += 1
    else:
        tally.disagreements.append(_disagreement(record, data))


def _disagreement(record: JournalRecord, data: Mapping[str, Any]) -> Disagreement:
    """Where a rule disagreed: the record holding the verdicts, ``data`` its verdicts."""
    return Disagreement(
        session_id=record.session_id,
        seq=record.seq,
        turn=int(data.get("turn", 0)),
        model_target=data.get("model_target"),
    )


def _tally(tallies: dict[str, _Tally], rule: str, agent: str, target: str) -> _Tally:
    tally = tallies.get(rule)
    if tally is None:
        tally = tallies[rule] = _Tally(agent=agent, target=target)
    return tally


def _tokens(data: Mapping[str, Any]) -> int:
    response = data.get("response")
    usage = response.get("usage") if isinstance(response, Mapping) else None
    total = usage.get("total_tokens") if isinstance(usage, Mapping) else None
    return total if isinstance(total, int) else 0


def _changes(log: Sequence[JournalRecord]) -> dict[str, list[Mapping[str, Any]]]:
    changes: dict[str, list[Mapping[str, Any]]] = {}
    for record in log:
        rule = record.data.get("rule")
        if isinstance(rule, str) and record.kind != AUDITED:  # audits count in the sessions
            changes.setdefault(rule, []).append(
                {"kind": record.kind, "at": record.at, **record.data}
            )
    return changes
