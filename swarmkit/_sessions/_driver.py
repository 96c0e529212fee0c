"""The driver: the one place a run loop is built, from a course, the compiled spec and the
run's seams, and driven to its events or its result (delegated sub-runs included)."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from swarmkit._run import RunLoop, RunState, Streaming
from swarmkit._sessions._start import Start, journaled_state
from swarmkit.config import check_usage_limits
from swarmkit.events import Event, EventObserver, RunFinished
from swarmkit.journal import Journal, JournalRecord, session_status
from swarmkit.journal._appender import LeaseTerms
from swarmkit.journal._course import (
    Course,
    Fork,
    Fresh,
    Mirrored,
    Replay,
    Resume,
    prefix_of,
    replayable,
    resumable_prefix,
)
from swarmkit.journal._cursor import TimeTravel
from swarmkit.journal._digest import PartCache
from swarmkit.journal._tape import Tape
from swarmkit.limits import UsageLimits
from swarmkit.redaction import Redactor
from swarmkit.result import RunResult
from swarmkit.spec import Delegator, RunSeams, SubRun, SwarmSpec


class Driver:
    """Drives the runs of one compiled swarm along their courses."""

    def __init__(
        self,
        spec: SwarmSpec,
        *,
        observers: Sequence[EventObserver],
        redactor: Redactor,
        digests: PartCache,
        lease_ttl: float,
    ) -> None:
        self._spec = spec
        self._observers = tuple(observers)
        self._redactor = redactor
        self._digests = digests
        self._lease_ttl = lease_ttl
        self._delegates = any(plan.delegates for plan in spec.plans.values())
        """Whether an agent delegates (``as_tool``): only then does a run need a delegator."""

    @property
    def observed(self) -> bool:
        """Whether anyone but the caller watches a run's events."""
        return bool(self._observers)

    async def drive(
        self,
        course: Course,
        state: RunState,
        seams: RunSeams,
        *,
        limits: UsageLimits | None = None,
        travel: TimeTravel | None = None,
    ) -> RunResult:
        """Run ``state`` along ``course`` to its result, its events seen by the observers."""
        # Without observers only the result is read: the loop need not build per-step events.
        quiet = not self._observers
        loop = await self.loop(
            course, state, seams, limits=limits, streaming=False, quiet=quiet, travel=travel
        )
        return await last_result(self.observe(loop.events()))

    async def loop(
        self,
        course: Course,
        state: RunState,
        seams: RunSeams,
        *,
        limits: UsageLimits | None,
        streaming: Streaming,
        quiet: bool,
        travel: TimeTravel | None = None,
    ) -> RunLoop:
        """The one place a run loop is built: ``state`` driven along ``course``, its tape open
        (the session leased) and its delegations run as sub-runs in the course's journal."""
        if streaming and self._observers:  # they read every TextDelta: none is written
            streaming = True
        runtime = seams.runtime
        lease = LeaseTerms(
            owner=f"{socket.gethostname()}:{os.getpid()}:{runtime.new_id()[:12]}",
            ttl=self._lease_ttl,
            clock=runtime.clock,
        )
        tape = Tape(
            course,
            state.session_id,
            travel=travel or _travel(course, state),
            redact=self._redactor,
            digests=self._digests,
            lease=lease,
            clock=runtime.clock,
        )
        spec = (
            self._spec
            if limits is None
            else replace(self._spec, usage_limits=check_usage_limits(limits))
        )
        await tape.open()
        try:
            if self._delegates:
                seams = replace(seams, delegate=self._delegator(_store_of(course), seams, limits))
            trace = _journaled_trace(course)
            return RunLoop(
                spec, state, tape, seams, streaming=streaming, quiet=quiet, previous_trace=trace
            )
        except BaseException:
            # The loop never ran: the session is not left leased until the lease expires.
            await tape.release()
            raise

    def observe(self, events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        """``events`` as the swarm's observers see them, outermost last."""
        for observe in self._observers:
            events = observe(events)
        return events

    def _delegator(
        self, store: Journal | None, seams: RunSeams, limits: UsageLimits | None
    ) -> Delegator:
        """How this run's delegation tools run their sub-runs: in the same journal, resumable,
        under the run's own usage limits (their calls count in the parent's)."""

        def delegate(sub: SubRun) -> AsyncGenerator[Event, None]:
            return self._sub_run(sub, store, seams, limits)

        return delegate

    async def _sub_run(
        self, sub: SubRun, store: Journal | None, seams: RunSeams, limits: UsageLimits | None
    ) -> AsyncGenerator[Event, None]:
        """A sub-run's own events (its parent's observers see them, wrapped, in its stream)."""
        journaled = store is not None and await store.next_seq(sub.session_id) != 0
        records = await store.read(sub.session_id) if store is not None and journaled else ()
        course = _sub_course(sub, store, records)
        if course is None:
            return  # not journaled (a parent exported alone): no events to show
        start = Start(prompt=sub.task, context=dict(sub.context), entry=sub.agent)
        state = journaled_state(self._spec, start, sub.session_id, seams, sub.spend)
        loop = await self.loop(
            course, state, seams, limits=limits, streaming=sub.streaming, quiet=sub.quiet
        )
        events = loop.events()
        try:
            async for event in events:
                yield event
        finally:
            await events.aclose()


def _travel(course: Course, state: RunState) -> TimeTravel:
    """How journaled state edits reach ``state``: a new session's course replays nothing, so it
    shares one travel that never applies an edit instead of holding one over its state."""
    if isinstance(course, Fresh | Mirrored):
        return _NOTHING_REPLAYED
    return TimeTravel(apply=state.context.update)


def _no_edit(update: Mapping[str, Any]) -> None:
    """Never called: a new session's course has no records, so no journaled edit to apply."""
    raise AssertionError(f"a new session's course has no journaled edit to apply: {update!r}")


_NOTHING_REPLAYED = TimeTravel(apply=_no_edit)


def _journaled_trace(course: Course) -> str | None:
    """The ``traceparent`` the latest run end a course replays was journaled with, if any."""
    for record in reversed(prefix_of(course)):
        if record.kind == "run_finished":
            trace = record.data.get("trace")
            return trace if isinstance(trace, str) else None
    return None


def _sub_course(
    sub: SubRun, store: Journal | None, records: Sequence[JournalRecord]
) -> Course | None:
    """How a delegated sub-run goes, from what its session already holds."""
    if sub.replay_only:
        return Replay(records=replayable(records), journal=store) if records else None
    if store is None or not records:
        return Fresh(journal=store)
    # The parent crashed after this sub-run began: finish it, never start it twice.
    if session_status(records) in ("finished", "limited"):
        return Replay(records=replayable(records), journal=store)
    return Resume(
        journal=store, prefix=resumable_prefix(replayable(records)), next_seq=len(records)
    )


def _store_of(course: Course) -> Journal | None:
    """The journal a course's delegated sub-runs are kept in."""
    match course:
        case Fresh(journal=journal) | Replay(journal=journal):
            return journal
        case Fork(journal=journal) | Resume(journal=journal):
            return journal
        case Mirrored():
            return None


async def last_result(events: AsyncIterator[Event]) -> RunResult:
    """The result a run's events end with."""
    result: RunResult | None = None
    async for event in events:
        if isinstance(event, RunFinished):
            result = event.result
    assert result is not None
    return result
