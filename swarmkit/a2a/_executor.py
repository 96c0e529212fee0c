"""SwarmExecutor: an A2A task runs one turn of a swarm conversation; its states follow the run.

The A2A context id names a swarmkit conversation (session ``a2a-<context id>``): the first
task of a context is its first turn, each later task continues it. The message's id and
metadata reach the run as its context's ``a2a`` entry (journaled, seen by rules and tools;
secret-looking keys left out). A run that pauses for a human puts its task in
``input-required`` with the pause's interrupt id; the next message on that task carries the
decision (a data part ``{"decision": "approve" | "reject" | "edit", ...}``) and names the
interrupt id, and resumes the session when its principal may decide (journaled as
``decided_by="a2a:<principal>"``). A conversation handed to a queue of people waits the
same way; there the principal acts as the person (``a2a:<principal>``): its text is a reply,
and a data part ``{"hand_back": "<agent>"}`` or ``{"close": true}`` ends the wait (see
``_people``). A message for a task that waits for no input, or for
another pause, is refused and changes nothing. A task's metadata names its session
(``session_id``). A client that streams gets a working update as each agent starts or hands
off, and the answer's text as artifact chunks while the model writes it; a client that does
not stream would read none of them, so none are built and its run is not followed event by
event.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from a2a.helpers import get_data_parts, get_text_parts, new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message, Part, Task, TaskState, TaskStatus
from a2a.utils.errors import A2AError
from google.protobuf.json_format import MessageToDict
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from swarmkit.a2a._people import PERSON_SHAPES, act_as_person, waits_for_person
from swarmkit.a2a._principals import INTERRUPT_ID, check_waiting, principal_of, waiting_data
from swarmkit.events import (
    AgentStarted,
    Event,
    HandoffPerformed,
    ModelAttemptDiscarded,
    ModelCallFinished,
    RunFinished,
    TextDelta,
)
from swarmkit.exceptions import ConfigurationError, InteropRequestError, SwarmkitError
from swarmkit.interrupts import Decision, approve, edit, reject
from swarmkit.journal import Journal
from swarmkit.redaction import Redactor
from swarmkit.result import RunResult
from swarmkit.serving import DECISION_SHAPES, conversation_session, decision_from_request
from swarmkit.swarm import Swarm

SESSION_PREFIX = "a2a-"
"""What a served conversation's session id starts with, before the A2A context id."""

SESSION_KEY = "session_id"
"""The key of a task's metadata that names the swarmkit session its conversation runs in."""

MAX_CONTEXT_ID = 128
"""The longest A2A context id taken as a conversation name."""

CONTEXT_KEY = "a2a"
"""The run context's entry for the A2A message that started the turn: ``message_id``,
``metadata`` (the message's, without the values of secret-looking keys), ``task_id``,
``context_id``, and ``withheld`` (the dotted paths of the metadata keys left out, if any)."""

REPLIED = f"the person's reply is journaled; the conversation waits for more: {PERSON_SHAPES}"
"""What a task parked for a person says after a message that only replied."""

OUTPUT_ARTIFACT = "output"
"""The id and name of the artifact that holds a task's answer."""

STREAMING_METHODS = frozenset({"SendStreamingMessage", "message/stream"})
"""The JSON-RPC methods (current and A2A 0.3) whose caller reads the task as a stream."""


class SwarmExecutor(AgentExecutor):
    """Runs a Swarm for the a2a-sdk's request handler, journaling every turn in ``journal``."""

    def __init__(self, swarm: Swarm, journal: Journal) -> None:
        if not isinstance(journal, Journal):
            raise ConfigurationError("SwarmExecutor needs a Journal: A2A turns are journaled")
        self.swarm = swarm
        self.journal = journal
        self._cancelled: set[str] = set()
        self._redact = Redactor.of(swarm.config.redact_keys)
        self._context_room = _has_room(swarm.config.context_type)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Start a turn, or resume the paused one this message decides."""
        task_id, context_id = str(context.task_id), str(context.context_id)
        current = context.current_task
        if current is not None:
            # A message on a task may leave out its context id: the task's own is the one.
            context_id = current.context_id or context_id
        updater = TaskUpdater(event_queue, task_id, context_id)
        if current is not None:
            await self._decide_if_allowed(current, context, updater)
            return
        conversation = await _submit(context, updater, event_queue)
        if conversation is None:
            return
        try:
            await updater.start_work()
            await self._turn(context, conversation, _Answer(updater, streams=_streams(context)))
        except (SwarmkitError, ValueError) as exc:
            await updater.failed(_message(updater, str(exc)))

    async def _turn(self, context: RequestContext, conversation: str, answer: _Answer) -> None:
        """Run the turn: event by event for a client that streams; whole for one that does
        not, which reads only how it ends. A cancelled turn publishes nothing more."""
        task_id, text = answer.updater.task_id, context.get_user_input()
        turn: dict[str, Any] = {
            "context": self._run_context(context),
            "session_id": conversation,
            "journal": self.journal,
            "continue_session": True,
        }
        try:
            if answer.streams:
                await self._follow(self.swarm.stream(text, **turn), answer)
                return
            result = await self.swarm.run(text, **turn)
            if task_id not in self._cancelled:
                await _finish(result, answer)
        finally:
            self._cancelled.discard(task_id)

    def _run_context(self, context: RequestContext) -> dict[str, Any]:
        """The message as the run's context sees it, under ``a2a``; nothing when the swarm's
        ``context_type`` has no room for it."""
        if not self._context_room:
            return {}
        message = context.message
        given = (
            MessageToDict(message.metadata)
            if message is not None and message.HasField("metadata")
            else {}
        )
        metadata, withheld = _without_secrets(given, self._redact)
        entry = {
            "message_id": message.message_id if message is not None else "",
            "metadata": metadata,
            "task_id": str(context.task_id),
            "context_id": str(context.context_id),
        }
        if withheld:
            entry["withheld"] = withheld
        return {CONTEXT_KEY: entry}

    async def _decide_if_allowed(
        self, task: Task, context: RequestContext, updater: TaskUpdater
    ) -> None:
        """Decide the waiting task; a message queued behind another that already decided it
        (or by a caller who may not decide) is refused and changes nothing."""
        try:
            check_waiting(task, context.call_context, context.message)
        except A2AError as refused:
            if task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
                raise  # the task is over or running: the error reaches this caller only
            await updater.requires_input(
                _message(updater, refused.message, data=waiting_data(task))
            )
            return
        principal = principal_of(context.call_context)
        decided_by = f"a2a:{principal.name}" if principal else None
        await self._decide(task, context.message, updater, decided_by=decided_by)

    async def _decide(
        self, task: Task, message: Message | None, updater: TaskUpdater, *, decided_by: str | None
    ) -> None:
        """Resume the paused session with the message's decision; a decision that cannot be
        taken (no decision, an edit that does not validate) leaves the task waiting."""
        waiting = waiting_data(task)
        try:
            result = await self._resumed(waiting, message, decided_by=decided_by)
        except (SwarmkitError, ValueError) as exc:
            text = f"the decision was not taken: {exc}"
            await updater.requires_input(_message(updater, text, data=waiting))
            return
        if result is None:
            await updater.requires_input(_message(updater, REPLIED, data=waiting))
            return
        await updater.start_work()
        await _finish(result, _Answer(updater, streams=False))

    async def _resumed(
        self, waiting: Mapping[str, Any], message: Message | None, *, decided_by: str | None
    ) -> RunResult | None:
        """The resumed run, or None when a person's message only replied (it still waits)."""
        if waits_for_person(waiting):
            assert decided_by is not None  # only a principal who decides gets here
            return await act_as_person(self.swarm, self.journal, waiting, message, by=decided_by)
        asks = isinstance(pending := waiting.get("pending"), dict) and (
            pending.get("kind") == "question"
        )
        decision = dataclasses.replace(decision_of(message, question=asks), by=decided_by)
        session_id = str(waiting.get("session_id") or "")
        return await self.swarm.resume(session_id, self.journal, decision=decision)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Stop the running turn (the journal keeps its finished steps) and say so."""
        task_id = str(context.task_id)
        self._cancelled.add(task_id)
        updater = TaskUpdater(event_queue, task_id, str(context.context_id))
        await updater.cancel(_message(updater, "cancelled by the caller"))

    async def _follow(self, events: AsyncGenerator[Event, None], answer: _Answer) -> None:
        async for event in events:
            if answer.updater.task_id in self._cancelled:
                return
            await _publish(event, answer)


class _Answer:
    """A task's answer artifact: chunks of the model's text while a streaming client reads
    it (the first of a model call replaces what came before), then the whole answer."""

    def __init__(self, updater: TaskUpdater, *, streams: bool) -> None:
        self.updater = updater
        self.streams = streams
        self.fresh = True
        """Whether the next chunk starts the artifact over (a new model call or attempt)."""

    async def chunk(self, text: str) -> None:
        """Send ``text`` as the next chunk (only to a client that streams)."""
        if not self.streams or not text:
            return
        await self.updater.add_artifact(
            [new_text_part(text)],
            artifact_id=OUTPUT_ARTIFACT,
            name=OUTPUT_ARTIFACT,
            append=not self.fresh,
            last_chunk=False,
        )
        self.fresh = False

    async def whole(self, parts: list[Part]) -> None:
        """Send the whole answer, replacing any chunks: the artifact's last chunk."""
        await self.updater.add_artifact(
            parts, artifact_id=OUTPUT_ARTIFACT, name=OUTPUT_ARTIFACT, append=False, last_chunk=True
        )


async def _publish(event: Event, answer: _Answer) -> None:
    updater = answer.updater
    match event:
        case AgentStarted(agent=agent) if answer.streams:
            await updater.start_work(
                _message(updater, f"{agent} is working", data={"agent": agent})
            )
        case HandoffPerformed(source=source, target=target) if answer.streams:
            note = f"{source} handed off to {target}"
            await updater.start_work(_message(updater, note, data={"handoff": [source, target]}))
        case TextDelta(text=text):
            await answer.chunk(text)
        case ModelCallFinished() | ModelAttemptDiscarded():
            answer.fresh = True
        case RunFinished(result=result):
            await _finish(result, answer)
        case _:
            pass


async def _finish(result: RunResult, answer: _Answer) -> None:
    updater = answer.updater
    if result.stop_reason == "final_output":
        await answer.whole(_output_parts(result))
        await updater.complete(_message(updater, _text_of(result)))
    elif result.stop_reason == "interrupted" and result.pending is not None:
        pending = to_jsonable_python(result.pending)
        question = _question(result)
        data = {
            "session_id": result.session_id,
            "pending": pending,
            INTERRUPT_ID: uuid.uuid4().hex,
        }
        await updater.requires_input(_message(updater, question, data=data))
    else:
        failure = f": {result.failure.type}: {result.failure.message}" if result.failure else ""
        text = f"the run stopped ({result.stop_reason}){failure}"
        data = {"session_id": result.session_id, "stop_reason": result.stop_reason}
        await updater.failed(_message(updater, text, data=data))


def _output_parts(result: RunResult) -> list[Part]:
    output = result.final_output
    if isinstance(output, BaseModel):
        data = output.model_dump(mode="json")
        return [new_text_part(result.final_output_text or ""), new_data_part(data)]
    return [new_text_part(_text_of(result))]


def _text_of(result: RunResult) -> str:
    output = result.final_output
    if isinstance(output, str):
        return output
    return result.final_output_text or ""


def _question(result: RunResult) -> str:
    pending = result.pending
    assert pending is not None
    about = pending.target or pending.tool_name or pending.agent
    if pending.kind == "person":
        return (
            f"waiting for a person of queue {about}: a person who may decide sends {PERSON_SHAPES}"
        )
    ask = f"waiting for a decision on {pending.kind} {about}: reply with a data part"
    return f"{ask} {DECISION_SHAPES}"


def _message(updater: TaskUpdater, text: str, *, data: Mapping[str, Any] | None = None) -> Message:
    """An agent message: ``text``, and ``data`` as a data part; a pause's interrupt id is in
    its metadata too."""
    parts = [new_text_part(text)]
    metadata = None
    if data is not None:
        parts.append(new_data_part(dict(data)))
        if isinstance(data.get(INTERRUPT_ID), str):
            metadata = {INTERRUPT_ID: data[INTERRUPT_ID]}
    return updater.new_agent_message(parts, metadata=metadata)


async def _submit(
    context: RequestContext, updater: TaskUpdater, event_queue: EventQueue
) -> str | None:
    """Submit the new task, its metadata naming its conversation's session; the session id,
    or None when the context id cannot name one (the task has failed then)."""
    task = Task(
        id=updater.task_id,
        context_id=updater.context_id,
        status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
    )
    if context.message is not None:
        task.history.append(context.message)
    try:
        conversation = _conversation(updater.context_id)
    except InteropRequestError as exc:
        await event_queue.enqueue_event(task)
        await updater.failed(_message(updater, str(exc)))
        return None
    task.metadata[SESSION_KEY] = conversation
    await event_queue.enqueue_event(task)
    return conversation


def _conversation(context_id: str) -> str:
    return conversation_session(
        SESSION_PREFIX, context_id, named="context id", longest=MAX_CONTEXT_ID
    )


def _streams(context: RequestContext) -> bool:
    """Whether the caller reads the task as a stream (so the answer is sent in chunks)."""
    return context.call_context.state.get("method") in STREAMING_METHODS


def _without_secrets(data: Any, redact: Redactor, at: str = "") -> tuple[Any, list[str]]:
    """``data`` without the values of secret-looking keys (a run's context never holds
    them), and the dotted paths of those left out."""
    if isinstance(data, list):
        pairs = [_without_secrets(item, redact, f"{at}[{i}]") for i, item in enumerate(data)]
        return [kept for kept, _ in pairs], [path for _, paths in pairs for path in paths]
    if not isinstance(data, dict):
        return data, []
    kept: dict[str, Any] = {}
    withheld: list[str] = []
    for key, value in data.items():
        where = f"{at}.{key}" if at else key
        if redact.is_secret(key):
            withheld.append(where)
            continue
        kept[key], inner = _without_secrets(value, redact, where)
        withheld.extend(inner)
    return kept, withheld


def _has_room(context_type: type[BaseModel] | None) -> bool:
    """Whether a run context validated by ``context_type`` keeps an ``a2a`` entry."""
    if context_type is None:
        return True
    return CONTEXT_KEY in context_type.model_fields or (
        context_type.model_config.get("extra") == "allow"
    )


def decision_of(message: Message | None, *, question: bool = False) -> Decision:
    """The decision a message carries: a data part ``{"decision": ...}``, or the text
    ``approve`` / ``reject`` / ``reject: <reason>``; for a ``question`` pause any other text
    is the answer (``edit(payload={"answer": text})``)."""
    parts = list(message.parts) if message is not None else []
    for data in get_data_parts(parts):
        if isinstance(data, dict) and "decision" in data:
            return _decision_from_data(data)
    words = " ".join(get_text_parts(parts)).strip()
    if words.lower() == "approve":
        return approve()
    if words.lower().startswith("reject"):
        reason = words[len("reject") :].lstrip(" :").strip()
        return reject(reason) if reason else reject()
    if question and words:
        return edit(payload={"answer": words})
    raise InteropRequestError(
        'the task waits for a decision: send a data part {"decision": "approve"}, '
        '{"decision": "reject", "reason": "..."} or {"decision": "edit", "payload": {...}}, '
        "or the text approve / reject: <reason>"
    )


def _decision_from_data(data: Mapping[str, Any]) -> Decision:
    decision = decision_from_request(data)
    if decision is not None:
        return decision
    kind = data.get("decision")
    if kind == "edit":
        raise InteropRequestError('an edit decision needs "payload": a JSON object')
    raise InteropRequestError(f"decision must be approve, reject or edit, got {kind!r}")
