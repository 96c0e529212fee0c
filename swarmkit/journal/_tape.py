"""The run's side of a journal: records steps live, or replays and checks them."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from swarmkit.exceptions import JournalError, ModelError, ReplayDivergenceError
from swarmkit.interrupts import Decision, decision_audit, decision_from_data, decision_to_data
from swarmkit.journal._codec import (
    UNCOMPARED_KEYS,
    outcome_of,
    request_summary,
    response_of,
    response_to_data,
)
from swarmkit.journal._digest import PartCache, RequestDigester, tool_content_shown
from swarmkit.journal._records import Journal, JournalRecord, RecordSink
from swarmkit.journal._writer import NOTHING_HELD, Held, RequestHistory
from swarmkit.messages import ToolCall
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.redaction import Redactor
from swarmkit.tools import ToolOutcome, outcome_to_data


def resumable_prefix(records: Sequence[JournalRecord]) -> tuple[JournalRecord, ...]:
    """The records a resumed run replays: a run that ended in an error retries its last step,
    and one stopped by Ctrl-C (``cancelled``) goes on from where it stopped.

    The trailing ``run_finished`` of a failed run, and the failed model call before it, are
    left out of the prefix (they stay in the append-only journal), so the resumed run replays
    up to the failure and then tries it again live.
    """
    prefix = list(records)
    if prefix and prefix[-1].kind == "run_finished" and prefix[-1].data.get("limit"):
        # A run a limit ended resumes with a fresh allowance: the limit's stop is left out.
        prefix.pop()
        if prefix and prefix[-1].kind == "limit_reached":
            prefix.pop()
    if (
        prefix
        and prefix[-1].kind == "run_finished"
        and (prefix[-1].data.get("stop_reason") == "error" or prefix[-1].data.get("cancelled"))
    ):
        prefix.pop()
        if prefix and prefix[-1].kind == "model_call" and "error" in prefix[-1].data:
            prefix.pop()
    return tuple(prefix)


STATE_EDITED = "state_edited"
"""A fork's edit of the state (a state graph's ``update_state``), applied where journaled."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TimeTravel:
    """How a tape takes part in time travel: watching a replay, or editing a fork's state."""

    apply: Callable[[Mapping[str, Any]], None]
    """Merges a context update into the run's state."""
    replayed: Callable[[JournalRecord], None] = lambda record: None
    """Called with each replayed record, in order (for ``Swarm.history``)."""
    edit: Mapping[str, Any] | None = None
    """For a fork: the ``state_edited`` data (``context_update``, ``forked_from``, ``at``) to
    journal and apply when the run goes live."""
    requested: Callable[[int, str, int, ModelRequest], None] | None = None
    """Called with each replayed model call's seq, agent, turn and whole request as sent
    (for ``Swarm.requests``); None spares a replay building whole requests."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LeaseTerms:
    """The lease a writing tape holds on its session."""

    owner: str
    """This writer's name, shown to a refused second writer."""
    ttl: float
    """Seconds the lease lasts unless renewed; renewed at writes once half of it has passed."""
    clock: Callable[[], float]
    """The run's clock, to know when to renew (expiry itself is the journal's clock)."""


def replayable(records: Sequence[JournalRecord]) -> tuple[JournalRecord, ...]:
    """A whole session as one run for replay: an attempt that failed or was stopped by Ctrl-C
    and then resumed leaves its end (and its failed model call) out, as resume did."""
    kept: list[JournalRecord] = []
    for record in records:
        ended_early = record.kind == "run_finished" and (
            record.data.get("stop_reason") == "error" or record.data.get("cancelled")
        )
        if ended_early and record is not records[-1]:
            kept = list(resumable_prefix([*kept, record]))
        else:
            kept.append(record)
    return tuple(kept)


class Tape:
    """Journals one run: live steps are appended; replayed steps are served and checked.

    A tape holds a prefix of journaled records to replay (empty for a new run). While the
    prefix lasts, every step the run takes must match the next record, or replay stops with
    ReplayDivergenceError; model responses and tool outcomes come from the records. When the
    prefix is used up, a tape that may go live appends from then on; one that may not (a
    strict replay) reports a divergence instead of letting the run call the network.
    """

    def __init__(
        self,
        *,
        journal: RecordSink | None,
        session_id: str,
        prefix: Sequence[JournalRecord] = (),
        go_live: bool = True,
        next_seq: int = 0,
        execute_tools: bool = False,
        decision: Decision | None = None,
        redact: Redactor | None = None,
        digests: PartCache | None = None,
        lease: LeaseTerms | None = None,
        mirror: bool = False,
        travel: TimeTravel | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._journal = journal
        self._clock = clock
        self._decided_at: float | None = None
        self._session_id = session_id
        self._prefix = tuple(prefix)
        self._end = len(self._prefix)
        self._cursor = 0
        self._go_live = go_live
        self._next_seq = next_seq
        self._execute_tools = execute_tools
        self._decision = decision
        self._redact = redact
        self._pending: list[JournalRecord] = []
        self._digester = RequestDigester(digests, redact)
        self._step_digest: str | None = None
        self._live_step = False
        self._lease = lease
        self._leased_at: float | None = None
        self._mirror = mirror
        self._broken = False
        self._travel = travel
        self._live = False

    def bind_state(self, apply: Callable[[Mapping[str, Any]], None]) -> None:
        """Let journaled state edits (from forks) reach the run's context while replaying."""
        if self._travel is None:
            self._travel = TimeTravel(apply=apply)

    async def open(self) -> None:
        """Take the session's lease before the first write; ``SessionBusyError`` if it is held."""
        if self._journal is not None and self._lease is not None and self._go_live:
            await self._renew(self._lease)

    @property
    def executes_tools(self) -> bool:
        """Whether tools run for real even while replaying."""
        return self._execute_tools

    # -- steps ---------------------------------------------------------------------------

    def held(self, kind: str) -> Held | None:
        """What the journal held for a user's callback here (see ``StepWriter.held``)."""
        if self._cursor >= self._end:
            return None
        record = self._prefix[self._cursor]
        return Held(data=record.data) if record.kind == kind else NOTHING_HELD

    def held_stop(self) -> Held | None:
        """What the journal held for a limit check here (see ``StepWriter.held_stop``)."""
        if self._cursor >= self._end:
            return None
        record = self._prefix[self._cursor]
        if record.kind != "limit_reached" or self._pass_resumed_stop():
            return NOTHING_HELD
        return Held(data=record.data)

    def _pass_resumed_stop(self) -> bool:
        """At a limit's stop (``limit_reached``, ``run_finished``) that a resume went on from:
        step over both and say so."""
        at = self._cursor
        kinds = [record.kind for record in self._prefix[at : at + 3]]
        if kinds[:2] != ["limit_reached", "run_finished"] or len(kinds) < 3:
            return False
        self._advance(at + 2)
        return True

    async def note(self, kind: str, data: Mapping[str, Any]) -> bool:
        """A step the run decides by itself (a handoff, a rule, its start and end); whether
        the journal held it."""
        if self._journal is None and not self._prefix:
            return False
        clean = self._clean(data)
        if self._cursor < self._end:
            self._expect(kind, clean)
            return True
        self._check_may_go_live(kind, clean)
        self._add(kind, clean)
        return False

    async def replayed_response(
        self, agent: str, turn: int, request: ModelRequest, history: RequestHistory | None = None
    ) -> ModelResponse | None:
        """The journaled response to this request, or None when the run is live."""
        self._live_step = self._cursor >= self._end
        self._step_digest = None
        if self._live_step:
            self._check_may_go_live("model_call", {"agent": agent, "turn": turn})
            await self._flush_costly()
            if self._journal is not None:
                # Digested now, while the history is held by reference: the record of this
                # call (written once it answers) reuses it.
                self._step_digest = self._digester.digest(request, history)
            return None
        digest = self._digester.digest(request, history)
        record = self._prefix[self._cursor]
        if record.kind != "model_call":
            self._diverge(record, "model_call", {"agent": agent, "turn": turn, "digest": digest})
        if record.data.get("digest") != digest:
            self._diverge(
                record,
                "model_call",
                self._model_data(agent, turn, with_history(request, history), digest),
                why=f"the request {agent!r} sends at turn {turn} differs from the journaled one",
            )
        if self._travel is not None and self._travel.requested is not None:
            self._travel.requested(record.seq, agent, turn, with_history(request, history))
        self._advance(self._cursor + 1)
        if "error" in record.data:
            raise ModelError(str(record.data["error"]), model="journal", attempts=0)
        return response_of(record)

    def record_response(
        self, agent: str, turn: int, request: ModelRequest, response: ModelResponse
    ) -> None:
        """Journal a live model call (written before anything that can have a side effect)."""
        if not self._live_step or self._journal is None:
            return
        data = self._model_data(agent, turn, request, self._digest_of(request))
        data["response"] = response_to_data(response)
        if self._redact is not None:
            data["response"] = _response_shown(self._redact, data["response"])
        self._add("model_call", self._clean(data))

    def record_model_error(
        self, agent: str, turn: int, request: ModelRequest, error: ModelError
    ) -> None:
        """Journal a model call that failed for good, so replay fails the same way."""
        if not self._live_step or self._journal is None:
            return
        data = self._model_data(agent, turn, request, self._digest_of(request))
        data["error"] = str(error)
        self._add("model_call", self._clean(data))

    async def replayed_outcome(
        self, agent: str, call: ToolCall, arguments: str | None = None
    ) -> ToolOutcome | None:
        """The journaled outcome of this tool call, or None when the tool must run for real.

        ``arguments`` are the ones the tool runs with when a person edited the model's.
        """
        self._live_step = self._cursor >= self._end
        if self._live_step:
            self._check_may_go_live("tool_call", {"agent": agent, "name": call.name})
            await self._flush_costly()
            return None
        asked = _tool_key(agent, call)
        record = self._expect_kind("tool_call", self._clean(asked))
        if "proposed_arguments" in record.data:
            # Since the audit trail: the record holds what ran, the model's proposal beside it.
            asked["proposed_arguments"] = call.arguments
            asked["arguments"] = call.arguments if arguments is None else arguments
        expected = self._clean(asked)
        journaled = record.data
        for key, value in expected.items():
            if journaled.get(key) != value:
                self._diverge(record, "tool_call", expected)
        self._advance(self._cursor + 1)
        return None if self._execute_tools else outcome_of(record)

    def record_outcome(
        self,
        agent: str,
        call: ToolCall,
        outcome: ToolOutcome,
        decision: Decision | None = None,
        arguments: str | None = None,
    ) -> None:
        """Journal a live tool call and its outcome (not one re-executed during replay).

        The record holds the ``arguments`` the tool ran with; when a person edited the model's,
        the model's are kept as ``proposed_arguments``, and a person's ``decision`` (kind, who,
        note, time, edited fields) beside them.
        """
        if not self._live_step or self._journal is None:
            return
        shown = outcome_to_data(outcome)
        if self._redact is not None:
            shown = _outcome_shown(self._redact, shown)
        data = {**_tool_key(agent, call), "outcome": shown}
        if arguments is not None and arguments != call.arguments:
            data["arguments"], data["proposed_arguments"] = arguments, call.arguments
        if decision is not None:
            data["decision"] = self._audit(decision, call.arguments, data["arguments"])
        self._add("tool_call", self._clean(data))

    def _audit(self, decision: Decision, proposed: str, executed: str) -> dict[str, Any]:
        """What the trail keeps of a person's decision on a tool call, with its time."""
        audit = decision_audit(decision, proposed, executed)
        if self._decided_at is not None:
            audit["at"] = self._decided_at
            # Keys in the order a reader scans them: what, who, why, when, which fields.
            audit = {k: audit[k] for k in sorted(audit, key=_AUDIT_ORDER.index)}
        return audit

    async def interrupt(self, pending: Mapping[str, Any]) -> Decision | None:
        """At a pause point: the human's decision if the journal (or resume) has one, else None."""
        await self.note("interrupt", pending)
        if self._cursor >= self._end:
            return self._take_resume_decision() if self._resuming_here() else None
        finished = self._prefix[self._cursor]
        after = self._cursor + 1
        if finished.kind == "resumed":
            # A DecisionSource decided this pause live; replay takes the same decision.
            self._advance(self._cursor + 1)
            self._decided_at = finished.at
            return decision_from_data(finished.data)
        if finished.kind != "run_finished":
            return None
        if after < len(self._prefix) and self._prefix[after].kind == "resumed":
            self._advance(after + 1)
            self._decided_at = self._prefix[after].at
            return decision_from_data(self._prefix[after].data)
        if after == len(self._prefix) and self._decision is not None:
            self._advance(after)
            return self._take_resume_decision()
        return None

    def record_decision(self, decision: Decision) -> None:
        """Journal a decision a DecisionSource gave live, so replay takes the same path."""
        self._add("resumed", self._clean(decision_to_data(decision)))
        self._decided_at = self._pending[-1].at if self._pending else None

    async def flush(self) -> None:
        """Write the pending records as one transaction (one step).

        A write that fails is never dropped: the error goes up (its cause chained) and the
        tape writes nothing more, so a run that lost its session cannot write into it later.
        """
        if not self._pending or self._journal is None or self._broken:
            return
        records, self._pending = self._pending, []
        try:
            if self._lease is not None and self._lease_due(self._lease):
                await self._renew(self._lease)
            await self._journal.append(records)
        except BaseException as exc:
            self._broken = True
            if isinstance(exc, JournalError) or not isinstance(exc, Exception):
                raise
            raise JournalError(
                f"cannot write step {records[0].seq} of session {self._session_id!r}: {exc}"
            ) from exc

    async def cancel(self, data: Mapping[str, Any]) -> None:
        """The run was cancelled: journal its end unless replaying, write what is pending."""
        if self._cursor >= self._end:
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
        if self._journal is not None and self._lease is not None and self._leased_at is not None:
            self._leased_at = None
            journal = cast(Journal, self._journal)
            await journal.release_lease(self._session_id, owner=self._lease.owner)

    async def _renew(self, lease: LeaseTerms) -> None:
        journal = cast(Journal, self._journal)  # a tape with lease terms writes a Journal
        await journal.acquire_lease(self._session_id, owner=lease.owner, ttl=lease.ttl)
        self._leased_at = lease.clock()

    def _lease_due(self, lease: LeaseTerms) -> bool:
        return self._leased_at is None or lease.clock() - self._leased_at > lease.ttl / 2

    async def _flush_costly(self) -> None:
        """Before a live call: make earlier model and tool results durable, so a crash from
        here on never repeats them; records the run can recompute wait for the next write.
        A mirror writes only when the run ends or pauses: its engine keeps the durable history.
        """
        if not self._mirror and any(record.kind in _COSTLY for record in self._pending):
            await self.flush()

    async def close(self) -> None:
        """Check the whole journal was replayed, then write what is pending."""
        if self._cursor < self._end:
            record = self._prefix[self._cursor]
            raise ReplayDivergenceError(
                f"replay of session {self._session_id!r} ended at step {record.seq}, but the "
                f"journal goes on with {record.kind!r}: the current code stops earlier",
                session_id=self._session_id,
                step=record.seq,
                diff=_diff(record.data, {}),
            )
        try:
            await self.flush()
        finally:
            if not self._broken:
                await self.release()

    # -- internals -----------------------------------------------------------------------

    def _take_resume_decision(self) -> Decision | None:
        decision, self._decision = self._decision, None
        if decision is not None:
            self.record_decision(decision)
        return decision

    def _resuming_here(self) -> bool:
        return (
            self._decision is not None and bool(self._prefix) and self._cursor == len(self._prefix)
        )

    def _digest_of(self, request: ModelRequest) -> str:
        """The live step's digest, taken when the step began; else computed from ``request``."""
        digest, self._step_digest = self._step_digest, None
        return digest if digest is not None else self._digester.digest(request)

    def _model_data(
        self, agent: str, turn: int, request: ModelRequest, digest: str
    ) -> dict[str, Any]:
        return {"agent": agent, "turn": turn, "digest": digest, "request": request_summary(request)}

    def _expect(self, kind: str, data: Mapping[str, Any]) -> None:
        record = self._expect_kind(kind, data)
        if _comparable(record.data) != _comparable(data):
            self._diverge(record, kind, data)
        self._advance(self._cursor + 1)

    def _advance(self, cursor: int) -> None:
        """Move past replayed records, applying journaled state edits as they come, and make a
        fork's own edit the moment its prefix is used up (before any rule reads the state)."""
        travel = self._travel
        while True:
            if travel is not None:
                for record in self._prefix[self._cursor : cursor]:
                    travel.replayed(record)
            self._cursor = cursor
            if not (self._cursor < self._end and self._prefix[cursor].kind == STATE_EDITED):
                break
            if travel is not None:
                travel.apply(self._prefix[cursor].data["context_update"])
            cursor += 1
        if (
            travel is not None
            and travel.edit is not None
            and self._cursor >= self._end
            and not self._live
        ):
            self._live = True
            travel.apply(travel.edit["context_update"])
            self._add(STATE_EDITED, self._clean(travel.edit))

    def _expect_kind(self, kind: str, data: Mapping[str, Any]) -> JournalRecord:
        record = self._prefix[self._cursor]
        if record.kind != kind:
            self._diverge(record, kind, data)
        return record

    def _diverge(
        self, record: JournalRecord, kind: str, actual: Mapping[str, Any], *, why: str = ""
    ) -> None:
        if not why:
            why = (
                f"the journal holds {record.kind!r}, the current code asks for {kind!r}"
                if record.kind != kind
                else f"the current code's {kind!r} differs from the journaled one"
            )
        # Only what the current code produced is compared; the journaled answer is not shown.
        expected = {k: v for k, v in _comparable(record.data).items() if k in actual}
        raise ReplayDivergenceError(
            f"replay of session {self._session_id!r} diverged at step {record.seq}: {why}",
            session_id=self._session_id,
            step=record.seq,
            diff=_diff(expected, _comparable(actual)),
        )

    def _check_may_go_live(self, kind: str, data: Mapping[str, Any]) -> None:
        if self._go_live or not self._prefix:
            return
        step = self._prefix[-1].seq + 1
        raise ReplayDivergenceError(
            f"replay of session {self._session_id!r} reached step {step}, past the end of the "
            f"journal: the current code asks for {kind!r}, which was never recorded",
            session_id=self._session_id,
            step=step,
            diff=_diff({}, _comparable(data)),
        )

    def _add(self, kind: str, data: Mapping[str, Any]) -> None:
        if self._journal is None:
            return
        at = None if self._clock is None else self._clock()
        self._pending.append(
            JournalRecord(
                session_id=self._session_id, seq=self._next_seq, kind=kind, data=data, at=at
            )
        )
        self._next_seq += 1

    def _clean(self, data: Mapping[str, Any]) -> dict[str, Any]:
        clean = dict(data)
        if self._redact is not None:
            # Secrets enter a run through the caller's context, tools' updates and arguments,
            # payloads and the decisions a person is asked for.
            for key in _SECRET_CARRIERS.intersection(clean):
                clean[key] = self._redact.value(clean[key])
            for key in ("arguments", "proposed_arguments"):
                if isinstance(clean.get(key), str):
                    clean[key] = self._redact.json_text(clean[key])
            if "request" in clean:  # its rendered turns quote arguments and payloads
                clean["request"] = self._redact.in_text(clean["request"])
        return clean


def _outcome_shown(redact: Redactor, outcome: dict[str, Any]) -> dict[str, Any]:
    """A tool's outcome with secrets in its text hidden (a JSON result's secret keys)."""
    content = outcome.get("content")
    if not isinstance(content, str):
        return outcome
    shown = tool_content_shown(redact, content)
    return outcome if shown == content else {**outcome, "content": shown}


def _response_shown(redact: Redactor, response: dict[str, Any]) -> dict[str, Any]:
    """A model's response with secrets in the arguments of its tool calls hidden."""
    calls = response.get("tool_calls")
    if not calls:
        return response
    shown = [
        {**call, "arguments": redact.json_text(call["arguments"])}
        if isinstance(call.get("arguments"), str)
        else call
        for call in calls
    ]
    return {**response, "tool_calls": shown}


_COSTLY = frozenset({"model_call", "tool_call"})
_AUDIT_ORDER = ("kind", "reason", "decided_by", "note", "at", "edited")
_SECRET_CARRIERS = frozenset({"context", "outcome", "payload", "pending"})


def with_history(request: ModelRequest, history: RequestHistory | None) -> ModelRequest:
    """The whole request: its system message followed by ``history`` (when given)."""
    return request if history is None else history.sent_with(request)


def _tool_key(agent: str, call: ToolCall) -> dict[str, Any]:
    return {"agent": agent, "id": call.id, "name": call.name, "arguments": call.arguments}


def _comparable(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in UNCOMPARED_KEYS}


def _diff(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> str:
    def lines(value: Mapping[str, Any]) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, default=str).splitlines()

    return "\n".join(
        difflib.unified_diff(
            lines(expected),
            lines(actual),
            "journal (expected)",
            "current code (actual)",
            lineterm="",
        )
    )
