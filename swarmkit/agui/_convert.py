"""A swarm run's events as AG-UI events: one step per agent, text and tool calls as messages,
handoffs as custom events, the outcome as RUN_FINISHED (success or interrupt) or RUN_ERROR."""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Iterator
from typing import Any

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    CustomEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from pydantic_core import to_jsonable_python

from swarmkit.agui._usage import UsageTally
from swarmkit.events import (
    AgentStarted,
    Event,
    HandoffPerformed,
    HandoffRefused,
    ModelAttemptDiscarded,
    ModelCallFinished,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCalled,
    ToolResulted,
)
from swarmkit.result import RunResult

HANDOFF = "swarmkit.handoff"
"""The CUSTOM event name of a performed handoff."""
HANDOFF_REFUSED = "swarmkit.handoff_refused"
"""The CUSTOM event name of a refused handoff."""
ATTEMPT_DISCARDED = "swarmkit.attempt_discarded"
"""The CUSTOM event name that voids a streamed message whose model call is being retried."""


async def ag_ui_events(
    events: AsyncIterable[Event],
    *,
    thread_id: str,
    run_id: str,
    new_id: Callable[[], str] | None = None,
) -> AsyncGenerator[BaseEvent, None]:
    """The AG-UI events of a run: pass ``swarm.stream(...)`` (or ``swarm.run``'s events)."""
    translator = AgUiTranslator(thread_id=thread_id, run_id=run_id, new_id=new_id)
    async for event in events:
        for converted in translator.convert(event):
            yield converted


class AgUiTranslator:
    """Turns swarmkit events into AG-UI events one at a time, keeping what is open: the
    current agent's step and its streaming message."""

    def __init__(
        self, *, thread_id: str, run_id: str, new_id: Callable[[], str] | None = None
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self._new_id = new_id or (lambda: uuid.uuid4().hex)
        self._step: str | None = None
        self._message: str | None = None
        self._trail: list[str] = []
        self._usage = UsageTally()
        self._unanswered: dict[str, str] = {}

    def convert(self, event: Event) -> Iterator[BaseEvent]:
        """The AG-UI events ``event`` stands for (none, one or several)."""
        self._usage.add(event)
        match event:
            case RunStarted(session_id=session_id):
                yield RunStartedEvent(
                    thread_id=self.thread_id,
                    run_id=self.run_id,
                    protocol_version=PROTOCOL_VERSION,
                    metadata={"session_id": session_id},
                )
            case AgentStarted(agent=agent):
                yield from self._start_step(agent)
            case TextDelta(agent=agent, text=text):
                yield from self._open_message(agent)
                assert self._message is not None
                yield TextMessageContentEvent(message_id=self._message, delta=text)
            case ModelAttemptDiscarded(agent=agent, attempt=attempt, reason=reason):
                voided = self._message
                yield from self._close_message()
                value = {"message_id": voided, "agent": agent, "attempt": attempt, "reason": reason}
                yield CustomEvent(name=ATTEMPT_DISCARDED, value=value)
            case ModelCallFinished(agent=agent, content=content):
                yield from self._finish_message(agent, content)
            case ToolCalled(tool_call_id=call_id, name=name, arguments=arguments):
                yield from self._close_message()
                self._unanswered[call_id] = name
                yield from _tool_call(call_id, name, arguments)
            case ToolResulted(tool_call_id=call_id, content=content, is_error=is_error):
                self._unanswered.pop(call_id, None)
                yield ToolCallResultEvent(
                    message_id=self._new_id(),
                    tool_call_id=call_id,
                    content=content,
                    role="tool",
                    metadata={"is_error": is_error},
                )
            case HandoffPerformed() | HandoffRefused():
                name = HANDOFF if isinstance(event, HandoffPerformed) else HANDOFF_REFUSED
                value = to_jsonable_python(event)
                yield CustomEvent(name=name, value=value)
            case RunFinished(result=result):
                yield from self._finish_run(result)
            case _:
                return

    def _start_step(self, agent: str) -> Iterator[BaseEvent]:
        """The step of the agent that starts, after the previous agent's step is finished."""
        yield from self._finish_step()
        self._step = agent
        self._trail.append(agent)
        yield StepStartedEvent(step_name=agent)
        yield StateSnapshotEvent(snapshot={"agent": agent, "trail": list(self._trail)})

    def _finish_message(self, agent: str, content: str | None) -> Iterator[BaseEvent]:
        """The end of a model call's message (opened and filled here if nothing streamed)."""
        if self._message is None and content:
            # A run that does not stream: the whole answer arrives at once.
            yield from self._open_message(agent)
            assert self._message is not None
            yield TextMessageContentEvent(message_id=self._message, delta=content)
        yield from self._close_message()

    def _finish_run(self, result: RunResult) -> Iterator[BaseEvent]:
        """What closes the run: its open message and step, its final state and its outcome."""
        yield from self._close_message()
        yield from self._finish_step()
        snapshot = {"agent": result.final_agent, "trail": list(result.trail)}
        yield StateSnapshotEvent(snapshot={**snapshot, "context": dict(result.context)})
        yield self._outcome(result)

    def _open_message(self, agent: str) -> Iterator[BaseEvent]:
        if self._message is None:
            self._message = self._new_id()
            yield TextMessageStartEvent(message_id=self._message, role="assistant", name=agent)

    def _close_message(self) -> Iterator[BaseEvent]:
        if self._message is not None:
            yield TextMessageEndEvent(message_id=self._message)
            self._message = None

    def _finish_step(self) -> Iterator[BaseEvent]:
        if self._step is not None:
            yield StepFinishedEvent(step_name=self._step)
            self._step = None

    def _outcome(self, result: RunResult) -> BaseEvent:
        """The run's last event, with the usage of the model calls this stream told of."""
        ids = {"thread_id": self.thread_id, "run_id": self.run_id}
        usage = self._usage.entries()
        if result.stop_reason == "final_output":
            output = to_jsonable_python(result.final_output, fallback=str)
            success = RunFinishedSuccessOutcome()
            return RunFinishedEvent(**ids, result=output, outcome=success, usage=usage)
        if result.stop_reason == "interrupted" and result.pending is not None:
            interrupt = _interrupt(result, self._paused_call(result))
            outcome = RunFinishedInterruptOutcome(interrupts=[interrupt])
            return RunFinishedEvent(**ids, outcome=outcome, usage=usage)
        failure = f": {result.failure.type}: {result.failure.message}" if result.failure else ""
        return RunErrorEvent(
            message=f"the run stopped ({result.stop_reason}){failure}",
            code=result.stop_reason,
            metadata={"session_id": result.session_id},
            usage=usage,
        )

    def _paused_call(self, result: RunResult) -> str | None:
        """The id of the tool call a run paused to have approved (the latest of that tool's
        calls without a result); None when it paused for something else."""
        pending = result.pending
        if pending is None or pending.kind != "tool":
            return None
        calls = [call for call, name in self._unanswered.items() if name == pending.tool_name]
        return calls[-1] if calls else None


def _tool_call(call_id: str, name: str, arguments: str) -> Iterator[BaseEvent]:
    """A tool call as AG-UI streams one: start, its arguments in one delta, end."""
    yield ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name)
    yield ToolCallArgsEvent(tool_call_id=call_id, delta=arguments)
    yield ToolCallEndEvent(tool_call_id=call_id)


def _interrupt(result: RunResult, tool_call_id: str | None) -> Interrupt:
    pending = result.pending
    assert pending is not None
    about = pending.target or pending.tool_name or pending.agent
    details: dict[str, Any] = to_jsonable_python(pending)
    return Interrupt(
        id=result.session_id,
        reason=pending.kind,
        tool_call_id=tool_call_id,
        message=f"approve, reject or edit the {pending.kind} {about}",
        response_schema=DECISION_SCHEMA,
        metadata={"pending": details},
    )


DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"enum": ["approve", "reject", "edit"]},
        "reason": {"type": "string"},
        "payload": {"type": "object"},
    },
    "required": ["decision"],
}
"""The JSON schema of a resume entry's payload that decides a paused run."""
