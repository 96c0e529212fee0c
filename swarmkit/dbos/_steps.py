"""The seams a DBOS session fills: models and tools as recorded steps, ids and time from them."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from dbos import DBOS, StepOptions

from swarmkit.context import RunContext
from swarmkit.effects import run_again
from swarmkit.exceptions import (
    ConfigurationError,
    DurableStepError,
    EffectOutcomeUnknownError,
    JournalError,
    ModelError,
    ToolArgumentsError,
    ToolExecutionError,
)
from swarmkit.journal import InMemoryJournal, Journal, JournalRecord
from swarmkit.lowlevel import (
    Runtime,
    ToolOutcome,
    append_mirrored,
    engine_notes,
    outcome_from_data,
    outcome_to_data,
    people_notes,
    response_from_data,
    response_to_data,
)
from swarmkit.models import Model, ModelRequest, ModelResponse, provider_of
from swarmkit.tools import FunctionTool

MODEL_STEP = "swarmkit.model"
TOOL_STEP = "swarmkit.tool"
INTENT_STEP = "swarmkit.effect_intent"
START_STEP = "swarmkit.start"
MIRROR_STEP = "swarmkit.mirror"
NOTES_STEP = "swarmkit.people_notes"


_ID_NAMESPACE = uuid.UUID("5b0b7f36-52a4-4b8e-9f0c-6f1d9a1c2d30")


@dataclass(kw_only=True)
class SessionState:
    """One execution of a session's workflow: its clock, its ids, its in-workflow journal.

    Each recovery executes the workflow again from the top with a fresh state; the recorded
    steps give it the same answers, so it draws the same ids and reads the same times.
    """

    session_id: str
    """The workflow id, which is the session id."""
    now: float
    """The time of the latest recorded step (the session's clock)."""
    mirror: Journal | None
    """The journal the session's records are copied to, if any."""
    journal: InMemoryJournal = field(default_factory=InMemoryJournal)
    """The run's records, rebuilt on each execution, copied to ``mirror`` at pauses and end."""
    _ids: int = 0

    def new_id(self) -> str:
        """The next id of this session: the same sequence on every execution."""
        self._ids += 1
        return uuid.uuid5(_ID_NAMESPACE, f"{self.session_id}:{self._ids}").hex

    def runtime(self) -> Runtime:
        """Ids, clock, sleep and randomness a re-execution draws again identically."""
        seeded = random.Random(self.session_id)
        return Runtime(
            new_id=self.new_id,
            clock=lambda: self.now,
            sleep=DBOS.sleep_async,
            random=seeded.random,
            sleep_until=self.wait_until,
        )

    async def wait_until(self, when: float) -> None:
        """Wait out the deadline of a call in flight in real seconds: the session's clock
        stands still during a step, and a durable sleep would be a step of its own beside it
        (recorded or not as the race went, so a re-execution would differ)."""
        await asyncio.sleep(max(when - self.now, 0.0))

    def advance(self, at: float) -> None:
        """Move the clock to a recorded step's time."""
        self.now = max(self.now, at)

    async def write_mirror(self) -> None:
        """Copy the records the mirror lacks, as one recorded step (not repeated on recovery)."""
        if self.mirror is None:
            return
        records = await _all_records(self.journal)
        owner = f"dbos:{self.session_id}"
        await DBOS.run_step_async(step_options(MIRROR_STEP), _mirror, self.mirror, records, owner)

    async def take_notes(self) -> None:
        """Copy the people's notes (claims, replies) the mirror holds past this journal's
        records, read in one recorded step, so both number the session's records alike."""
        if self.mirror is None:
            return
        start = await self.journal.next_seq(self.session_id)
        notes = await DBOS.run_step_async(
            step_options(NOTES_STEP), _notes, self.mirror, self.session_id, start
        )
        await self.journal.append(
            [
                JournalRecord(
                    session_id=self.session_id,
                    seq=n["seq"],
                    kind=n["kind"],
                    data=n["data"],
                    at=n["at"],
                )
                for n in notes
            ]
        )


async def _notes(journal: Journal, session_id: str, start: int) -> list[dict[str, Any]]:
    """The notes step: the session's records from ``start`` on, which must all be people's."""
    found = [r for r in await journal.read(session_id) if r.seq >= start]
    notes = people_notes(found)
    if len(notes) != len(found):
        raise JournalError(
            f"the journal holds records of session {session_id!r} that its DBOS workflow did "
            "not write, besides people's notes; a session on DBOS goes on only in its "
            "workflow (send the hand-back with SessionHandle.decide)"
        )
    return [{"seq": r.seq, "kind": r.kind, "data": dict(r.data), "at": r.at} for r in notes]


async def _mirror(journal: Journal, records: list[JournalRecord], owner: str) -> None:
    """The mirror step: the lease's owner is the session's own name, so a write a crash cut
    short is taken up again by the session's recovery without waiting for the lease. A
    person's pause says the workflow resumes it (the notes step copies the note back), so a
    hand-back in another process is refused."""
    marked = [*records, *engine_notes(records, engine="dbos")]
    await append_mirrored(journal, marked, owner=owner)


_CURRENT: ContextVar[SessionState | None] = ContextVar("swarmkit_dbos_session", default=None)


def current_session() -> SessionState | None:
    """The session whose workflow runs in this task, or None outside any."""
    return _CURRENT.get()


def enter_session(state: SessionState) -> Any:
    """Make ``state`` the current session of this task; returns the token to leave it."""
    return _CURRENT.set(state)


def leave_session(token: Any) -> None:
    """Undo ``enter_session``."""
    _CURRENT.reset(token)


class StepModel:
    """A model whose every call, inside a DBOS session, is one recorded step.

    Outside a session it is the model it wraps. A recovered session gets each finished call's
    answer back from the system database: the wrapped model is not asked again.
    """

    def __init__(self, model: Model) -> None:
        self.model = model
        self.name = getattr(model, "name", None) or type(model).__name__
        self.provider = provider_of(model)
        """The wrapped model's provider, so traces and events name who answers."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """The model's answer, recorded as a step (or replayed from one)."""
        state = current_session()
        if state is None:
            return await self.model.respond(request)
        # Preemptible: a cancelled session's model call in flight is stopped (within DBOS's
        # poll interval) and not recorded, so its resume makes it again.
        options = step_options(MODEL_STEP)
        options["preemptible"] = True
        try:
            data = await DBOS.run_step_async(options, self._call, request)
        except DurableStepError as exc:  # a failure recorded before a crash, read back
            raise ModelError(str(exc), model=self.name, attempts=0) from exc
        state.advance(data["at"])
        return response_from_data(data["response"], agent=request.agent)

    async def _call(self, request: ModelRequest) -> dict[str, Any]:
        response = await self.model.respond(request)
        return {"at": time.time(), "response": response_to_data(response)}


class StepToolRunner:
    """Runs each durable function tool call as one recorded step; ``durable=False`` in place."""

    def __init__(self, state: SessionState) -> None:
        self._state = state

    async def invoke(self, tool: FunctionTool, arguments: str, context: RunContext) -> ToolOutcome:
        """The tool's outcome, recorded as a step (or replayed from one)."""
        if not tool.durable:
            return await tool.invoke(arguments, context)
        call = _call_tool
        if tool.effect:
            # The intent is a recorded step of its own. When this execution replays it from
            # the record instead of running it, an earlier one got this far: if the effect's
            # step then still runs, its earlier attempt was lost and may have happened.
            wrote: list[bool] = []
            await DBOS.run_step_async(step_options(INTENT_STEP), _write_intent, wrote)
            call = _call_tool if wrote else _call_again
        try:
            data = await DBOS.run_step_async(
                step_options(TOOL_STEP), call, tool, arguments, context
            )
        except DurableStepError as exc:
            raise _tool_error(exc, tool) from exc
        self._state.advance(data["at"])
        if "unknown" in data:
            raise EffectOutcomeUnknownError(str(data["unknown"]), tool_name=tool.name)
        return outcome_from_data(data["outcome"])


async def _write_intent(wrote: list[bool]) -> dict[str, Any]:
    wrote.append(True)
    return {"at": time.time()}


async def _call_tool(tool: FunctionTool, arguments: str, context: RunContext) -> dict[str, Any]:
    outcome = await tool.invoke(arguments, context)
    return {"at": time.time(), "outcome": outcome_to_data(outcome)}


async def _call_again(tool: FunctionTool, arguments: str, context: RunContext) -> dict[str, Any]:
    """An effect whose earlier attempt was lost: reconciled, or its outcome is unknown."""
    try:
        outcome = await run_again(tool, arguments, context)
    except EffectOutcomeUnknownError as exc:
        return {"at": time.time(), "unknown": str(exc)}
    return {"at": time.time(), "outcome": outcome_to_data(outcome)}


def _tool_error(exc: DurableStepError, tool: FunctionTool) -> Exception:
    if exc.kind == "ToolArgumentsError":
        return ToolArgumentsError(str(exc), tool_name=tool.name)
    if exc.kind == "ConfigurationError":
        return ConfigurationError(str(exc))
    return ToolExecutionError(str(exc), tool_name=tool.name)


async def start_facts(fingerprint: Mapping[str, Any], publish: bool) -> dict[str, Any]:
    """What a session records once, at its start: the time, the swarm's fingerprint, and
    whether it publishes its events."""
    return {"at": time.time(), "fingerprint": dict(fingerprint), "publish": publish}


async def _all_records(journal: InMemoryJournal) -> list[JournalRecord]:
    records: list[JournalRecord] = []
    for info in sorted(await journal.sessions(), key=lambda i: i.session_id):
        records.extend(await journal.read(info.session_id))
    return records


def step_options(name: str) -> StepOptions:
    """The options of one recorded step named ``name``."""
    # One retry layer per call path: the model adapter's own; DBOS records the final outcome.
    return {"name": name, "retries_allowed": False}
