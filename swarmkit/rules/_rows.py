"""Suggest's corpus kept small: the turns that may be decisions, each context packed once.

A large journal's contexts are most of what suggest holds while it learns (100,000 sessions of
30 context paths). So each turn it keeps is a row of plain tuples: a session's context is
packed into one ``marshal`` string shared by its points (unpacked, a fresh dict, only while a
pass reads it) and the loop's facts are a tuple in ``FACT_KEYS`` order. A context ``marshal``
cannot pack (an object of the caller's own in an in-memory journal) is kept as it is.

After learning, one pass per source agent works out which candidate conditions hold at each
point (``Holds``): judging a rule list, however often it is re-judged, then reads bits.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from swarmkit.graph import HandoffGraph
from swarmkit.journal import Journal, JournalRecord, read_many
from swarmkit.messages import USER_WORDS_FACT
from swarmkit.rules._corpus import (
    FACT_KEYS,
    READ_BATCH,
    RESERVED_KEY,
    CorpusFilter,
    DamagedRecord,
    Outcome,
    Point,
    Visit,
    admitted,
    collector_paused,
    may_decide,
    packed_visits,
    tagged,
)
from swarmkit.rules._extracts import PATHS, Extracted, Turned

if TYPE_CHECKING:
    from swarmkit.rules._columns import Judged

_WORDS_AT = FACT_KEYS.index(USER_WORDS_FACT)
_DECODER = json.JSONDecoder()


class Spot(NamedTuple):
    """One consultation of the rules (a ``Point``), kept small."""

    seq: int
    """The journal seq of the model call (or of the ``rule`` record)."""
    tokens: int
    """Total tokens the model call used; 0 for a rule point."""
    call: bool
    """True before a model call; False where a journaled rule fired."""
    context: bytes | str | Mapping[str, Any]
    """The context: packed by ``marshal``, the JSON text a store extracted, or the mapping
    itself when it cannot be packed."""
    facts: tuple[Any, ...] | Mapping[str, Any]
    """The loop's facts in ``FACT_KEYS`` order (or the mapping itself when it holds others)."""


_spot_of: Any = partial(tuple.__new__, Spot)
"""A point's tuple as a ``Spot``, made at C speed (``Spot._make`` is a Python call)."""


class Row(NamedTuple):
    """One turn (a ``Visit``) kept small."""

    session_id: str
    """The session the turn belongs to."""
    agent: str
    """The active agent."""
    outcome: Outcome
    """How the turn ended."""
    target: str | None
    """The agent handed off to; ``None`` when the turn kept control."""
    offered: frozenset[str]
    """The tool names offered at the turn's last model call."""
    points: tuple[Spot, ...]
    """Every consultation of the rules in the turn, in order."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Decisions:
    """What suggest keeps of a journal's sessions."""

    rows: list[Row]
    """The turns that may be decisions, and the turns a rule decided, in session order."""
    turns: int
    """How many agent turns the sessions hold in all."""
    sessions: list[str]
    """The sessions with at least one agent turn."""
    damaged: Mapping[str, str]
    """Sessions left out for a damaged record: session id -> which record and why."""


async def read_decisions(journal: Journal, where: CorpusFilter | None = None) -> Decisions:
    """The journal's turns that may be decisions, packed, read a batch of sessions at a time
    (only the values a decision needs, where the store can extract them)."""
    where = where or CorpusFilter()
    listed = await _admitted_ids(journal, where)
    found = _Found()
    extracted = Extracted()
    with collector_paused():  # see read_corpus
        for start in range(0, len(listed), READ_BATCH):
            ids = listed[start : start + READ_BATCH]
            fast = await _fast_turns(journal, ids, extracted) if where.tag is None else {}
            slow = [session_id for session_id in ids if fast.get(session_id, ()) is None]
            full = await read_many(journal, slow if where.tag is None else ids)
            for session_id in ids:
                turns = fast.get(session_id)
                if turns is not None:
                    found.add_turns(session_id, turns)
                elif session_id in full and tagged(full[session_id], where):
                    found.add_records(session_id, full[session_id])
    return Decisions(
        rows=found.rows, turns=found.turns, sessions=found.sessions, damaged=found.damaged
    )


async def _admitted_ids(journal: Journal, where: CorpusFilter) -> list[str]:
    """The ids of the sessions ``where`` admits, in id order: from a listing of ids and start
    times where the store has one (no summaries built, each with its prompt)."""
    starts = getattr(journal, "session_starts", None)
    if starts is None:
        return [info.session_id for info in await admitted(journal, where)]
    return sorted(sid for sid, started_at in await starts() if where.admits_start(sid, started_at))


async def _fast_turns(
    journal: Journal, ids: list[str], extracted: Extracted
) -> dict[str, list[Turned] | None]:
    """Each session's turns from the values the store extracts (None: read it whole, as is
    every session when the store cannot extract)."""
    read_paths = getattr(journal, "read_paths", None)
    rows = None if read_paths is None else await read_paths(ids, PATHS)
    if rows is None:
        return dict.fromkeys(ids)
    found: dict[str, list[Turned] | None] = {}
    for session_id, group in groupby(rows, key=itemgetter(0)):
        found[session_id] = extracted.turns(list(group))
    return found


class _Found:
    """The rows, sessions and damaged sessions read so far."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.sessions: list[str] = []
        self.damaged: dict[str, str] = {}
        self.turns = 0
        self._offers: dict[frozenset[str], bool] = {}

    def add_turns(self, session_id: str, turns: list[Turned]) -> None:
        """A session read from its extracted values."""
        if turns:
            self.sessions.append(session_id)
            self.turns += len(turns)
        for agent, outcome, target, offered, points in turns:
            if points and (outcome in ("llm", "rule") or self._transfers(offered)):
                spots = tuple(map(_spot_of, points))
                self.rows.append(Row(session_id, agent, outcome, target, offered, spots))

    def _transfers(self, offered: frozenset[str]) -> bool:
        """Whether a transfer tool was offered (sessions offer the same few sets of tools)."""
        found = self._offers.get(offered)
        if found is None:
            found = any(name.startswith("transfer_to_") for name in offered)
            if len(self._offers) < 1024:
                self._offers[offered] = found
        return found

    def add_records(self, session_id: str, records: Sequence[JournalRecord]) -> None:
        """A session read whole."""
        try:
            visits = packed_visits(records)
        except DamagedRecord as exc:
            self.damaged[session_id] = str(exc)
            return
        if visits:
            self.sessions.append(session_id)
            self.turns += len(visits)
            packed: dict[int, bytes | Mapping[str, Any]] = {}
            self.rows.extend(_row(visit, packed) for visit in visits if may_decide(visit))


def decisions_of(visits: Sequence[Visit], damaged: Mapping[str, str] | None = None) -> Decisions:
    """Turns already read, as suggest keeps them (their contexts left as they are)."""
    return Decisions(
        rows=[_row(visit, None) for visit in visits if may_decide(visit)],
        turns=len(visits),
        sessions=list(dict.fromkeys(visit.session_id for visit in visits)),
        damaged=dict(damaged or {}),
    )


def _row(visit: Visit, packed: dict[int, bytes | Mapping[str, Any]] | None) -> Row:
    """The turn as a row; ``packed`` (None: no packing) holds the session's contexts packed
    so far, by identity: the points of a session share a context until a tool changes it."""
    return Row(
        visit.session_id,
        visit.agent,
        visit.outcome,
        visit.target,
        visit.offered,
        tuple(_spot(point, packed) for point in visit.points),
    )


def _spot(point: Point, packed: dict[int, bytes | Mapping[str, Any]] | None) -> Spot:
    context: bytes | Mapping[str, Any] = point.context
    if packed is not None:
        key = id(point.context)  # the context outlives the packing: the visit holds it
        kept = packed.get(key)
        if kept is None:
            kept = packed[key] = _pack(point.context)
        context = kept
    facts = point.facts
    kept_facts = tuple(facts.values()) if tuple(facts) == FACT_KEYS else facts
    return Spot(point.seq, point.tokens, point.call, context, kept_facts)


def _pack(context: Mapping[str, Any]) -> bytes | Mapping[str, Any]:
    if context.__class__ is dict:
        try:
            return marshal.dumps(context)
        except ValueError:  # an object marshal does not know: kept as it is
            pass
    return context


def context_of(spot: Spot) -> Mapping[str, Any]:
    """The point's context (a fresh dict when it was packed)."""
    context = spot.context
    if context.__class__ is bytes:
        found: dict[str, Any] = marshal.loads(context)
        return found
    if context.__class__ is str:
        # The store's own JSON text, one object and nothing around it: ``json.loads``'s
        # checks are skipped (they cost a seventh of the parse).
        extracted: dict[str, Any] = _DECODER.raw_decode(context)[0]
        return extracted
    return context  # type: ignore[return-value]


def facts_of(spot: Spot) -> Mapping[str, Any]:
    """The loop's facts at the point, as conditions read them under ``swarm``."""
    facts = spot.facts
    if facts.__class__ is tuple:
        return dict(zip(FACT_KEYS, facts))  # noqa: B905 - a tuple of FACT_KEYS' length
    return facts  # type: ignore[return-value]


def words_of(spot: Spot) -> Any:
    """The words of the user's message at the point (``None``: no text, or redacted)."""
    facts = spot.facts
    if facts.__class__ is tuple:
        return facts[_WORDS_AT]
    return facts.get(USER_WORDS_FACT)  # type: ignore[union-attr]


def state_of(spot: Spot, context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What conditions saw at the point (as ``Point.state``); ``context``: the point's,
    already unpacked."""
    state = dict(context_of(spot) if context is None else context)
    state[RESERVED_KEY] = facts_of(spot)
    return state


class Holds:
    """Where, for one source agent's rows, the first of its candidate conditions holds.

    The conditions are tried in the order a graph tries them (``whens``: the graph's own
    edges, then the learned rules); a rule list judged later tries a subsequence of them. So
    each point keeps the index of the first condition that holds there: for most lists that
    is the answer, and only a point whose first is left out of a list has the ones after it
    tried, its state unpacked again. Rows ``judged`` settles (the learned rules read off the
    learner's columns) are neither unpacked nor routed."""

    def __init__(
        self,
        source: str,
        rows: Sequence[Row],
        whens: Sequence[str | None],
        equal: Sequence[str],
        equality: Any,
        *,
        judged: Judged | None = None,
    ) -> None:
        self._source = source
        self._rows = rows
        self._whens = tuple(whens)
        self._judged = judged
        self._alone: dict[int, Any] = {}
        self._after: dict[tuple[int, int], int] = {}  # (row, point) -> bits of those holding
        self.first: list[tuple[int, ...]] = []
        """Per row, per point: the index of the first condition that holds (or their count)."""
        self.equalities: list[tuple[str, ...]] = []
        """Per row: ``path == value`` at its last point, for each path asked for."""
        if judged is None or not self._all_settled(judged):
            self._read(equal, equality)

    def _all_settled(self, judged: Judged) -> bool:
        """Take every row's firsts and equalities from ``judged`` at once, when it settles
        them all (False, and nothing taken, when any row needs reading)."""
        if None in judged.first or any(None in spelt for spelt in judged.equalities):
            return False
        rows = self._rows
        firsts: list[int] = judged.first  # type: ignore[assignment]
        self.first = [(first,) * len(row.points) for first, row in zip(firsts, rows, strict=True)]
        spelt: list[list[str]] = judged.equalities  # type: ignore[assignment]
        self.equalities = list(zip(*spelt, strict=True)) if spelt else [()] * len(rows)
        return True

    def fires(self, order: Sequence[int]) -> Iterator[tuple[int, int] | None]:
        """Each row in turn: where the list of conditions ``order`` (indices into ``whens``, in the
        order tried) first fires, as (point, position in ``order``); None where none does."""
        count = len(self._whens)
        # first -> the answer it gives, when the conditions before it in ``order`` are all
        # earlier ones (known not to hold): most points need nothing else.
        known: dict[int, int | None] = {count: None}
        for position, index in enumerate(order):
            if all(earlier < index for earlier in order[:position]):
                known.setdefault(index, position)
        for row, firsts in enumerate(self.first):
            fired = None
            for at, first in enumerate(firsts):
                hit = known[first] if first in known else self._later(row, at, first, order)
                if hit is not None:
                    fired = (at, hit)
                    break
            yield fired

    def _later(self, row: int, at: int, first: int, order: Sequence[int]) -> int | None:
        """The position in ``order`` of the first condition that holds at the point, given
        the first of all that does is ``first``, which ``order`` leaves out or tries late."""
        holding = self._after.get((row, at))
        if holding is None and self._judged is not None and self._judged.first[row] is not None:
            holding = self._judged.holding_at(row)
        if holding is None:
            # Every later condition at once: a list judged after this one drops rules, and
            # may ask again; the state is unpacked once.
            state = state_of(self._rows[row].points[at])
            holding = 1 << first
            for index in range(first + 1, len(self._whens)):
                if self._holds(index, state):
                    holding |= 1 << index
            self._after[(row, at)] = holding
        for position, index in enumerate(order):
            if index >= first and holding >> index & 1:
                return position
        return None

    def _holds(self, index: int, state: Mapping[str, Any]) -> bool:
        graph = self._alone.get(index)
        if graph is None:
            graph = self._alone[index] = _alone([self._whens[index]], self._source)
        return graph.route_edge(self._source, state) is not None

    def _read(self, equal: Sequence[str], equality: Any) -> None:
        """One pass over the rows: each point's first condition, each row's equalities."""
        source = self._source
        route = _alone(self._whens, source).route
        count = len(self._whens)
        seen: dict[str, str] = {}
        judged = self._judged
        for index, row in enumerate(self._rows):
            points = row.points
            if judged is not None and self._settled(judged, index, row, equal, equality):
                continue
            last = len(points) - 1
            firsts: list[int] = []
            for at, spot in enumerate(points):
                packed = spot.context.__class__ is not dict and not isinstance(
                    spot.context, Mapping
                )
                context = context_of(spot)
                if at == last:
                    parts = (equality(context, path) for path in equal)
                    self.equalities.append(tuple(seen.setdefault(part, part) for part in parts))
                # A context unpacked for this pass is the pass's own: it becomes the state.
                state: dict[str, Any] = context if packed else dict(context)  # type: ignore[assignment]
                state[RESERVED_KEY] = facts_of(spot)
                target = route(source, state)
                firsts.append(count if target is None else int(target[1:]))
            self.first.append(tuple(firsts))

    def _settled(
        self, judged: Judged, index: int, row: Row, equal: Sequence[str], equality: Any
    ) -> bool:
        """Take a row's firsts (and, where the columns can, its equalities) from ``judged``;
        False when it must be judged point by point."""
        first = judged.first[index]
        if first is None:
            return False
        self.first.append((first,) * len(row.points))
        spelt = tuple(column[index] for column in judged.equalities)
        if None in spelt:
            context = context_of(row.points[-1])
            spelt = tuple(equality(context, path) for path in equal)
        self.equalities.append(spelt)  # type: ignore[arg-type]
        return True


def _alone(whens: Sequence[str | None], source: str) -> HandoffGraph:
    """A graph whose edges from ``source`` are ``whens`` in order, the ``i``-th to ``"\x00i"``."""
    graph = HandoffGraph(on_cycle="allow")
    for index, when in enumerate(whens):
        graph.add_edge(source, f"\x00{index}", when, priority=len(whens) - index)
    return graph
