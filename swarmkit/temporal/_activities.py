"""The activities: one model call, one function tool call, a journal mirror write, a fingerprint."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from swarmkit.effects import run_again
from swarmkit.exceptions import (
    ConfigurationError,
    EffectOutcomeUnknownError,
    ModelError,
    SwarmkitError,
    ToolArgumentsError,
)
from swarmkit.journal import Journal
from swarmkit.ledger import Ledger, Refused, Reservation
from swarmkit.lowlevel import (
    append_mirrored,
    context_from_data,
    engine_notes,
    outcome_to_data,
    response_to_data,
)
from swarmkit.models import Usage
from swarmkit.temporal._data import (
    LedgerCallInput,
    MirrorInput,
    MirrorReadInput,
    ModelCallInput,
    ToolCallInput,
    json_size,
    record_from_data,
    record_to_data,
    request_from_data,
)
from swarmkit.temporal._registry import Registry
from swarmkit.temporal._rules import RULES_LOG_ACTIVITY, rules_log_answer
from swarmkit.tools import FunctionTool

MODEL_ACTIVITY = "swarmkit.model"
TOOL_ACTIVITY = "swarmkit.tool"
MIRROR_ACTIVITY = "swarmkit.mirror"
RESERVE_ACTIVITY = "swarmkit.ledger.reserve"
SETTLE_ACTIVITY = "swarmkit.ledger.settle"
MIRROR_READ_ACTIVITY = "swarmkit.mirror_read"
MIRROR_CURSOR_ACTIVITY = "swarmkit.mirror_cursor"
FINGERPRINT_ACTIVITY = "swarmkit.fingerprint"

T = TypeVar("T")

_NOT_RETRYABLE_STATUS = frozenset({400, 401, 403, 404, 422})


class SwarmActivities:
    """The activities of one worker, bound to its registry."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    def all(self) -> list[Any]:
        """Every activity, for ``Worker(activities=...)``."""
        return [
            self.call_model,
            self.call_tool,
            self.mirror,
            self.read_mirror,
            self.mirror_cursor,
            self.fingerprint,
            self.reserve,
            self.settle,
            self.rules_log,
        ]

    @activity.defn(name=RULES_LOG_ACTIVITY)
    async def rules_log(self, request: dict[str, Any]) -> dict[str, Any]:
        """Read the worker journal's rules log (its length, or its records) or append to it;
        a refused append is answered as data, so the workflow sees the same on replay."""
        journal = self._journal("the rules log is kept in the worker's journal")
        return await rules_log_answer(journal, request)

    @activity.defn(name=RESERVE_ACTIVITY)
    async def reserve(self, call: LedgerCallInput) -> dict[str, Any]:
        """Reserve a call's estimate in the swarm's ledger (a retry after a lost answer holds
        a second time; the first hold expires after the ledger's ``hold_seconds``)."""
        ledger = self._ledger(call.swarm)
        outcome = await ledger.reserve(
            session_id=call.session_id, facts=call.facts or {}, estimate=Usage(**(call.usage or {}))
        )
        if isinstance(outcome, Refused):
            return {"kind": "refused", "refused": asdict(outcome)}
        return {"kind": "reserved", "reservation": outcome.to_data()}

    @activity.defn(name=SETTLE_ACTIVITY)
    async def settle(self, call: LedgerCallInput) -> dict[str, Any]:
        """Settle a reservation with the real usage; a retried settlement charges nothing more."""
        assert call.reservation is not None
        ledger = self._ledger(call.swarm)
        reservation = Reservation.from_data(call.reservation)
        return {"settled": await ledger.settle(reservation, Usage(**(call.usage or {})))}

    def _ledger(self, swarm: str) -> Ledger:
        ledger = _or_fail(lambda: self._registry.swarm(swarm)).config.ledger
        if ledger is None:
            raise _configuration_failure(
                f"swarm {swarm!r} has no ledger on this worker; give every worker the same swarm"
            )
        return ledger

    @activity.defn(name=MODEL_ACTIVITY)
    async def call_model(self, call: ModelCallInput) -> dict[str, Any]:
        """Answer one model request with the real model registered under its name."""
        model = _or_fail(lambda: self._registry.model(call.model))
        request = request_from_data(call.request)
        try:
            async with _heartbeating():
                response = await model.respond(request)
        except ModelError as exc:
            final = exc.status_code in _NOT_RETRYABLE_STATUS
            raise ApplicationError(str(exc), type="ModelError", non_retryable=final) from exc
        except SwarmkitError as exc:
            raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from exc
        data = response_to_data(response)
        size = json_size(data)
        if size > self._registry.max_payload_bytes:
            raise ApplicationError(
                f"the model's answer for {call.step} is {size} bytes, over the "
                f"{self._registry.max_payload_bytes}-byte payload limit",
                type="PayloadTooLarge",
                non_retryable=True,
            )
        return data

    @activity.defn(name=TOOL_ACTIVITY)
    async def call_tool(self, call: ToolCallInput) -> dict[str, Any]:
        """Run one function tool call; a tool's own failure is an outcome, as in process."""
        function = _or_fail(lambda: self._tool(call))
        context = context_from_data(call.context, payload_types=self._payload_types(call.swarm))
        # A later attempt of an effect follows one that was lost (a killed worker, a
        # timeout) and may have happened: it is reconciled instead of run blindly.
        again = function.effect and activity.info().attempt > 1
        try:
            async with _heartbeating():
                if again:
                    outcome = await run_again(function, call.arguments, context)
                else:
                    outcome = await function.invoke(call.arguments, context)
        except (ToolArgumentsError, EffectOutcomeUnknownError) as exc:
            raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from exc
        return outcome_to_data(outcome)

    @activity.defn(name=MIRROR_ACTIVITY)
    async def mirror(self, batch: MirrorInput) -> None:
        """Write the records the journal does not hold yet, each session under its lease."""
        journal = self._registry.journal
        if journal is None:
            return
        records = [record_from_data(data) for data in batch.records]
        owner = f"temporal:{activity.info().workflow_run_id}"
        # A person's pause says the workflow resumes it (the workflow copies the note back
        # with the people's): a hand-back in another process is refused.
        marked = [*records, *engine_notes(records, engine="temporal")]
        await append_mirrored(journal, marked, owner=owner)

    @activity.defn(name=MIRROR_READ_ACTIVITY)
    async def read_mirror(self, page: MirrorReadInput) -> list[dict[str, Any]]:
        """A page of a session's mirrored records, from ``page.start`` on, before ``page.stop``."""
        journal = self._journal("a continued session's records are in a journal mirror")
        records = [r for r in await journal.read(page.session_id) if page.start <= r.seq]
        found: list[dict[str, Any]] = []
        size = 0
        for record in records:
            data = record_to_data(record)
            weight = json_size(data)
            if record.seq >= page.stop or (found and size + weight > page.max_bytes):
                break
            found.append(data)
            size += weight
        return found

    @activity.defn(name=MIRROR_CURSOR_ACTIVITY)
    async def mirror_cursor(self, session_id: str) -> dict[str, int]:
        """How many records the journal holds of the session and of each delegated sub-run:
        the cursor a run resumed after a cancellation reads them back with."""
        journal = self._journal("a cancelled session resumes from the journal mirror")
        sub_runs = f"{session_id}__swarm_"
        return {
            info.session_id: info.records
            for info in await journal.sessions()
            if info.session_id == session_id or info.session_id.startswith(sub_runs)
        }

    @activity.defn(name=FINGERPRINT_ACTIVITY)
    async def fingerprint(self, swarm: str) -> dict[str, Any]:
        """The configuration fingerprint of the swarm as this worker has it."""
        return _or_fail(lambda: self._registry.swarm(swarm)).fingerprint()

    def _journal(self, why: str) -> Journal:
        """The worker's journal, which ``why`` needs: a failure Temporal does not retry when the
        worker was given none."""
        journal = self._registry.journal
        if journal is None:
            raise _configuration_failure(
                f"{why}, but this worker has none; give every worker the same "
                "SwarmPlugin(journal=...)"
            )
        return journal

    def _tool(self, call: ToolCallInput) -> FunctionTool:
        plans = self._registry.swarm(call.swarm).plans
        plan = plans.get(call.agent)
        function = plan.tools.get(call.tool) if plan is not None else None
        if function is None:
            raise ConfigurationError(
                f"tool {call.tool!r} of agent {call.agent!r} is not registered on this worker's "
                f"swarm {call.swarm!r}; deploy the same swarm code on every worker"
            )
        return function

    def _payload_types(self, swarm: str) -> dict[str, Any]:
        types: dict[str, Any] = {}
        for plan in self._registry.swarm(swarm).plans.values():
            for handoff in plan.handoff_configs.values():
                if handoff.input_type is not None:
                    cls = handoff.input_type
                    types[f"{cls.__module__}:{cls.__qualname__}"] = cls
        return types


@asynccontextmanager
async def _heartbeating() -> AsyncIterator[None]:
    """Heartbeat while the call runs, when the activity has a heartbeat timeout: a live call
    on a live worker is never taken for a lost one, and a dead worker's is noticed soon."""
    timeout = activity.info().heartbeat_timeout
    if not timeout:
        yield
        return

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(timeout.total_seconds() / 3)

    beating = asyncio.create_task(beat())
    try:
        yield
    finally:
        beating.cancel()


def _configuration_failure(message: str) -> ApplicationError:
    """A configuration mistake of this worker, as a failure Temporal does not retry."""
    return ApplicationError(message, type="ConfigurationError", non_retryable=True)


def _or_fail(get: Callable[[], T]) -> T:
    """``get()``, a configuration mistake turned into a failure Temporal does not retry."""
    try:
        return get()
    except SwarmkitError as exc:
        raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from exc
