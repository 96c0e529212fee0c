"""Sessions: the one place that turns a session verb into a course and drives a run loop on it.

Start (fresh, continued or mirrored), replay, resume, fork and what-if each read their records
and build a course (``swarmkit.journal._course``); the driver (``_driver``) is the one place a
run loop is built from a course and driven. None of it sees the ``Swarm`` facade.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from swarmkit._run import (
    Streaming,
    check_decision,
)
from swarmkit._sessions import _travel
from swarmkit._sessions._driver import Driver
from swarmkit._sessions._start import (
    Start,
    Turn,
    check_context,
    check_start_agent,
    fresh_state,
    journaled_state,
    start_of,
)
from swarmkit._sessions._turns import fresh_course, next_turn, turn_start
from swarmkit.config import SwarmConfig, check_journal
from swarmkit.events import Event
from swarmkit.exceptions import ConfigurationError, JournalError, ReplayDivergenceError
from swarmkit.interrupts import Decision, DecisionSource, PauseForDecision
from swarmkit.journal import (
    Journal,
    JournalRecord,
    session_status,
)
from swarmkit.journal._course import (
    Course,
    Fork,
    Replay,
    Resume,
    replayable,
    resumable_prefix,
)
from swarmkit.journal._digest import PartCache
from swarmkit.journal._records import RecordSink, last_run_record
from swarmkit.journal._stored import read_for_replay
from swarmkit.limits import UsageLimits
from swarmkit.redaction import Redactor
from swarmkit.result import RunResult, SentRequest, SessionState
from swarmkit.runtime import DEFAULT_RUNTIME, Runtime
from swarmkit.spec import RunSeams, SwarmSpec
from swarmkit.tools import InProcessToolRunner, ToolRunner


class Sessions:
    """Runs the sessions of one compiled swarm: every journal read and tape is made here."""

    def __init__(
        self, spec: SwarmSpec, config: SwarmConfig, digests: PartCache | None = None
    ) -> None:
        self.spec = spec
        """The compiled swarm its runs drive."""
        self._journal = config.journal
        self._session_ids = config.session_ids
        self.redactor = Redactor.of(config.redact_keys)
        """Hides secret values in what a run journals."""
        self.digests = digests if digests is not None else PartCache()
        """Digests of requests' parts, shared by the swarms derived from one another."""
        self.defaults = RunSeams(
            runtime=config.runtime or DEFAULT_RUNTIME,
            tool_runner=config.tool_runner or InProcessToolRunner(),
            decisions=config.decisions or PauseForDecision(),
        )
        """The swarm's own seams, which a call's seams override one by one."""
        self.driver = Driver(
            spec,
            observers=config.observers,
            redactor=self.redactor,
            digests=self.digests,
            lease_ttl=float(config.lease_ttl),
        )
        """Builds and drives the run loops."""

    def seams(
        self,
        deps: Any = None,
        runtime: Runtime | None = None,
        tool_runner: ToolRunner | None = None,
        decisions: DecisionSource | None = None,
    ) -> RunSeams:
        """The seams of one run: the given ones, else the swarm's."""
        defaults = self.defaults
        return RunSeams(
            runtime=runtime or defaults.runtime,
            tool_runner=tool_runner or defaults.tool_runner,
            decisions=decisions or defaults.decisions,
            deps=deps,
        )

    # -- new sessions --------------------------------------------------------------------

    async def events(
        self,
        prompt: str,
        *,
        context: Mapping[str, Any] | None,
        session_id: str | None,
        journal: Journal | None,
        mirror: RecordSink | None,
        seams: RunSeams,
        streaming: Streaming,
        limits: UsageLimits | None,
        turn: Turn,
    ) -> AsyncGenerator[Event, None]:
        """A new run's events, journaled in ``journal`` (or the swarm's) or sent to ``mirror``."""
        check_journal(journal)
        store = journal or self._journal
        seams = self._audited(seams, store)
        start, session_id = await turn_start(self, turn, session_id, store)
        if start is not None:
            start = next_turn(self.spec, start, prompt, context, turn.start_agent)
        state = fresh_state(
            self.spec,
            prompt,
            context,
            session_id,
            seams,
            redactor=self.redactor,
            new_id=self._session_ids or seams.runtime.new_id,
            entry=check_start_agent(turn.start_agent, self.spec),
            start=start,
        )
        # A random id of our own cannot be in the journal; a given or user-made id may be.
        checked = session_id is not None or self._session_ids is not None
        course = await fresh_course(store, mirror, state.session_id, checked=checked)
        # A run that is not streamed and has no observer is read only for its result.
        quiet = not streaming and not self.driver.observed
        loop = await self.driver.loop(
            course, state, seams, limits=limits, streaming=streaming, quiet=quiet
        )
        # Closing the loop's generator here, not at interpreter exit, lets a caller who stops
        # reading early have the run's last journal write happen while the journal is open.
        events = self.driver.observe(loop.events())
        try:
            async for event in events:
                yield event
        finally:
            # A loop suspended mid-step (not at a yield) is being torn down as a whole, e.g.
            # garbage-collected with a stopped Temporal worker: it closes itself.
            if not getattr(events, "ag_running", False):
                await events.aclose()

    def _audited(self, seams: RunSeams, store: Journal | None) -> RunSeams:
        """The seams with the journal whose rules log audited rules read and write."""
        return seams if self.spec.audit is None else replace(seams, rules_log=store)

    # -- journaled sessions --------------------------------------------------------------

    async def replay(
        self,
        session_id: str,
        journal: Journal | None,
        *,
        seams: RunSeams,
        execute_tools: bool = False,
        live_after: int | None = None,
        fork_session_id: str | None = None,
        prompt: str | None = None,
    ) -> RunResult:
        """Re-run a journaled session from its records (see ``Swarm.replay``): strictly, or
        forked live after ``live_after`` steps."""
        strict = live_after is None and not execute_tools
        store, records, start = await self.read(session_id, journal, replaying=strict)
        start = start if prompt is None else replace(start, prompt=prompt)
        if live_after is None:
            course: Course = Replay(
                records=replayable(records), journal=store, execute_tools=execute_tools
            )
            return await self._rerun(course, start, session_id, seams)
        fork_id = fork_session_id or f"{session_id}__fork_{live_after}"
        prefix = _fork_prefix(records, live_after, fork_id)
        course = Fork(journal=store, prefix=prefix, execute_tools=execute_tools)
        return await self._rerun(course, start, fork_id, seams)

    async def what_if(
        self,
        session_id: str,
        journal: Journal | None,
        *,
        seams: RunSeams,
        prompt: str | None = None,
        context: Mapping[str, Any] | None = None,
        live: bool = False,
    ) -> RunResult:
        """Replay a session as if it had started with another prompt or context (see
        ``Swarm.what_if``): offline, the first request the change alters stops it; ``live``
        forks a new session there instead, which goes on against the model."""
        store, read, start = await self.read(session_id, journal)
        changes: dict[str, Any] = {}
        if prompt is not None:
            changes["prompt"] = prompt
        if context is not None:
            changes["context"] = dict(context)
        start = replace(start, **changes)
        # The changed start is taken as given; what it changes downstream is what is compared.
        records = list(replayable(read))
        records[0] = replace(records[0], data={**records[0].data, **self._clean_start(changes)})
        try:
            replay = Replay(records=tuple(records), journal=store)
            return await self._rerun(replay, start, session_id, seams)
        except ReplayDivergenceError as diverged:
            if not live:
                raise
            at = diverged.step
        # Live: the steps before the first changed request are the fork's, labelled as such.
        fork_id = f"{session_id}__whatif_{at}"
        fork = Fork(journal=store, prefix=_fork_prefix(records, at, fork_id))
        return await self._rerun(fork, start, fork_id, seams)

    def _clean_start(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """The changed start as the journal would hold it (secrets redacted)."""
        if "context" not in changes:
            return dict(changes)
        return {**changes, "context": self.redactor.value(changes["context"])}

    async def resume(
        self,
        session_id: str,
        journal: Journal | None,
        *,
        seams: RunSeams,
        decision: Decision | None,
        limits: UsageLimits | None,
    ) -> RunResult:
        """Continue a crashed or paused session live (see ``Swarm.resume``)."""
        store, records, start = await self.read(session_id, journal)
        _check_resumable(records, session_id, decision)
        if decision is not None:
            end = last_run_record(records)
            check_decision(self.spec, end.data.get("pending") if end else None, decision)
        course = Resume(
            journal=store,
            prefix=resumable_prefix(replayable(records)),
            next_seq=len(records),
            decision=decision,
        )
        return await self._rerun(course, start, session_id, seams, limits)

    async def fork(
        self,
        session_id: str,
        *,
        at: int,
        context_update: Mapping[str, Any] | None,
        journal: Journal | None,
        fork_session_id: str | None,
        seams: RunSeams,
    ) -> RunResult:
        """Continue live from the state after step ``at``, edited (see ``Swarm.fork``)."""
        store, records, start = await self.read(session_id, journal)
        fork_id = fork_session_id or f"{session_id}__fork_{at}"
        update = check_context(context_update)
        edit = {"context_update": update, "forked_from": session_id, "at": at}
        course = Fork(journal=store, prefix=_fork_prefix(records, at + 1, fork_id), edit=edit)
        return await self._rerun(course, start, fork_id, seams)

    async def history(
        self, session_id: str, journal: Journal | None, *, seams: RunSeams
    ) -> tuple[SessionState, ...]:
        """The session's states, one after each journaled step (see ``Swarm.history``)."""
        return await _travel.history(self, session_id, journal, seams=seams)

    async def requests(
        self, session_id: str, journal: Journal | None, *, seams: RunSeams
    ) -> tuple[SentRequest, ...]:
        """Every model call's whole request as sent (see ``Swarm.requests``)."""
        return await _travel.requests(self, session_id, journal, seams=seams)

    async def read(
        self, session_id: str, journal: Journal | None, *, replaying: bool = False
    ) -> tuple[Journal, Sequence[JournalRecord], Start]:
        """A journaled session: the journal it is read from (the call's, else the swarm's),
        its records and what it was started with. ``replaying``: for a strict replay, whose
        records a store may hand over undecoded (each decoded as the run reaches it)."""
        check_journal(journal)
        store = journal or self._journal
        if store is None:
            raise ConfigurationError(
                f"no journal to read session {session_id!r} from: pass journal= or Swarm(journal=)"
            )
        if replaying:
            records = await read_for_replay(store, session_id)
        else:
            records = await store.read(session_id)
        return store, records, start_of(records, session_id)

    async def _rerun(
        self,
        course: Course,
        start: Start,
        session_id: str,
        seams: RunSeams,
        limits: UsageLimits | None = None,
    ) -> RunResult:
        """Run what a journaled session started with again, along ``course``; a resumed or
        forked run reads the rules log's demotions once it goes live, like a new run."""
        if isinstance(course, Fork | Resume):
            seams = self._audited(seams, course.journal)
        state = journaled_state(self.spec, start, session_id, seams)
        return await self.driver.drive(course, state, seams, limits=limits)


def _fork_prefix(
    records: Sequence[JournalRecord], live_after: int, fork_id: str
) -> tuple[JournalRecord, ...]:
    if not 0 < live_after <= len(records):
        raise ConfigurationError(
            f"live_after must be from 1 to {len(records)} (the session's steps), got {live_after}"
        )
    return tuple(replace(r, session_id=fork_id) for r in records[:live_after])


def _check_resumable(
    records: Sequence[JournalRecord], session_id: str, decision: Decision | None
) -> None:
    status = session_status(records)
    end = last_run_record(records)
    reason = end.data.get("stop_reason") if end else None
    if status != "running" and reason not in _RESUMABLE:
        raise JournalError(
            f"session {session_id!r} already finished ({reason}); replay it instead of resuming"
        )
    if status == "waiting" and decision is None:
        raise JournalError(
            f"session {session_id!r} is waiting for a human decision: "
            "pass decision=approve(), reject(reason) or edit(payload=...)"
        )
    if status != "waiting" and decision is not None:
        raise JournalError(
            f"session {session_id!r} is not waiting for a decision; resume it without one"
        )


_RESUMABLE = ("interrupted", "error", "timeout", "usage_limit", "budget")
