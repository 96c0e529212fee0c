"""The run's side of a journal: records steps live, or replays and checks them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from swarmkit.exceptions import ModelError
from swarmkit.interrupts import Decision, decision_audit, decision_from_data, decision_to_data
from swarmkit.journal._appender import Appender, LeaseTerms
from swarmkit.journal._codec import outcome_of, request_summary, response_of, response_to_data
from swarmkit.journal._course import (
    Course,
    Fork,
    Fresh,
    Mirrored,
    Replay,
    Resume,
    first_seq,
    leased,
    prefix_of,
    sink_of,
)
from swarmkit.journal._cursor import STATE_EDITED, ReplayCursor, TimeTravel
from swarmkit.journal._digest import PartCache, RequestDigester
from swarmkit.journal._kept import OWN_NOTES, kept, outcome_shown, response_shown
from swarmkit.journal._records import OPTIONAL_NOTES, JournalRecord
from swarmkit.journal._writer import NOTHING_HELD, Held, RequestHistory
from swarmkit.messages import ToolCall
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.redaction import Redactor
from swarmkit.tools import ToolOutcome, outcome_to_data


class Tape:
    """Journals one run of a session along its course. While the course's records last, each
    step must match the next one and is answered from it (the cursor's job); then the run goes
    live and its records are appended (the appender's job), unless the course is a strict
    replay, which reports a divergence instead of calling the network."""

    __slots__ = (
        "_appender",
        "_course",
        "_cursor",
        "_decided_at",
        "_decision",
        "_digester",
        "_executes_tools",
        "_live_step",
        "_prefix_done",
        "_redact",
        "_replayed_call",
        "_step_digest",
        "_strict",
        "keeps_records",
        "store",
    )

    def __init__(
        self,
        course: Course,
        session_id: str,
        *,
        travel: TimeTravel,
        redact: Redactor | None = None,
        digests: PartCache | None = None,
        lease: LeaseTerms | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._course = course
        self._strict = isinstance(course, Replay)
        """Whether the course is a strict replay, which never goes live."""
        self.keeps_records = not (isinstance(course, Fresh) and course.journal is None)
        self.store = leased(course)  # None: an engine's mirror, a replay, no journal
        self._cursor = ReplayCursor(session_id, prefix_of(course), travel)
        self._appender = _appender_for(course, session_id, lease, clock)
        self._redact = redact
        journaled = self._appender is not None or not self._cursor.empty  # else none digested
        self._digester = RequestDigester(digests, redact) if journaled else None
        self._decision = course.decision if isinstance(course, Resume) else None
        self._executes_tools = _executes_tools(course)
        self._decided_at: float | None = None
        self._step_digest: str | None = None
        self._replayed_call: JournalRecord | None = None
        self._live_step = self._prefix_done = False

    async def open(self) -> None:
        """Take the session's lease before the first write (``SessionBusyError`` if it is
        held); a fork then writes the records it starts with."""
        if self._appender is not None:
            await self._appender.open(prefix_of(self._course) if _copies(self._course) else ())

    def held(self, kind: str) -> Held | None:
        """What the journal held for a user's callback here (see ``StepWriter.held``)."""
        return self._cursor.held(kind)

    def held_stop(self) -> Held | None:
        """What the journal held for a limit check here (see ``StepWriter.held_stop``)."""
        record = self._cursor.next
        if record is None:
            return None
        if record.kind != "limit_reached":
            return NOTHING_HELD
        # Step over the limits' stops that a resume went on from (``limit_reached``,
        # ``run_finished``), however many in a row; a stop the session ended with is held.
        while self._cursor.at_resumed_stop():
            self._advance(2)
        record = self._cursor.next
        if record is None or record.kind != "limit_reached":
            return NOTHING_HELD
        return Held(data=record.data)

    async def note(self, kind: str, data: Mapping[str, Any]) -> bool:
        """A step the run decides by itself (a handoff, a rule, its start and end); whether
        the journal held it."""
        if self._appender is None and self._cursor.empty:
            return False
        clean = data if kind in OWN_NOTES else kept(self._redact, data)
        if kind in OPTIONAL_NOTES and _lacks(self._course, self._cursor, kind):
            return False
        if not self._cursor.done:
            self._cursor.expect(kind, clean)
            self._advance()
            return True
        if self._strict:
            self._check_may_go_live(kind, clean)
        self._add(kind, clean)
        return False

    async def replayed_response(
        self, agent: str, turn: int, request: ModelRequest, history: RequestHistory | None = None
    ) -> ModelResponse | None:
        """The journaled response to this request, or None when the run is live."""
        record = self._cursor.next
        self._live_step = record is None
        self._step_digest = None
        if record is None:
            if self._strict:
                self._check_may_go_live("model_call", {"agent": agent, "turn": turn})
            await self._flush_costly()
            if self._appender is not None:
                # Digested now, while the history is held by reference: the record of this
                # call (written once it answers) reuses it.
                self._step_digest = self._digest_of(request, history)
            return None
        digest = self._digest_of(request, history)
        cursor = self._cursor
        if record.kind != "model_call" or record.data.get("digest") != digest:
            whole = with_history(request, history)
            _request_differs(cursor, record, whole, digest, agent=agent, turn=turn)
        if cursor.travel.requested is not None:
            cursor.travel.requested(record.seq, agent, turn, with_history(request, history))
        self._replayed_call = record
        self._advance()
        if "error" in record.data:
            raise ModelError(str(record.data["error"]), model="journal", attempts=0)
        return response_of(record)

    def record_response(
        self,
        agent: str,
        turn: int,
        request: ModelRequest,
        response: ModelResponse,
        *,
        shadow: str | None = None,
    ) -> None:
        """Journal a live model call, ``shadow`` first (see ``SHADOW``), before any side effect."""
        if self._live_step and self._appender is not None:
            data = _model_data(agent, turn, request, self._digest_of(request), shadow)
            shown = response_to_data(response)
            data["response"] = (
                shown if self._redact is None else response_shown(self._redact, shown)
            )
            self._appender.add("model_call", kept(self._redact, data))

    def held_verdicts(self) -> str | None:
        """What the model call just replayed holds of shadow verdicts (see ``StepWriter``)."""
        call = self._replayed_call
        return None if self._live_step or call is None else str(call.data.get(SHADOW) or "")

    def check_verdicts(self, data: str) -> None:
        """Diverge unless the model call just replayed holds ``data`` as its verdicts."""
        _check_verdicts(self._cursor, self._replayed_call, data)

    def record_model_error(
        self, agent: str, turn: int, request: ModelRequest, error: ModelError
    ) -> None:
        """Journal a model call that failed for good, so replay fails the same way."""
        if self._live_step and self._appender is not None:
            data = _model_data(agent, turn, request, self._digest_of(request))
            data["error"] = str(error)
            self._appender.add("model_call", kept(self._redact, data))

    async def replayed_outcome(
        self, agent: str, call: ToolCall, arguments: str | None = None
    ) -> ToolOutcome | None:
        """The journaled outcome of this tool call, or None when the tool must run for real
        (``arguments``: the ones it runs with when a person edited the model's)."""
        record = self._cursor.next
        self._live_step = record is None
        if record is None:
            if self._strict:
                self._check_may_go_live("tool_call", {"agent": agent, "name": call.name})
            await self._flush_costly()
            return None
        if record.kind != "tool_call" or not _same_call(self._redact, record.data, agent, call):
            _check_call(
                self._cursor, self._redact, record, agent=agent, call=call, arguments=arguments
            )
        self._advance()
        return None if self._executes_tools else outcome_of(record)

    def record_outcome(
        self,
        agent: str,
        call: ToolCall,
        outcome: ToolOutcome,
        decision: Decision | None = None,
        arguments: str | None = None,
    ) -> None:
        """Journal a live tool call, its outcome and a person's ``decision`` on it if any."""
        if self._live_step and self._appender is not None:
            data = _outcome_data(self._redact, agent, call, outcome, arguments)
            if decision is not None:
                data["decision"] = _audit(decision, call, data, self._decided_at)
            self._appender.add("tool_call", kept(self._redact, data))

    async def interrupt(self, pending: Mapping[str, Any]) -> Decision | None:
        """At a pause point: the human's decision if the journal (or resume) has one, else None."""
        await self.note("interrupt", pending)
        cursor = self._cursor
        finished = cursor.next
        if finished is None:
            return self._take_resume_decision() if cursor.at_last() else None
        if finished.kind == "resumed":
            # A DecisionSource decided this pause live; replay takes the same decision.
            return self._journaled_decision(finished, steps=1)
        if finished.kind != "run_finished":
            return None
        resumed = cursor.peek(1)
        if resumed is not None and resumed.kind == "resumed":
            return self._journaled_decision(resumed, steps=2)
        if resumed is None and self._decision is not None:
            self._advance()
            return self._take_resume_decision()
        return None

    def _journaled_decision(self, record: JournalRecord, *, steps: int) -> Decision:
        self._advance(steps)
        self._decided_at = record.at
        return decision_from_data(record.data)

    def record_decision(self, decision: Decision) -> None:
        """Journal a decision a DecisionSource gave live, so replay takes the same path."""
        record = self._add("resumed", kept(self._redact, decision_to_data(decision)))
        self._decided_at = None if record is None else record.at

    async def flush(self) -> None:
        """Write the pending records as one transaction (one step); a failed write is never
        dropped (see ``Appender.flush``)."""
        if self._appender is not None:
            await self._appender.flush()

    async def cancel(self, data: Mapping[str, Any]) -> None:
        """The run was cancelled: journal its end unless replaying, write what is pending."""
        if self._cursor.done:
            await self.note("run_finished", data)
        await self.abandon()

    async def abandon(self) -> None:
        """The run was cancelled or its task torn down: write what is pending, let go."""
        try:
            await self.flush()
        finally:
            await self.release()

    async def release(self) -> None:
        """Give up the session's lease (a run that ended, paused or crashed in this process)."""
        if self._appender is not None:
            await self._appender.release()

    async def close(self) -> None:
        """Check the whole journal was replayed, then write what is pending."""
        self._cursor.check_used_up()
        try:
            await self.flush()
        finally:
            if self._appender is not None and not self._appender.broken:
                await self._appender.release()

    async def _flush_costly(self) -> None:
        """Before a live call: make earlier model and tool results durable, so a crash from
        here on never repeats them; records the run can recompute wait for the next write.
        A mirror writes only when the run ends or pauses: its engine keeps the durable history."""
        appender = self._appender
        if appender is None or not appender.holds_costly or isinstance(self._course, Mirrored):
            return
        await appender.flush()

    def _advance(self, steps: int = 1) -> None:
        self._cursor.advance(steps)
        if self._cursor.done and not self._prefix_done:
            self._prefix_done = True
            self._after_prefix()

    def _after_prefix(self) -> None:
        """A fork's own edit is made the moment its prefix is used up (before any rule reads
        the state)."""
        edit = _edit_of(self._course)
        if edit is not None:
            self._cursor.travel.apply(edit["context_update"])
            self._add(STATE_EDITED, kept(self._redact, edit))

    def _check_may_go_live(self, kind: str, data: Mapping[str, Any]) -> None:
        if self._strict and not self._cursor.empty:
            self._cursor.past_the_end(kind, data)  # a strict replay never goes live

    def _take_resume_decision(self) -> Decision | None:
        decision, self._decision = self._decision, None
        if decision is not None:
            self.record_decision(decision)
        return decision

    def _digest_of(self, request: ModelRequest, history: RequestHistory | None = None) -> str:
        """The live step's digest, taken when the step began; else computed from ``request``."""
        digest, self._step_digest = self._step_digest, None
        if digest is None:
            assert self._digester is not None  # a tape that writes or replays has one
            digest = self._digester.digest(request, history)
        return digest

    def _add(self, kind: str, data: Mapping[str, Any]) -> JournalRecord | None:
        return None if self._appender is None else self._appender.add(kind, data)


def _audit(
    decision: Decision, call: ToolCall, data: Mapping[str, Any], at: float | None
) -> dict[str, Any]:
    """What the trail keeps of a person's decision on a tool call (its record's ``data``: the
    model's arguments against those it ran with), with its time."""
    audit = decision_audit(decision, call.arguments, data["arguments"])
    if at is not None:
        audit["at"] = at
        # Keys in the order a reader scans them: what, who, why, when, which fields.
        audit = {k: audit[k] for k in sorted(audit, key=_AUDIT_ORDER.index)}
    return audit


def _lacks(course: Course, cursor: ReplayCursor, kind: str) -> bool:
    """Whether the records a run follows lack an optional note here (written before it was
    kept): the run steps on without it; a strict replay past its end writes none."""
    record = cursor.next
    if record is None:
        return isinstance(course, Replay) and not cursor.empty
    return record.kind != kind


def _appender_for(
    course: Course, session_id: str, lease: LeaseTerms | None, clock: Callable[[], float] | None
) -> Appender | None:
    """What writes a course's new records (None: it writes nothing)."""
    sink, journal = sink_of(course), leased(course)
    if sink is None:
        return None
    terms = None if journal is None or lease is None else (journal, lease)
    return Appender(sink, session_id, next_seq=first_seq(course), lease=terms, clock=clock)


def _copies(course: Course) -> bool:
    """Whether a course writes the records it replays under its own id first (a fork)."""
    return isinstance(course, Fork)


def _edit_of(course: Course) -> Mapping[str, Any] | None:
    """The time-travel edit a course makes when its prefix is used up (a fork's, if any)."""
    match course:
        case Fork(edit=edit):
            return edit
        case Fresh() | Mirrored() | Replay() | Resume():
            return None


def _executes_tools(course: Course) -> bool:
    """Whether tools run for real even while the course replays."""
    match course:
        case Replay(execute_tools=execute) | Fork(execute_tools=execute):
            return execute
        case _:
            return False


_AUDIT_ORDER = ("kind", "reason", "decided_by", "note", "at", "edited")


def with_history(request: ModelRequest, history: RequestHistory | None) -> ModelRequest:
    """The whole request: its system message followed by ``history`` (when given)."""
    return request if history is None else history.sent_with(request)


def _request_differs(
    cursor: ReplayCursor,
    record: JournalRecord,
    request: ModelRequest,
    digest: str,
    *,
    agent: str,
    turn: int,
) -> NoReturn:
    """Diverge at a replayed model call: another kind of record, or another request."""
    if record.kind != "model_call":
        cursor.diverge(record, "model_call", {"agent": agent, "turn": turn, "digest": digest})
    cursor.diverge(
        record,
        "model_call",
        _model_data(agent, turn, request, digest),
        why=f"the request {agent!r} sends at turn {turn} differs from the journaled one",
    )


def _outcome_data(
    redact: Redactor | None,
    agent: str,
    call: ToolCall,
    outcome: ToolOutcome,
    arguments: str | None,
) -> dict[str, Any]:
    """A tool call's record (not one re-executed during replay): the call and its outcome.
    It holds the ``arguments`` the tool ran with; when a person edited the model's, the
    model's are kept as ``proposed_arguments``, and a person's decision (kind, who, note,
    time, edited fields) beside them (see ``_audit``)."""
    shown = outcome_to_data(outcome)
    if redact is not None:
        shown = outcome_shown(redact, shown)
    data = {**_tool_key(agent, call), "outcome": shown}
    if arguments is not None and arguments != call.arguments:
        data["arguments"], data["proposed_arguments"] = arguments, call.arguments
    return data


def _check_verdicts(cursor: ReplayCursor, record: JournalRecord | None, data: str) -> None:
    assert record is not None  # called only where held_verdicts found the replayed call
    if record.data.get(SHADOW) != data:
        why = (
            f"the shadow rules' verdicts on {record.data.get('agent')!r}'s decision at turn "
            f"{record.data.get('turn')} differ from the journaled ones"
        )
        cursor.diverge(record, "model_call", {SHADOW: data}, why=why)


SHADOW = "shadow"
"""The member of a live ``model_call`` record holding the shadow rules' verdicts on its
decision: its first, so a store can read the verdicts alone (``read_many``'s ``leading``)."""


def _model_data(
    agent: str, turn: int, request: ModelRequest, digest: str, shadow: object = None
) -> dict[str, Any]:
    summary = request_summary(request)
    if shadow is None:
        return {"agent": agent, "turn": turn, "digest": digest, "request": summary}
    return {SHADOW: shadow, "agent": agent, "turn": turn, "digest": digest, "request": summary}


def _check_call(
    cursor: ReplayCursor,
    redact: Redactor | None,
    record: JournalRecord,
    *,
    agent: str,
    call: ToolCall,
    arguments: str | None,
) -> None:
    """Diverge unless ``record`` holds this tool call as the journal keeps it."""
    asked = _tool_key(agent, call)
    if record.kind != "tool_call":
        cursor.diverge(record, "tool_call", kept(redact, asked))
    if "proposed_arguments" in record.data:
        # Since the audit trail: the record holds what ran, the model's proposal beside it.
        asked["proposed_arguments"] = call.arguments
        asked["arguments"] = call.arguments if arguments is None else arguments
    expected = kept(redact, asked)
    journaled = record.data
    for key, value in expected.items():
        if journaled.get(key) != value:
            cursor.diverge(record, "tool_call", expected)


def _same_call(
    redact: Redactor | None, data: Mapping[str, Any], agent: str, call: ToolCall
) -> bool:
    """Whether a tool call's record holds ``call`` as it is, with no secret in its arguments
    (so the journal's form of it is the call itself): the common replayed call, compared
    without building the form the journal keeps. False leaves it to the full comparison."""
    text = call.arguments
    return (
        "proposed_arguments" not in data
        and data.get("arguments") == text
        and data.get("id") == call.id
        and data.get("name") == call.name
        and data.get("agent") == agent
        and (redact is None or not redact.may_hold_secret(text))
    )


def _tool_key(agent: str, call: ToolCall) -> dict[str, Any]:
    return {"agent": agent, "id": call.id, "name": call.name, "arguments": call.arguments}
