"""The run's side of a journal: records steps live, or replays and checks them."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from swarmkit.exceptions import ModelError, ReplayDivergenceError
from swarmkit.interrupts import Decision, decision_from_data, decision_to_data
from swarmkit.journal._codec import (
    UNCOMPARED_KEYS,
    outcome_from_data,
    outcome_to_data,
    request_summary,
    response_from_data,
    response_to_data,
)
from swarmkit.journal._digest import PartCache, RequestDigester
from swarmkit.journal._records import Journal, JournalRecord
from swarmkit.messages import ToolCall
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.tools import ToolOutcome


def resumable_prefix(records: Sequence[JournalRecord]) -> tuple[JournalRecord, ...]:
    """The records a resumed run replays: a run that ended in an error retries its last step.

    The trailing ``run_finished`` of a failed run, and the failed model call before it, are
    left out of the prefix (they stay in the append-only journal), so the resumed run replays
    up to the failure and then tries it again live.
    """
    prefix = list(records)
    if (
        prefix
        and prefix[-1].kind == "run_finished"
        and prefix[-1].data.get("stop_reason") == "error"
    ):
        prefix.pop()
        if prefix and prefix[-1].kind == "model_call" and "error" in prefix[-1].data:
            prefix.pop()
    return tuple(prefix)


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
        journal: Journal | None,
        session_id: str,
        prefix: Sequence[JournalRecord] = (),
        go_live: bool = True,
        next_seq: int = 0,
        execute_tools: bool = False,
        decision: Decision | None = None,
        redact: frozenset[str] = frozenset(),
        digests: PartCache | None = None,
    ) -> None:
        self._journal = journal
        self._session_id = session_id
        self._prefix = tuple(prefix)
        self._cursor = 0
        self._go_live = go_live
        self._next_seq = next_seq
        self._execute_tools = execute_tools
        self._decision = decision
        self._redact = redact
        self._pending: list[JournalRecord] = []
        self._digester = RequestDigester(digests)
        self._live_step = False

    @property
    def replaying(self) -> bool:
        """Whether the next step is served from the journal."""
        return self._cursor < len(self._prefix)

    @property
    def executes_tools(self) -> bool:
        """Whether tools run for real even while replaying."""
        return self._execute_tools

    # -- steps ---------------------------------------------------------------------------

    async def note(self, kind: str, data: Mapping[str, Any]) -> None:
        """A step the run decides by itself (a handoff, a rule, its start and end)."""
        if self._journal is None and not self._prefix:
            return
        clean = self._clean(data)
        if self.replaying:
            self._expect(kind, clean)
        else:
            self._check_may_go_live(kind, clean)
            self._add(kind, clean)

    def upcoming(self, kind: str) -> Mapping[str, Any] | None:
        """While replaying, the data of the next record if it is a ``kind`` note, else None."""
        if self.replaying and self._prefix[self._cursor].kind == kind:
            return self._prefix[self._cursor].data
        return None

    async def replayed_response(
        self, agent: str, turn: int, request: ModelRequest
    ) -> ModelResponse | None:
        """The journaled response to this request, or None when the run is live."""
        self._live_step = not self.replaying
        if self._live_step:
            self._check_may_go_live("model_call", {"agent": agent, "turn": turn})
            await self._flush_costly()
            return None
        digest = self._digester.digest(request)
        record = self._expect_kind("model_call", {"agent": agent, "turn": turn, "digest": digest})
        if record.data.get("digest") != digest:
            self._diverge(
                record,
                "model_call",
                self._model_data(agent, turn, request, digest),
                why=f"the request {agent!r} sends at turn {turn} differs from the journaled one",
            )
        self._cursor += 1
        if "error" in record.data:
            raise ModelError(str(record.data["error"]), model="journal", attempts=0)
        return response_from_data(record.data["response"])

    def record_response(
        self, agent: str, turn: int, request: ModelRequest, response: ModelResponse
    ) -> None:
        """Journal a live model call (written before anything that can have a side effect)."""
        if not self._live_step or self._journal is None:
            return
        data = self._model_data(agent, turn, request, self._digester.digest(request))
        data["response"] = response_to_data(response)
        self._add("model_call", self._clean(data))

    def record_model_error(
        self, agent: str, turn: int, request: ModelRequest, error: ModelError
    ) -> None:
        """Journal a model call that failed for good, so replay fails the same way."""
        if not self._live_step or self._journal is None:
            return
        data = self._model_data(agent, turn, request, self._digester.digest(request))
        data["error"] = str(error)
        self._add("model_call", self._clean(data))

    async def replayed_outcome(self, agent: str, call: ToolCall) -> ToolOutcome | None:
        """The journaled outcome of this tool call, or None when the tool must run for real."""
        self._live_step = not self.replaying
        if self._live_step:
            self._check_may_go_live("tool_call", {"agent": agent, "name": call.name})
            await self._flush_costly()
            return None
        expected = self._clean(_tool_key(agent, call))
        record = self._expect_kind("tool_call", expected)
        if {k: record.data.get(k) for k in expected} != expected:
            self._diverge(record, "tool_call", expected)
        self._cursor += 1
        return None if self._execute_tools else outcome_from_data(record.data["outcome"])

    def record_outcome(self, agent: str, call: ToolCall, outcome: ToolOutcome) -> None:
        """Journal a live tool call and its outcome (not one re-executed during replay)."""
        if not self._live_step or self._journal is None:
            return
        data = {**_tool_key(agent, call), "outcome": outcome_to_data(outcome)}
        self._add("tool_call", self._clean(data))

    async def interrupt(self, pending: Mapping[str, Any]) -> Decision | None:
        """At a pause point: the human's decision if the journal (or resume) has one, else None."""
        await self.note("interrupt", pending)
        if not self.replaying:
            return self._take_resume_decision() if self._resuming_here() else None
        finished = self._prefix[self._cursor]
        after = self._cursor + 1
        if finished.kind != "run_finished":
            return None
        if after < len(self._prefix) and self._prefix[after].kind == "resumed":
            self._cursor = after + 1
            return decision_from_data(self._prefix[after].data)
        if after == len(self._prefix) and self._decision is not None:
            self._cursor = after
            return self._take_resume_decision()
        return None

    async def flush(self) -> None:
        """Write the pending records as one transaction (one step)."""
        if self._pending and self._journal is not None:
            records, self._pending = self._pending, []
            await self._journal.append(records)

    async def _flush_costly(self) -> None:
        """Before a live call: make earlier model and tool results durable, so a crash from
        here on never repeats them; records the run can recompute wait for the next write."""
        if any(record.kind in _COSTLY for record in self._pending):
            await self.flush()

    async def close(self) -> None:
        """Check the whole journal was replayed, then write what is pending."""
        if self.replaying:
            record = self._prefix[self._cursor]
            raise ReplayDivergenceError(
                f"replay of session {self._session_id!r} ended at step {record.seq}, but the "
                f"journal goes on with {record.kind!r}: the current code stops earlier",
                session_id=self._session_id,
                step=record.seq,
                diff=_diff(record.data, {}),
            )
        await self.flush()

    # -- internals -----------------------------------------------------------------------

    def _take_resume_decision(self) -> Decision | None:
        decision, self._decision = self._decision, None
        if decision is not None:
            self._add("resumed", decision_to_data(decision))
        return decision

    def _resuming_here(self) -> bool:
        return (
            self._decision is not None and bool(self._prefix) and self._cursor == len(self._prefix)
        )

    def _model_data(
        self, agent: str, turn: int, request: ModelRequest, digest: str
    ) -> dict[str, Any]:
        return {"agent": agent, "turn": turn, "digest": digest, "request": request_summary(request)}

    def _expect(self, kind: str, data: Mapping[str, Any]) -> None:
        record = self._expect_kind(kind, data)
        if _comparable(record.data) != _comparable(data):
            self._diverge(record, kind, data)
        self._cursor += 1

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
        self._pending.append(
            JournalRecord(session_id=self._session_id, seq=self._next_seq, kind=kind, data=data)
        )
        self._next_seq += 1

    def _clean(self, data: Mapping[str, Any]) -> dict[str, Any]:
        clean = dict(data)
        if self._redact:
            # Secrets enter a run through the caller's context, tools' updates and payloads.
            for key in _SECRET_CARRIERS.intersection(clean):
                clean[key] = _redacted(clean[key], self._redact)
        return clean


_COSTLY = frozenset({"model_call", "tool_call"})
_SECRET_CARRIERS = frozenset({"context", "outcome", "payload"})


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


def _redacted(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, Mapping):
        return {
            k: "[redacted]" if str(k).lower() in keys else _redacted(v, keys)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redacted(v, keys) for v in value]
    return value
