"""The decisions a journal holds: each agent turn where the model (or a rule) chose what came next.

A run's journal does not store the state the HandoffGraph saw; it stores what builds it: the
context at ``run_started``, each tool's context ``update`` and each ``state_edited`` edit. So
the state is rebuilt record by record, exactly as the loop built it, and copied at every point
where the loop consulted the rules: before each model call, and where a rule fired.
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from swarmkit.exceptions import RuleLearningError
from swarmkit.journal import Journal, JournalRecord, SessionInfo

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
        return RuleState(self.context, self.facts)


class RuleState(Mapping[str, Any]):
    """The context with the loop's facts under ``swarm``, without copying the context."""

    __slots__ = ("_context", "_facts")

    def __init__(self, context: Mapping[str, Any], facts: Mapping[str, Any]) -> None:
        self._context = context
        self._facts = facts

    def __getitem__(self, key: str) -> Any:
        if key == RESERVED_KEY:
            return self._facts
        return self._context[key]

    def __iter__(self) -> Iterator[str]:
        yield from (key for key in self._context if key != RESERVED_KEY)
        yield RESERVED_KEY

    def __len__(self) -> int:
        return len(self._context) + (RESERVED_KEY not in self._context)


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
        if WHATIF_MARK in info.session_id:
            return False
        if self.prefix is not None and not info.session_id.startswith(self.prefix):
            return False
        if self.since is not None and info.started_at < self.since:
            return False
        return self.until is None or info.started_at < self.until


async def read_visits(journal: Journal, where: CorpusFilter | None = None) -> list[Visit]:
    """Every agent turn of the journal's sessions that pass ``where``, in session order."""
    where = where or CorpusFilter()
    infos = sorted(
        (info for info in await journal.sessions() if where.admits(info)),
        key=lambda info: info.session_id,
    )
    visits: list[Visit] = []
    # Reading builds millions of small objects that live on: the cyclic collector would walk
    # them again and again (reading gets quadratic), and they hold no cycles to collect.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for info in infos:
            records = await journal.read(info.session_id)
            if where.tag is not None and not _tagged(records, where.tag):
                continue
            visits.extend(session_visits(records, started_at=info.started_at))
    finally:
        if collecting:
            gc.enable()
    return visits


def session_visits(records: Sequence[JournalRecord], *, started_at: float = 0.0) -> list[Visit]:
    """The agent turns of one session's records."""
    return _Reader(records, started_at).visits()


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

    def __init__(self, records: Sequence[JournalRecord], started_at: float) -> None:
        self._records = records
        self._started_at = started_at
        self._session_id = records[0].session_id if records else ""
        self._context: Mapping[str, Any] = {}
        self._facts: dict[str, Any] = _fresh_facts()
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
        data = record.data
        kind = record.kind
        if kind == "run_started":
            self._start(record)
        elif kind == "agent_started":
            self._agent = str(data.get("agent"))
            self._facts["agent"] = self._agent
            self._points = []
        elif kind == "model_call" and "error" not in data:
            self._model_call(record)
        elif kind == "tool_call":
            self._tool_call(data)
        elif kind == "state_edited":
            self._update(data.get("context_update"))
        elif kind == "rule":
            self._points.append(self._point(record, int(data.get("turn") or 0), 0, call=False))
        elif kind == "handoff":
            self._handoff(data)
        elif kind == "run_finished" and self._agent is not None and self._points:
            self._close("answer", None)
            self._agent = None

    def _start(self, record: JournalRecord) -> None:
        context = record.data.get("context")
        if context is None:
            context = {}
        if not isinstance(context, Mapping):
            raise RuleLearningError(
                f"session {self._session_id!r} record {record.seq} (run_started) holds a context "
                f"that is a JSON {type(context).__name__}, not an object; the journal was not "
                "written by a swarm run: leave this session out (--prefix) or delete it"
            )
        # Never changed in place (updates copy it), so every point may share it.
        self._context = context
        self._facts = _fresh_facts()

    def _model_call(self, record: JournalRecord) -> None:
        data = record.data
        turn = int(data.get("turn") or 0)
        usage = (data.get("response") or {}).get("usage") or {}
        tokens = usage.get("total_tokens") or 0
        # The rules were consulted before the call: the turn counter had not moved yet.
        self._points.append(self._point(record, turn, int(tokens), facts_turn=turn - 1))
        tools = (data.get("request") or {}).get("tools") or ()
        self._offered = frozenset(str(name) for name in tools)

    def _tool_call(self, data: Mapping[str, Any]) -> None:
        outcome = data.get("outcome")
        if not isinstance(outcome, Mapping):
            return
        self._facts["last_tool"] = data.get("name")
        self._facts["last_tool_ok"] = not outcome.get("is_error")
        self._update(outcome.get("update"))

    def _update(self, update: object) -> None:
        if isinstance(update, Mapping) and update:
            self._context = {**self._context, **update}

    def _handoff(self, data: Mapping[str, Any]) -> None:
        decided_by = data.get("decided_by")
        outcome: Outcome = "other"
        if decided_by == "llm":
            outcome = "llm"
        elif decided_by == "rule":
            outcome = "rule"
        target = str(data.get("target"))
        if self._agent is not None:
            self._close(outcome, target)
        self._facts["previous_agent"] = self._agent
        self._facts["handoff_count"] = int(data.get("number") or 0)
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


def _fresh_facts() -> dict[str, Any]:
    return {
        "agent": None,
        "previous_agent": None,
        "handoff_count": 0,
        "turn": 0,
        "last_tool": None,
        "last_tool_ok": None,
        "payload": None,
        "message": None,
    }


def model_decided(visits: Sequence[Visit]) -> list[Visit]:
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
