"""SwarmWorkflow: one session as a durable workflow; the whole loop runs inside it, unchanged."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from dataclasses import asdict, replace
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from swarmkit.context import RunContext
from swarmkit.events import Event, EventObserver, ModelCallFinished, RunFinished, RunStarted
from swarmkit.exceptions import (
    ConfigurationChangedError,
    ConfigurationError,
    EffectOutcomeUnknownError,
    ModelError,
    SwarmkitError,
    ToolExecutionError,
)
from swarmkit.interrupts import Decision, PendingDecision
from swarmkit.journal import InMemoryJournal, JournalRecord, session_status
from swarmkit.lowlevel import (
    Runtime,
    ToolOutcome,
    context_to_data,
    decision_from_data,
    event_to_data,
    outcome_from_data,
    person_pending,
    response_from_data,
)
from swarmkit.models import UNKNOWN_PROVIDER, Model, ModelRequest, ModelResponse, provider_of
from swarmkit.people import PeopleQueue
from swarmkit.result import RunResult
from swarmkit.swarm import Swarm
from swarmkit.temporal._activities import (
    FINGERPRINT_ACTIVITY,
    MIRROR_CURSOR_ACTIVITY,
    MODEL_ACTIVITY,
    TOOL_ACTIVITY,
)
from swarmkit.temporal._data import (
    ModelCallInput,
    SessionInput,
    ToolCallInput,
    json_size,
    record_from_data,
    record_to_data,
    request_to_data,
)
from swarmkit.temporal._ledger import ActivityLedger
from swarmkit.temporal._mirror import WorkflowMirror
from swarmkit.temporal._options import ActivityOptions, execute
from swarmkit.temporal._registry import Registry, active, model_name
from swarmkit.temporal._rules import SessionJournal
from swarmkit.tools import FunctionTool

WORKFLOW_NAME = "SwarmWorkflow"
DECIDE_UPDATE = "decide"
PENDING_QUERY = "pending"
EVENTS_QUERY = "events"

_FINGERPRINT_TIMEOUT = timedelta(seconds=30)


class _ContinueAsNew(BaseException):
    """Raised at a step boundary when the run has taken its share of steps."""


# Not sandboxed: the sandbox would re-check every workflow task (about a millisecond of CPU per
# step) yet guard nothing here. The loop is deterministic by construction (ids, clock, sleep and
# randomness come from the workflow), and the swarms' own code is imported by the registry
# outside any sandbox, so its globals are the real modules whatever the runner.
@workflow.defn(name=WORKFLOW_NAME, sandboxed=False)
class SwarmWorkflow:
    """A swarm session: the workflow id is the session id; model and tool calls are activities."""

    def __init__(self) -> None:
        self._events: list[Event] = []  # converted to data only when a query asks
        self._pending: PendingDecision | None = None
        self._decision: Decision | None = None
        self._swarm: Swarm | None = None
        self._registry: Registry | None = None
        self._steps = 0
        self._regenerated = 0
        self._continued = False
        self._mirror: WorkflowMirror | None = None
        # The run's journal lives in the workflow (its history makes it durable); the mirror
        # activity copies it to the worker's Journal at each pause, continue-as-new and end.
        self._journal = InMemoryJournal()

    @workflow.run
    async def run(self, session: SessionInput) -> dict[str, Any]:
        """Run the session to its end and return its RunResult as data."""
        registry = active(workflow.info().task_queue)
        swarm = _fail_on_mistake(lambda: durable_swarm(registry, session.swarm, self._observe))
        self._registry, self._swarm = registry, swarm
        fingerprint = await self._checked_fingerprint(session, swarm)
        await self._take_records(session)
        try:
            result = await self._drive(session, swarm)
        except _ContinueAsNew:
            result = None
        except asyncio.CancelledError:
            # The loop journaled the run's end as cancelled, as Ctrl-C does in process; the
            # mirror keeps it, so resume_session starts a new run that goes on from there.
            await self._mirror_now()
            raise
        except SwarmkitError as exc:
            # A limit under the "error" policy, or a broken tool: the session fails for good,
            # rather than failing the workflow task, which Temporal would retry forever.
            raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from exc
        await self._mirror_now()
        if result is None:
            workflow.continue_as_new(await self._next_input(session, fingerprint))
        return result.to_data()

    async def _take_records(self, session: SessionInput) -> None:
        """Put a continued or resumed session's records back into the run's journal."""
        self._continued = bool(session.records or session.mirrored or session.resumed)
        cursor = session.mirrored
        if session.resumed:
            cursor = await execute(
                MIRROR_CURSOR_ACTIVITY,
                workflow.info().workflow_id,
                self.registry.tool_options,
                result_type=dict,
            )
        self._mirror = WorkflowMirror(self.registry, cursor)
        carried = [record_from_data(data) for data in session.records]
        await _restore(self._journal, carried or await self._mirror.read())
        if session.resumed:
            _check_resumable(await self._journal.read(workflow.info().workflow_id))

    @workflow.update(name=DECIDE_UPDATE)
    async def decide(self, decision: dict[str, Any]) -> None:
        """Deliver a human decision (approve, reject or edit) to the paused run."""
        self._decision = decision_from_data(decision)

    @decide.validator
    def check_decision(self, decision: dict[str, Any]) -> None:
        """Refuse a decision nobody waits for, of an unknown kind, or an edit that is invalid."""
        pending = self._pending
        if pending is None:
            raise ValueError("the session is not waiting for a decision")
        kind = decision.get("kind")
        if kind not in ("approve", "reject", "edit"):
            raise ValueError(f"a decision's kind is approve, reject or edit, not {kind!r}")
        assert self._swarm is not None
        problems = self._swarm.check_decision(pending, decision_from_data(decision))
        if problems:
            fields = "; ".join(
                f"{p.field}: {p.message}" if p.field else p.message for p in problems
            )
            raise ValueError(f"the edit does not validate: {fields}; send a corrected edit")

    @workflow.query(name=PENDING_QUERY)
    def pending(self) -> dict[str, Any] | None:
        """The decision the run waits for, or None."""
        return asdict(self._pending) if self._pending is not None else None

    @workflow.query(name=EVENTS_QUERY)
    def events(self, since: int = 0) -> list[dict[str, Any]]:
        """The session's events from index ``since`` on, as data (follow a run by polling).

        The indexes are the session's, across continue-as-new: a continued run replays the
        steps before it, which regenerates their events at the same indexes, so a caller that
        asks the workflow id (no run id) for ``since`` gets each event once, in order.
        """
        return [event_to_data(event) for event in self._events[since:]]

    # -- the run ---------------------------------------------------------------------------

    async def _drive(self, session: SessionInput, swarm: Swarm) -> RunResult:
        session_id = workflow.info().workflow_id
        swarm = swarm.with_seams(
            runtime=workflow_runtime(),
            tool_runner=ActivityToolRunner(self, session.swarm),
            decisions=WorkflowDecisions(self),
        )
        # With a worker journal, its rules log (demotions, audits) is read through an activity.
        journal = self._journal
        if self.registry.journal is not None:
            journal = SessionJournal(self._journal, ActivityOptions())  # type: ignore[assignment]
        parked = person_pending(await self._journal.read(session_id)) if self._continued else None
        result = None if parked is not None else await self._first_run(session, swarm, journal)
        # A run parked for a person has ended, as in process: the mirror shows it waiting, so
        # a queue lists it and people add their notes there; the hand-back resumes it here.
        while result is None or (parked := _for_a_person(result)) is not None:
            decision = await self._handed_back(parked)
            result = await swarm.resume(session_id, journal, decision=decision)
        return result

    async def _first_run(self, session: SessionInput, swarm: Swarm, journal: Any) -> RunResult:
        session_id = workflow.info().workflow_id
        if self._continued:
            return await swarm.resume(session_id, journal)
        result: RunResult | None = None
        stream = swarm.stream(
            session.prompt,
            context=session.context,
            session_id=session_id,
            journal=journal,
        )
        async for event in stream:
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        return result

    async def _handed_back(self, parked: PendingDecision | None) -> Decision:
        """Wait at a person's pause for the hand-back; take the people's notes from the mirror
        first, so this journal numbers its records as the mirror does."""
        assert parked is not None
        if self._events and isinstance(self._events[-1], RunFinished):
            self._events.pop()  # the session goes on: a follower sees one run, as before
        self._regenerated = len(self._events)
        decision = await self.wait_for_decision(parked)
        assert self._mirror is not None
        if self.registry.journal is not None:
            await _restore(self._journal, await self._mirror.notes(workflow.info().workflow_id))
        return decision

    async def _checked_fingerprint(self, session: SessionInput, swarm: Swarm) -> dict[str, Any]:
        recorded = session.fingerprint
        if recorded is None:
            # A local activity's answer is kept in the history: a replay sees the original.
            recorded = await workflow.execute_local_activity(
                FINGERPRINT_ACTIVITY,
                session.swarm,
                result_type=dict,
                start_to_close_timeout=_FINGERPRINT_TIMEOUT,
            )
        current = swarm.fingerprint()
        if recorded != current:
            changed = sorted(k for k in current if current.get(k) != recorded.get(k))
            raise ConfigurationChangedError(
                f"session {workflow.info().workflow_id!r} was started with another configuration "
                f"of swarm {session.swarm!r} (changed: {', '.join(changed)}); this worker "
                "refuses it. Keep the old code on a worker (worker versioning) until its "
                "sessions end, or guard the change with workflow.patched()",
                session_id=workflow.info().workflow_id,
                changed=changed,
            )
        return current

    async def _observe(self, events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        """Keep the session's own events for the events query (a delegated sub-run's pass by)."""
        own: bool | None = None
        async for event in events:
            if own is None:
                own = isinstance(event, RunStarted) and (
                    event.session_id == workflow.info().workflow_id
                )
            if own and self._regenerated:
                self._regenerated -= 1  # a hand-back's resume replays the events kept already
            elif own:
                self._events.append(self._as_news(event))
            yield event

    def _as_news(self, event: Event) -> Event:
        if self._continued and isinstance(event, RunStarted):
            # The session started once; a continued run's replay of it is no news to a caller.
            return replace(event, replay=False)
        if self._continued and isinstance(event, ModelCallFinished) and event.replayed:
            return replace(event, replayed=False)
        return event

    async def _next_input(self, session: SessionInput, fingerprint: dict[str, Any]) -> SessionInput:
        """The continued run's input: a cursor into the mirror, else the records by value."""
        base = replace(session, fingerprint=fingerprint, runs=session.runs + 1, resumed=False)
        if self.registry.journal is not None:
            assert self._mirror is not None
            return replace(base, records=[], mirrored=dict(self._mirror.cursor))
        carried = [record_to_data(r) for r in await self._all_records()]
        size = json_size(carried)
        limit = self.registry.max_payload_bytes
        if size > limit:
            raise ApplicationError(
                f"session {workflow.info().workflow_id!r} cannot continue as new: with no "
                f"journal mirror its records travel in the workflow input, and they are {size} "
                f"bytes, over the {limit}-byte payload limit; configure a mirror "
                "(SwarmPlugin(journal=...)) so a continued run reads them back by reference, "
                "or lower steps_per_run and shorten what agents see (input filters)",
                type="PayloadTooLarge",
                non_retryable=True,
            )
        return replace(base, records=carried)

    def count_step(self) -> None:
        """Count a model or tool step; at the run's share, continue as new before it starts."""
        assert self._registry is not None
        if self._steps >= self._registry.steps_per_run:
            raise _ContinueAsNew
        self._steps += 1

    @property
    def registry(self) -> Registry:
        """The registry of the worker running this workflow."""
        assert self._registry is not None
        return self._registry

    async def wait_for_decision(self, pending: PendingDecision) -> Decision:
        """Mirror the journal so far, then pause in place until the decide update delivers.

        The pause is shown (the ``pending`` query, the update's validator) only once the
        mirror holds it, so whoever sees the session waiting finds the pause in the journal."""
        self._decision = None
        await self._mirror_now()
        self._pending = pending
        await workflow.wait_condition(lambda: self._decision is not None)
        decision = self._decision
        self._pending = self._decision = None
        assert decision is not None
        return decision

    async def _mirror_now(self) -> None:
        """Copy the records the mirror does not hold yet (none without a mirror)."""
        assert self._mirror is not None
        if self.registry.journal is not None:
            await self._mirror.write(await self._all_records())

    async def _all_records(self) -> list[JournalRecord]:
        """Every record so far: the session's and its delegated sub-runs', by session id."""
        records: list[JournalRecord] = []
        for info in sorted(await self._journal.sessions(), key=lambda i: i.session_id):
            records.extend(await self._journal.read(info.session_id))
        return records


# -- the seams as the workflow fills them ----------------------------------------------------


def workflow_runtime() -> Runtime:
    """Ids, clock, sleep and randomness from the workflow, so a replay sees the same values."""
    return Runtime(
        new_id=lambda: workflow.uuid4().hex,
        clock=_workflow_clock,
        sleep=asyncio.sleep,  # inside a workflow, a durable timer
        random=lambda: workflow.random().random(),
    )


def _workflow_clock() -> float:
    # A run torn down with its worker is closed outside the workflow's loop; it still releases
    # its in-workflow journal's lease then, and nothing it does at that point reaches history.
    return workflow.time() if workflow.in_workflow() else 0.0


class ActivityModel:
    """The workflow's stand-in for a model: each call runs the real model in an activity."""

    def __init__(self, name: str, provider: str = UNKNOWN_PROVIDER) -> None:
        self.name = name
        self.provider = provider
        """The registered model's provider, so traces and events name who answers."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Run the model call as one activity (retried by Temporal only)."""
        run = _current()
        step = f"the model call of agent {request.agent!r}"
        data = request_to_data(request)
        size = json_size(data)
        limit = run.registry.max_payload_bytes
        if size > limit:
            raise ModelError(
                f"{step} is {size} bytes, over Temporal's {limit}-byte payload limit; "
                "shorten what the agent sees (an input filter, pass_full_history=False)",
                model=self.name,
                attempts=0,
            )
        run.count_step()
        call = ModelCallInput(model=self.name, request=data, step=step)
        try:
            answer = await execute(MODEL_ACTIVITY, call, run.registry.model_options)
        except ActivityError as exc:
            _cancelled(exc)
            cause = exc.cause or exc
            raise ModelError(f"{step} failed: {cause}", model=self.name, attempts=0) from exc
        return response_from_data(answer)


class ActivityToolRunner:
    """Runs each durable function tool as an activity; ``durable=False`` tools run in place."""

    def __init__(self, run: SwarmWorkflow, swarm: str) -> None:
        self._run = run
        self._swarm = swarm

    async def invoke(self, tool: FunctionTool, arguments: str, context: RunContext) -> ToolOutcome:
        """The tool's outcome, from an activity unless the tool is pure."""
        if not tool.durable:
            return await tool.invoke(arguments, context)
        self._run.count_step()
        call = ToolCallInput(
            swarm=self._swarm,
            agent=context.agent,
            tool=tool.name,
            arguments=arguments,
            context=context_to_data(context),
        )
        try:
            data = await execute(TOOL_ACTIVITY, call, self._run.registry.tool_options)
        except ActivityError as exc:
            _cancelled(exc)
            return _failed_tool(tool, exc)
        return outcome_from_data(data)


class WorkflowDecisions:
    """A decision source that waits inside the workflow for the ``decide`` update."""

    def __init__(self, run: SwarmWorkflow) -> None:
        self._run = run

    async def decide(self, pending: PendingDecision) -> Decision | None:
        """Wait, durably, until a human decides; a person's pause (a queue of people) ends the
        run instead, as in process, and the workflow waits for the hand-back after it."""
        if pending.kind == "person":
            return None
        return await self._run.wait_for_decision(pending)


def durable_swarm(registry: Registry, name: str, observe: EventObserver | None = None) -> Swarm:
    """The registered swarm with each agent's model replaced by an activity stand-in (and
    ``observe`` after the swarm's own observers)."""
    swarm = registry.swarm(name)
    models: dict[str, Model] = {}
    for agent, plan in swarm.plans.items():
        if isinstance(plan.agent, PeopleQueue):
            continue  # a person takes its turn: no model is ever called there
        model = model_name(plan.model)
        if model is None or model not in registry.models:
            known = ", ".join(sorted(registry.models)) or "none"
            raise ConfigurationError(
                f"agent {agent!r} of swarm {name!r} uses model {model!r}, which is not "
                f"registered on this worker (registered: {known}); add it to "
                "SwarmPlugin(models={...})"
            )
        models[agent] = ActivityModel(model, provider_of(registry.models[model]))
    # The same configuration and fingerprint; only the models differ, and the models are not
    # part of what a session's history depends on (their answers are in it).
    durable = swarm.with_models(models)
    if swarm.config.ledger is not None:
        durable = durable.with_ledger(ActivityLedger(swarm.config.ledger, name))
    return durable if observe is None else durable.with_observers(observe)


async def _restore(journal: InMemoryJournal, carried: Sequence[JournalRecord]) -> None:
    """Put a continued session's records (its own and its sub-runs') back into the journal."""
    sessions: dict[str, list[JournalRecord]] = {}
    for record in carried:
        sessions.setdefault(record.session_id, []).append(record)
    for records in sessions.values():
        await journal.append(records)


def _check_resumable(records: Sequence[JournalRecord]) -> None:
    """A resumed session's mirror must hold its last run's end (cancelled, or waiting): the
    steps after a later mirror write would be made again."""
    if records and session_status(records) in ("cancelled", "waiting"):
        return
    shown = session_status(records) if records else "no records"
    raise ApplicationError(
        f"session {workflow.info().workflow_id!r} cannot resume from the journal mirror: it "
        f"shows {shown}, not a cancelled or waiting run's end, so its last steps may be "
        "missing there; resume_session goes on only after a cancellation",
        type="JournalError",
        non_retryable=True,
    )


def _for_a_person(result: RunResult) -> PendingDecision | None:
    pending = result.pending
    return pending if pending is not None and pending.kind == "person" else None


def _cancelled(exc: ActivityError) -> None:
    """A call cut short by the workflow's cancellation stops the run as Ctrl-C does in process
    (its end journaled as cancelled), not as the call's failure."""
    if isinstance(exc.cause, CancelledError):
        raise asyncio.CancelledError from exc


def _failed_tool(tool: FunctionTool, exc: ActivityError) -> ToolOutcome:
    cause = exc.cause
    if isinstance(cause, ApplicationError) and cause.type == "ConfigurationError":
        raise ConfigurationError(cause.message) from exc
    if isinstance(cause, ApplicationError) and cause.type == "EffectOutcomeUnknownError":
        raise EffectOutcomeUnknownError(cause.message, tool_name=tool.name) from exc
    error = ToolExecutionError(
        f"Error: the tool failed on every attempt: {cause}", tool_name=tool.name
    )
    if tool.raise_errors:
        raise error from exc
    return ToolOutcome(content=str(error), is_error=True, error=error)


def _current() -> SwarmWorkflow:
    if not workflow.in_workflow():
        raise ConfigurationError(
            "an activity stand-in was called outside a Temporal workflow: it runs only inside "
            "SwarmWorkflow; run the registered swarm itself for an in-process run"
        )
    run = workflow.instance()
    assert isinstance(run, SwarmWorkflow)
    return run


def _fail_on_mistake(build: Any) -> Swarm:
    try:
        swarm: Swarm = build()
    except SwarmkitError as exc:
        raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from exc
    return swarm
