"""Journal records, session summaries, the Journal protocol, and the checks every store shares."""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from swarmkit.bounds import fast_encoder
from swarmkit.exceptions import ConfigurationError, JournalError, SessionBusyError

JOURNAL_SCHEMA_VERSION = 1
"""The version of the journal's storage layout and JSONL export; bumped on incompatible change."""

SessionStatus = Literal["open", "finished"]
"""Whether a session holds a ``run_finished`` record."""

Status = Literal["running", "waiting", "failed", "limited", "finished", "cancelled"]
"""A session's state in one vocabulary, for every place that shows it (``session_status``)."""

LIMIT_REASONS = frozenset(
    {"max_handoffs", "max_turns", "cycle", "timeout", "usage_limit", "budget"}
)
"""Stop reasons that mean a limit (or a cycle) shaped or stopped the run."""

RUN_STARTED = "run_started"
RUN_FINISHED = "run_finished"
AGENT_STARTED = "agent_started"
ENGINE_NOTE = "queue_engine"
"""The note a durable engine's mirror adds after a run parked for a person: which engine
resumes the session, so a hand-back in another process is refused."""
PERSON_NOTES = frozenset({"queue_claimed", "queue_replied", "queue_escalated", ENGINE_NOTE})
"""What people add to a conversation parked for them, between runs (a claim, a reply, an
escalation, and the engine's note of who resumes it): a resumed or replayed run steps over
them; the hand-back's decision carries the replies into the run."""
HANDOFF_INVALID = "handoff_invalid"
OPTIONAL_NOTES = frozenset({HANDOFF_INVALID})
"""Notes a run writes that journals from before them lack (a transfer call whose payload did
not validate): a replay matches one where the journal holds it and steps on where it does not,
so older sessions still replay strictly."""


@dataclass(frozen=True, kw_only=True, slots=True)
class JournalRecord:
    """One entry of a session's append-only log; a step is addressed by (session_id, seq)."""

    session_id: str
    """The run's session id."""
    seq: int
    """Position in the session: 0, 1, 2, ... with no gaps."""
    kind: str
    """What happened (``"run_started"``, ``"model_call"``, ...); stores do not interpret it."""
    data: Mapping[str, Any]
    """JSON-safe payload; read back as JSON holds it (tuples return as lists)."""
    at: float | None = field(default=None, compare=False)
    """Unix seconds from the run's clock (its ``Runtime``) when the record was made; a store
    without one keeps the time it wrote the record. Not compared: replay and equality ignore
    it, and it never enters a request digest."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionInfo:
    """A summary of one journaled session, as listed by ``Journal.sessions()``."""

    session_id: str
    """The session's id."""
    records: int
    """How many records the session holds."""
    started_at: float
    """Unix seconds of the session's first record: its own time (``JournalRecord.at``, the
    run's clock; an imported record keeps it), else the first append's, from the journal's
    clock."""
    updated_at: float
    """Unix seconds of the latest append, from the journal's clock."""
    status: SessionStatus
    """``"finished"`` once a ``run_finished`` record exists, else ``"open"``."""
    stop_reason: str | None = None
    """``data["stop_reason"]`` of the latest ``run_finished`` record, if any."""
    prompt: str | None = None
    """``data["prompt"]`` of the first ``run_started`` record, if it is a string."""
    agents: tuple[str, ...] = ()
    """Each agent that started a turn (``agent_started`` records), in order of first start."""
    state: Status = "running"
    """The session's state in the one vocabulary (``status_of`` its stop reason; ``running``
    until it finishes). The summary keeps no Ctrl-C flag, so a cancelled session reads
    ``waiting`` here; ``session_status(records)`` tells the two apart."""


class RecordSink(Protocol):
    """Anything a tape can write records to: a ``Journal``, or an engine's mirror of one."""

    async def append(self, records: Sequence[JournalRecord]) -> None:
        """Store one step's records."""
        ...


@runtime_checkable
class Journal(Protocol):
    """An append-only log of records per session; SQLite on disk or memory for tests."""

    async def append(self, records: Sequence[JournalRecord]) -> None:
        """Write one step atomically; its seqs must continue the session exactly."""
        ...

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        """Every record of a session in seq order; ``SessionNotFoundError`` when absent."""
        ...

    async def sessions(self) -> tuple[SessionInfo, ...]:
        """A summary of every session, newest first."""
        ...

    async def next_seq(self, session_id: str) -> int:
        """The seq the session's next record must have; 0 for a new session."""
        ...

    async def delete(self, session_id: str) -> None:
        """Remove a session and its records; ``SessionNotFoundError`` when absent."""
        ...

    async def acquire_lease(self, session_id: str, *, owner: str, ttl: float) -> None:
        """Take or renew the session's writer lease until ``ttl`` seconds from now.

        ``SessionBusyError`` when another owner holds a lease that has not expired; an
        expired lease is taken over. The session need not exist yet.
        """
        ...

    async def release_lease(self, session_id: str, *, owner: str) -> None:
        """Give up the lease if ``owner`` holds it; otherwise do nothing."""
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class StepFacts:
    """What one step changes in its session's summary."""

    prompt: str | None
    """The prompt of the step's first ``run_started`` record, if any."""
    finished: bool
    """Whether the step holds a ``run_finished`` record."""
    stop_reason: str | None
    """The stop reason of the step's last ``run_finished`` record, if any."""
    agents: tuple[str, ...] = ()
    """The agents the step's ``agent_started`` records name, each once, in order."""


def json_default(value: object) -> object:
    """The ``default`` hook of every journal encoder: mappings other than dict become dicts."""
    # json only encodes dict itself; read-only mappings (MappingProxyType) are just as JSON-safe.
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# One shared encoder: json.dumps with options builds a new encoder on every call.
_ENCODE = fast_encoder(
    json.JSONEncoder(
        ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=json_default
    )
)
_DECODER = json.JSONDecoder()
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
"""The C scanner of one JSON value at an index: ``(value, end)``, ``StopIteration`` if none."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """JSON text with every lone surrogate written as its ``\\uXXXX`` escape.

    Python strings may hold lone surrogates (from ``surrogateescape``-decoded bytes, or
    truncated UTF-16), which UTF-8 cannot encode. They can only stand inside JSON strings, where
    the escape is valid JSON that decodes back to the very same string: lossless, so a journal
    holds such text exactly and replay still matches it.
    """
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def encode_data(record: JournalRecord) -> str:
    """The record's data as compact JSON text; ``JournalError`` naming the record if unsafe."""
    if type(record.data) is not dict and not isinstance(record.data, Mapping):
        raise JournalError(
            f"record {record.seq} ({record.kind!r}) of session {record.session_id!r}: data must "
            f"be a mapping, got {type(record.data).__name__}"
        )
    try:
        return escape_surrogates(_ENCODE(record.data))
    except (TypeError, ValueError, RecursionError) as exc:
        raise not_json_safe(record, exc) from exc


def not_json_safe(record: JournalRecord, exc: Exception) -> JournalError:
    """The error for a record whose data JSON cannot hold, naming the record and its kind."""
    return JournalError(
        f"record {record.seq} ({record.kind!r}) of session {record.session_id!r} holds data "
        f"that is not JSON-safe ({exc}); use dicts, lists, strings, finite numbers, booleans "
        "and None"
    )


def decode_data(text: str) -> dict[str, Any]:
    """Data as stored by ``encode_data``, back as a dict; ``ValueError`` if it is not one."""
    try:
        # What our encoder wrote has no whitespace around it, so it is parsed directly.
        data, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        end = -1
    if end != len(text):
        # Whitespace around it, extra data or broken text: the full decoder's checks decide.
        data = _decode_strictly(text)
    if not isinstance(data, dict):
        raise ValueError(f"its data is a JSON {type(data).__name__}, not an object")
    return data


def _decode_strictly(text: str) -> Any:
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise ValueError("its JSON is nested too deeply to read") from None


@dataclass(frozen=True, kw_only=True, slots=True)
class Lease:
    """Who may write a session, and until when."""

    owner: str
    """The writer's name (host, process and run), shown to a writer that is refused."""
    expires_at: float
    """Journal-clock seconds after which another writer may take the session over."""


def check_lease_args(owner: object, ttl: object) -> None:
    """Refuse an owner that is not a non-empty str or a ttl that is not a positive number."""
    if not isinstance(owner, str) or not owner:
        raise ConfigurationError(f"a lease owner must be a non-empty str, got {owner!r}")
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        raise ConfigurationError(f"a lease ttl must be a positive number of seconds, got {ttl!r}")


def take_lease(session_id: str, held: Lease | None, *, owner: str, ttl: float, now: float) -> Lease:
    """The lease once ``owner`` asks at ``now``; ``SessionBusyError`` if another holds it."""
    if held is not None and held.owner != owner and held.expires_at > now:
        raise SessionBusyError(session_id, owner=held.owner, expires_at=held.expires_at)
    return Lease(owner=owner, expires_at=now + ttl)


def decode_record(
    session_id: str, seq: int, kind: str, text: object, at: object = None
) -> JournalRecord:
    """A stored record read back; ``JournalError`` naming the session and seq if corrupt."""
    try:
        if not isinstance(text, str):
            raise ValueError(f"its data is stored as {type(text).__name__}, not JSON text")
        data = decode_data(text)
    except ValueError as exc:
        raise corrupt_record(session_id, seq, kind, str(exc)) from exc
    time = float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None
    return JournalRecord(session_id=session_id, seq=seq, kind=kind, data=data, at=time)


def decode_records(
    session_id: str, rows: Sequence[tuple[int, str, object] | tuple[int, str, object, object]]
) -> tuple[JournalRecord, ...]:
    """A session's stored rows read back, with the garbage collector paused meanwhile.

    Decoding builds many small containers and no cycles: a collection triggered by those
    allocations would only scan, again and again, the records decoded so far (at 10,000 steps
    the collector took about a fifth of a replay). It runs with no await, so nothing else runs
    while it is paused.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return tuple(decode_record(session_id, *row) for row in rows)
    finally:
        if paused:
            gc.enable()


def corrupt_record(session_id: str, seq: object, kind: object, detail: str) -> JournalError:
    """The error for a record that cannot be read: which one, and what to do about it."""
    return JournalError(
        f"record {seq} ({kind!r}) of session {session_id!r} is corrupt: {detail}; the other "
        "sessions are unaffected: export them, or delete this one (journal.delete)"
    )


def check_session_id(session_id: object) -> None:
    """Refuse a session id a store cannot hold: not a str, or text with a lone surrogate
    (half of a character, which UTF-8, SQLite and Postgres cannot encode)."""
    if (
        isinstance(session_id, str)
        and not session_id.isascii()  # the common id, told apart without the regex
        and _LONE_SURROGATE.search(session_id) is not None
    ):
        raise ConfigurationError(
            f"session id {session_id!r} holds a lone surrogate (half of a character), which no "
            "journal can store; use an id of valid Unicode text"
        )


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


Kinds = Collection[str] | None
"""``read_many``'s ``kinds``: the record kinds to read (None: every kind)."""
Leading = Mapping[str, tuple[str, ...]] | None
"""``read_many``'s ``leading``: record kind -> the names of the leading members its records
are read for, alone, in order."""


def many_asked(
    session_ids: Sequence[str], kinds: Kinds, leading: Leading = None
) -> tuple[list[str], list[str] | None]:
    """A ``read_many`` call's sessions (checked, each once, in order) and kinds (sorted, the
    ``leading`` ones too; None for every kind, an empty list when none is asked, so nothing
    need be read)."""
    ids = list(dict.fromkeys(session_ids))
    for session_id in ids:
        check_session_id(session_id)
    return ids, None if kinds is None else sorted({*kinds, *(leading or ())})


def leading_heads(names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Each leading member's name with the text it starts with (``{"name":``, then
    ``,"name":``), for ``decode_leading``."""
    return tuple((name, ('{"' if i == 0 else ',"') + name + '":') for i, name in enumerate(names))


def decode_leading(
    session_id: str,
    seq: int,
    kind: str,
    text: object,
    at: object,
    *,
    heads: tuple[tuple[str, str], ...],
) -> JournalRecord | None:
    """A stored record read for its leading members alone, when the first is the first of
    ``heads`` (see ``leading_heads``): its data holds those that follow it in that order;
    None when the record starts otherwise. The rest of the text is not parsed: our encoder
    writes no space and keeps the order of keys, so each member is found by its prefix, and
    a plain name is never escaped."""
    if type(text) is not str or not text.startswith(heads[0][1]):
        return None
    data: dict[str, Any] = {}
    end, scan = 0, _SCAN
    try:
        for name, head in heads:
            if not text.startswith(head, end):
                break
            data[name], end = scan(text, end + len(head))
    except (StopIteration, ValueError, RecursionError) as exc:
        raise corrupt_record(session_id, seq, kind, f"its {name!r} is not JSON") from exc
    if text[end : end + 1] not in (",", "}"):
        raise corrupt_record(session_id, seq, kind, f"its {name!r} is not a JSON member")
    time = at if type(at) is float else _time_of(at)
    return JournalRecord(session_id=session_id, seq=seq, kind=kind, data=data, at=time)


def _time_of(at: object) -> float | None:
    return float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None


def check_step(records: Sequence[JournalRecord]) -> str:
    """Check a non-empty step holds one session with consecutive seqs; return the session id."""
    first = records[0]
    session_id = first.session_id
    if not isinstance(session_id, str) or not session_id:
        raise JournalError(f"session_id must be a non-empty string, got {session_id!r}")
    check_session_id(session_id)
    for offset, record in enumerate(records):
        if record.session_id != session_id:
            raise JournalError(
                f"a step holds records of one session; got {session_id!r} and {record.session_id!r}"
            )
        if type(record.seq) is not int or record.seq != first.seq + offset:
            raise JournalError(
                f"seqs within a step must be consecutive; expected {first.seq + offset} "
                f"in session {session_id!r}, got {record.seq!r}"
            )
        if not isinstance(record.kind, str) or not record.kind:
            raise JournalError(f"record {record.seq} of session {session_id!r} has no kind")
    return session_id


def check_continues(session_id: str, expected: int, got: int) -> None:
    """Refuse a step that does not start at the session's next seq (e.g. a second writer)."""
    if got != expected:
        raise JournalError(
            f"session {session_id!r} expects seq {expected} next, got {got}; another writer may "
            "be appending to this session, or the step was built from a stale next_seq"
        )


def session_status(records: Sequence[JournalRecord]) -> Status:
    """What state a session's records leave it in: ``running`` until a ``run_finished``
    record (or a crash: a dead run's lease expires), then ``waiting`` for a human decision,
    ``cancelled`` (Ctrl-C), ``failed`` (an error or an invalid typed answer), ``limited``
    (a limit or cycle shaped the end) or ``finished``."""
    last = last_run_record(records)
    if last is None or last.kind != RUN_FINISHED:
        return "running"
    data = last.data
    return status_of(data.get("stop_reason"), cancelled=bool(data.get("cancelled")))


def last_run_record(records: Sequence[JournalRecord]) -> JournalRecord | None:
    """The session's last record a run wrote (people's notes after a pause stepped over)."""
    for record in reversed(records):
        if record.kind not in PERSON_NOTES:
            return record
    return None


def status_of(stop_reason: object, *, cancelled: bool = False) -> Status:
    """The state a ``run_finished`` record's stop reason means (see ``session_status``)."""
    if stop_reason == "interrupted":
        return "cancelled" if cancelled else "waiting"
    if stop_reason in ("error", "invalid_output"):
        return "failed"
    if isinstance(stop_reason, str) and stop_reason in LIMIT_REASONS:  # a damaged record's list
        return "limited"
    return "finished"


def session_info(row: Sequence[Any], agents: tuple[str, ...]) -> SessionInfo:
    """A SessionInfo from a store's sessions row: (session_id, records, started_at,
    updated_at, finished, stop_reason, prompt, agents as stored), with ``agents`` decoded."""
    session_id, records, started_at, updated_at, finished, stop_reason, prompt, _ = row
    return SessionInfo(
        session_id=session_id,
        records=records,
        started_at=started_at,
        updated_at=updated_at,
        status="finished" if finished else "open",
        stop_reason=stop_reason,
        prompt=prompt,
        agents=agents,
        state=status_of(stop_reason) if finished else "running",
    )


def step_facts(records: Sequence[JournalRecord]) -> StepFacts:
    """What a step tells about its session: the prompt, whether it finished, and why."""
    prompt: str | None = None
    finished = False
    stop_reason: str | None = None
    agents: dict[str, None] = {}
    for record in records:
        if record.kind == RUN_STARTED and prompt is None:
            prompt = _text_or_none(record.data.get("prompt"))
        elif record.kind == RUN_FINISHED:
            finished = True
            stop_reason = _text_or_none(record.data.get("stop_reason"))
        elif record.kind == AGENT_STARTED and isinstance(agent := record.data.get("agent"), str):
            agents[agent] = None
    if prompt is None and not finished and not agents:
        return _NO_FACTS  # most steps (a model or tool call): nothing to build
    return StepFacts(
        prompt=prompt, finished=finished, stop_reason=stop_reason, agents=tuple(agents)
    )


_NO_FACTS = StepFacts(prompt=None, finished=False, stop_reason=None)


def merge_agents(known: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, ...]:
    """``known`` followed by the agents of ``new`` it does not hold yet."""
    return known + tuple(agent for agent in new if agent not in known)


def _text_or_none(value: object) -> str | None:
    # A summary is for display, and its column holds UTF-8: a lone surrogate (kept exactly in
    # the record itself) is shown as U+FFFD here.
    if not isinstance(value, str):
        return None
    if value.isascii():
        return value
    return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in value)
