"""The decisions a journal holds: each agent turn where the model (or a rule) chose what came next.

A run's journal does not store the state the HandoffGraph saw; it stores what builds it: the
context at ``run_started``, each tool's context ``update`` and each ``state_edited`` edit. So
the state is rebuilt record by record, exactly as the loop built it, and copied at every point
where the loop consulted the rules: before each model call, and where a rule fired.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import sys
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from swarmkit.exceptions import RuleLearningError
from swarmkit.journal import Journal, JournalRecord, SessionInfo, read_many
from swarmkit.messages import USER_WORDS_FACT, message_facts

Outcome = Literal["llm", "answer", "rule", "other"]
"""How an agent's turn ended: the model handed off, the model kept the turn (answered or was
stopped), an existing rule handed off, or something else decided (a tool's goto, a budget)."""

RESERVED_KEY = "swarm"
"""Where conditions find the loop's own facts (agent, turn, ...); never a learned path."""
WHATIF_MARK = "__whatif_"
"""What names a session a live what-if forked (``SESSION__whatif_STEP``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Point:
    """One moment the rules were consulted: before a model call, or where a rule fired."""

    seq: int
    """The journal seq of the model call (or of the ``rule`` record)."""
    turn: int
    """The run's turn number of that model call (the rule record's turn for a rule)."""
    tokens: int
    """Total tokens the model call used; 0 for a rule point."""
    call: bool
    """True before a model call; False where a journaled rule fired."""
    context: Mapping[str, Any]
    """The run's context as journaled (secrets redacted), at that moment."""
    facts: Mapping[str, Any]
    """The loop's own facts conditions read under ``swarm`` (agent, turn, ...)."""

    @property
    def state(self) -> Mapping[str, Any]:
        """What conditions saw: the context, and the loop's facts under ``swarm``."""
        # A dict, copied at C speed: conditions read a dict directly, any other mapping
        # key by key through Python.
        state = dict(self.context)
        state[RESERVED_KEY] = self.facts
        return state


@dataclass(frozen=True, kw_only=True, slots=True)
class Visit:
    """One turn of one agent, from its start to the handoff (or end) that closed it."""

    session_id: str
    """The session the turn belongs to."""
    agent: str
    """The active agent."""
    points: tuple[Point, ...]
    """Every consultation of the rules in the turn, in order."""
    outcome: Outcome
    """How the turn ended."""
    target: str | None
    """The agent handed off to; ``None`` when the turn kept control."""
    offered: frozenset[str]
    """The tool names offered at the turn's last model call (to know a handoff was possible)."""
    started_at: float
    """When the session started (journal clock), for reports."""

    @property
    def decision(self) -> Point | None:
        """The point where the turn's outcome was decided: the last consultation."""
        return self.points[-1] if self.points else None


@dataclass(frozen=True, kw_only=True, slots=True)
class CorpusFilter:
    """Which sessions of a journal take part."""

    since: float | None = None
    """Only sessions started at or after these Unix seconds."""
    until: float | None = None
    """Only sessions started before these Unix seconds."""
    prefix: str | None = None
    """Only sessions whose id starts with this."""
    tag: tuple[str, Any] | None = None
    """Only sessions whose starting context holds this (path, value), or lists the value there."""

    def admits(self, info: SessionInfo) -> bool:
        """Whether a session's summary passes the time and prefix filters; a session a live
        what-if forked never does (it ran with a change, such as rules, not adopted)."""
        return self.admits_start(info.session_id, info.started_at)

    def admits_start(self, session_id: str, started_at: float) -> bool:
        """``admits`` on a session's id and start time alone."""
        if WHATIF_MARK in session_id:
            return False
        if self.prefix is not None and not session_id.startswith(self.prefix):
            return False
        if self.since is not None and started_at < self.since:
            return False
        return self.until is None or started_at < self.until


@dataclass(frozen=True, kw_only=True, slots=True)
class Corpus:
    """What a journal's sessions hold for learning: their turns, and the sessions left out."""

    visits: list[Visit]
    """Every agent turn, in session order."""
    damaged: Mapping[str, str]
    """Sessions left out because a record cannot be read as a swarm run wrote it: session id
    -> which record and what is wrong with it."""


async def read_visits(journal: Journal, where: CorpusFilter | None = None) -> list[Visit]:
    """Every agent turn of the journal's sessions that pass ``where``, in session order; a
    session with a damaged record is left out (``suggest_rules`` and ``whatif`` report it)."""
    return (await read_corpus(journal, where)).visits


async def read_corpus(journal: Journal, where: CorpusFilter | None = None) -> Corpus:
    """The turns of the journal's sessions that pass ``where``, and those left out."""
    visits: list[Visit] = []
    damaged: dict[str, str] = {}
    # Reading builds millions of small objects that live on: the cyclic collector would walk
    # them again and again (reading gets quadratic), and they hold no cycles to collect.
    with collector_paused():
        async for info, records in sessions_read(journal, where):
            try:
                visits.extend(session_visits(records, started_at=info.started_at))
            except DamagedRecord as exc:
                damaged[info.session_id] = str(exc)
    return Corpus(visits=visits, damaged=damaged)


READ_BATCH = 500
"""Sessions read in one ``read_many`` call: one query each for a store that reads in bulk."""


async def sessions_read(
    journal: Journal, where: CorpusFilter | None
) -> AsyncIterator[tuple[SessionInfo, Sequence[JournalRecord]]]:
    """Each session that passes ``where`` with its records, in session id order, read a batch
    at a time (a session deleted since the listing is left out)."""
    where = where or CorpusFilter()
    infos = await admitted(journal, where)
    for start in range(0, len(infos), READ_BATCH):
        batch = infos[start : start + READ_BATCH]
        found = await read_many(journal, [info.session_id for info in batch])
        for info in batch:
            records = found.get(info.session_id)
            if records is None or not tagged(records, where):
                continue
            yield info, records


async def admitted(journal: Journal, where: CorpusFilter) -> list[SessionInfo]:
    """The journal's sessions that pass the time and prefix filters, in session id order."""
    return sorted(
        (info for info in await journal.sessions() if where.admits(info)),
        key=lambda info: info.session_id,
    )


def tagged(records: Sequence[JournalRecord], where: CorpusFilter) -> bool:
    """Whether a session's records pass the tag filter (any do without one)."""
    return where.tag is None or _tagged(records, where.tag)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused meanwhile (see ``read_corpus``)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def may_decide(visit: Visit) -> bool:
    """Whether the turn can be a decision (a handoff, or an answer where a transfer was
    offered) or a rule's: the turns suggest keeps."""
    return bool(visit.points) and (
        visit.outcome in ("llm", "rule")
        or any(name.startswith("transfer_to_") for name in visit.offered)
    )


def session_visits(records: Sequence[JournalRecord], *, started_at: float = 0.0) -> list[Visit]:
    """The agent turns of one session's records; ``RuleLearningError`` naming the record when
    one holds what a swarm run never writes (a handoff ``number`` that is not a number, ...)."""
    return _Reader(records, started_at, share=True).visits()


def packed_visits(records: Sequence[JournalRecord]) -> list[Visit]:
    """``session_visits`` for a caller that packs the contexts: their keys and short texts
    are not interned."""
    return _Reader(records, 0.0, share=False).visits()


class DamagedRecord(RuleLearningError):
    """A session's record holds what a swarm run never writes there (a RuleLearningError to
    callers of ``session_visits``; ``read_corpus`` leaves the session out)."""


def held_out(session_id: str, fraction: float = 0.3) -> bool:
    """Whether a session is in the held-out part: a hash of its id, the same on every machine."""
    digest = hashlib.blake2b(session_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") < fraction * 2**64


def _tagged(records: Sequence[JournalRecord], tag: tuple[str, Any]) -> bool:
    path, wanted = tag
    for record in records:
        if record.kind == "run_started":
            found: Any = record.data.get("context")
            for part in path.split("."):
                found = found.get(part) if isinstance(found, Mapping) else None
            return bool(found == wanted or (isinstance(found, list) and wanted in found))
    return False


class _Reader:
    """Walks one session's records, keeping the state the loop had at each record."""

    def __init__(self, records: Sequence[JournalRecord], started_at: float, *, share: bool) -> None:
        self._records = records
        self._share = share
        self._started_at = started_at
        self._session_id = records[0].session_id if records else ""
        self._context: Mapping[str, Any] = {}
        self._facts: dict[str, Any] = fresh_facts()
        self._agent: str | None = None
        self._points: list[Point] = []
        self._offered: frozenset[str] = frozenset()
        self._visits: list[Visit] = []

    def visits(self) -> list[Visit]:
        for record in self._records:
            self._take(record)
        if self._agent is not None and self._points:
            self._close("answer", None)
        return self._visits

    def _take(self, record: JournalRecord) -> None:
        kind = record.kind
        if kind == "run_started":
            self._start(record)
        elif kind == "agent_started":
            self._agent = _text(record, "agent")
            self._facts["agent"] = self._agent
            self._points = []
        elif kind == "model_call" and "error" not in record.data:
            self._model_call(record)
        elif kind == "tool_call":
            self._tool_call(record)
        elif kind == "state_edited":
            self._update(_object(record, record.data, "context_update"))
        elif kind == "rule":
            self._points.append(self._point(record, _whole(record, "turn"), 0, call=False))
        elif kind == "handoff":
            self._handoff(record)
        elif kind == "run_finished" and self._agent is not None and self._points:
            self._close("answer", None)
            self._agent = None

    def _start(self, record: JournalRecord) -> None:
        # Never changed in place (updates copy it), so every point may share it.
        context = _object(record, record.data, "context")
        self._context = _shared_texts(context) if self._share else context
        self._facts = fresh_facts()
        # The message that started this run (a conversation's new turn starts a run); a
        # redacted one gives no text facts, so nothing is learned from it.
        said = message_facts(record.data.get("prompt"))
        if said[USER_WORDS_FACT]:  # the same few thousand words in every message: kept once
            said[USER_WORDS_FACT] = tuple(map(sys.intern, said[USER_WORDS_FACT]))
        self._facts.update(said)

    def _model_call(self, record: JournalRecord) -> None:
        data = record.data
        turn = _whole(record, "turn")
        usage = _object(record, _object(record, data, "response"), "usage")
        tokens = _whole(record, "total_tokens", usage)
        # The rules were consulted before the call: the turn counter had not moved yet.
        self._points.append(self._point(record, turn, tokens, facts_turn=turn - 1))
        tools = _object(record, data, "request").get("tools") or ()
        if not isinstance(tools, list | tuple):
            raise _damaged(
                record, f"its request's tools are a JSON {_json_type(tools)}, not a list"
            )
        self._offered = offered_of(tools)

    def _tool_call(self, record: JournalRecord) -> None:
        outcome = record.data.get("outcome")
        if not isinstance(outcome, Mapping):
            return
        self._facts["last_tool"] = record.data.get("name")
        self._facts["last_tool_ok"] = not outcome.get("is_error")
        self._update(_object(record, outcome, "update"))

    def _update(self, update: Mapping[str, Any]) -> None:
        if update:
            self._context = {**self._context, **update}

    def _handoff(self, record: JournalRecord) -> None:
        data = record.data
        decided_by = data.get("decided_by")
        outcome: Outcome = "other"
        if decided_by == "llm":
            outcome = "llm"
        elif decided_by == "rule":
            outcome = "rule"
        target = _text(record, "target")
        if self._agent is not None:
            self._close(outcome, target)
        self._facts["previous_agent"] = self._agent
        self._facts["handoff_count"] = _whole(record, "number")
        self._facts["payload"] = data.get("payload")
        self._facts["message"] = data.get("message")
        self._agent = None

    def _close(self, outcome: Outcome, target: str | None) -> None:
        assert self._agent is not None
        self._visits.append(
            Visit(
                session_id=self._session_id,
                agent=self._agent,
                points=tuple(self._points),
                outcome=outcome,
                target=target,
                offered=self._offered,
                started_at=self._started_at,
            )
        )
        self._points = []
        self._offered = frozenset()

    def _point(
        self,
        record: JournalRecord,
        turn: int,
        tokens: int,
        *,
        call: bool = True,
        facts_turn: int | None = None,
    ) -> Point:
        facts = dict(self._facts)
        facts["turn"] = turn if facts_turn is None else facts_turn
        return Point(
            seq=record.seq, turn=turn, tokens=tokens, call=call, context=self._context, facts=facts
        )


_OFFERS: dict[tuple[Any, ...], frozenset[str]] = {}
"""Offers seen, each kept once: most turns of an agent offer the same few tools."""


def offered_of(tools: list[Any] | tuple[Any, ...]) -> frozenset[str]:
    """The tool names a request offered, as one shared set per distinct offer."""
    key = tuple(tools)
    try:
        return _OFFERS[key]
    except (KeyError, TypeError):  # TypeError: a damaged record's unhashable name
        offered = frozenset(str(name) for name in tools)
        if len(_OFFERS) < 4096:
            with contextlib.suppress(TypeError):
                _OFFERS[key] = offered
        return offered


def _shared_texts(context: Mapping[str, Any], depth: int = 0) -> Mapping[str, Any]:
    """The context with its keys and short texts interned: every session decodes its own copy
    of ``'category'`` and ``'billing'``, and a corpus keeps every session's context while it
    learns (this halves what 100,000 contexts hold)."""
    if depth > 3 or not isinstance(context, dict):
        return context
    shared: dict[Any, Any] = {}
    for key, value in context.items():
        kept = value
        if value.__class__ is str and len(value) <= 64:
            kept = sys.intern(value)
        elif value.__class__ is dict:
            kept = _shared_texts(value, depth + 1)
        shared[sys.intern(key) if key.__class__ is str else key] = kept
    return shared


def _object(record: JournalRecord, data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``data[key]``, a JSON object (absent or null: empty)."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _damaged(record, f"holds a {key} that is a JSON {_json_type(value)}, not an object")
    return value


def _whole(record: JournalRecord, key: str, data: Mapping[str, Any] | None = None) -> int:
    """``data[key]`` (the record's data by default), a whole number (absent or null: 0)."""
    value = (record.data if data is None else data).get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise _damaged(record, f"has {key} {value!r:.40}, not a whole number")
    return value


def _text(record: JournalRecord, key: str) -> str:
    value = record.data.get(key)
    if not isinstance(value, str):
        raise _damaged(record, f"has {key} {value!r:.40}, not a name")
    return value


def _damaged(record: JournalRecord, what: str) -> DamagedRecord:
    return DamagedRecord(
        f"session {record.session_id!r} record {record.seq} ({record.kind}) {what}; the journal "
        "was not written by a swarm run as it is: leave this session out (--prefix) or delete it"
    )


def _json_type(value: object) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "list"
    return (
        "number"
        if isinstance(value, int | float) and not isinstance(value, bool)
        else type(value).__name__
    )


def fresh_facts() -> dict[str, Any]:
    return {
        "agent": None,
        "previous_agent": None,
        "handoff_count": 0,
        "turn": 0,
        "last_tool": None,
        "last_tool_ok": None,
        "payload": None,
        "message": None,
        "user_message": None,
        "user_words": None,
    }


FACT_KEYS = tuple(fresh_facts())
"""The loop's facts, in the order every point's facts hold them."""


class Turn(Protocol):
    """What ``model_decided`` reads of a turn (a ``Visit``, or suggest's packed row)."""

    @property
    def agent(self) -> str: ...
    @property
    def outcome(self) -> Outcome: ...
    @property
    def offered(self) -> frozenset[str]: ...
    @property
    def points(self) -> Sequence[object]: ...


_T = TypeVar("_T", bound=Turn)


def model_decided(visits: Sequence[_T]) -> list[_T]:
    """The turns whose end the model chose: its handoffs, and its answers where it could have
    handed off (a transfer tool was offered)."""
    tools_of: dict[str, set[str]] = {}
    for visit in visits:
        if visit.outcome == "llm":
            tools_of.setdefault(visit.agent, set()).update(
                name for name in visit.offered if name.startswith("transfer_to_")
            )
    return [
        visit
        for visit in visits
        if visit.points
        and (
            visit.outcome == "llm"
            or (
                visit.outcome == "answer" and bool(tools_of.get(visit.agent, set()) & visit.offered)
            )
        )
    ]
