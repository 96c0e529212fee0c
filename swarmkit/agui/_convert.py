"""A swarm run's events as AG-UI events: one step per agent, text and tool calls as messages,
reasoning as reasoning messages, delegated sub-runs as subagents, handoffs as custom events,
the outcome as RUN_FINISHED (success or interrupt) or RUN_ERROR.

The events are built in their wire form (JSON objects with the protocol's camelCase keys,
absent fields left out), not as ag-ui-protocol's models: building a model per event cost
as much as the run itself. The tests validate every event against those models.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Iterable, Iterator
from typing import Any

from ag_ui.core import PROTOCOL_VERSION
from pydantic_core import to_jsonable_python

from swarmkit.agui._usage import UsageTally
from swarmkit.agui._wire import Wire, interrupt, reasoning_events, tool_call
from swarmkit.events import (
    AgentStarted,
    Event,
    HandoffPerformed,
    HandoffRefused,
    ModelAttemptDiscarded,
    ModelCallFinished,
    ModelCallStarted,
    RuleEvaluated,
    RunFinished,
    RunStarted,
    SubRunEvent,
    TextDelta,
    ToolCalled,
    ToolResulted,
)
from swarmkit.messages import Reasoning
from swarmkit.result import RunResult

HANDOFF = "swarmkit.handoff"
"""The CUSTOM event name of a performed handoff."""
HANDOFF_REFUSED = "swarmkit.handoff_refused"
"""The CUSTOM event name of a refused handoff."""
ATTEMPT_DISCARDED = "swarmkit.attempt_discarded"
"""The CUSTOM event name that voids a streamed message whose model call is being retried."""

_NO_USAGE = frozenset({TextDelta, ToolCalled, ToolResulted, AgentStarted, RunStarted})
"""Events that never change a run's usage (the tally need not see them)."""
_SILENT = frozenset({ModelCallStarted, RuleEvaluated})
"""Events AG-UI has nothing for (a model call shows as its message, a rule as its handoff)."""


async def ag_ui_events(
    events: AsyncIterable[Event],
    *,
    thread_id: str,
    run_id: str,
    new_id: Callable[[], str] | None = None,
) -> AsyncGenerator[Wire, None]:
    """The AG-UI events of a run, each a JSON object as the protocol sends it: pass
    ``swarm.stream(...)`` (or ``swarm.run``'s events)."""
    translator = AgUiTranslator(thread_id=thread_id, run_id=run_id, new_id=new_id)
    convert = translator.convert
    delta = TextDelta
    async for event in events:
        if type(event) is delta and translator._message is not None:
            # Most of a streamed run's events: one dict each, built here without a call.
            yield {
                "type": "TEXT_MESSAGE_CONTENT",
                "messageId": translator._message,
                "delta": event.text,
            }
        else:
            for converted in convert(event):
                yield converted


class AgUiTranslator:
    """Turns swarmkit events into AG-UI events (JSON objects) one at a time, keeping what is
    open: the current agent's step, its streaming message and the sub-runs under way."""

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        new_id: Callable[[], str] | None = None,
        subagent_run_id: str | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.subagent_run_id = subagent_run_id
        """The sub-run this translator speaks for (None: the run itself)."""
        self._new_id = new_id or _ids()
        self._step: str | None = None
        self._message: str | None = None
        self._trail: list[str] = []
        self._usage = UsageTally()
        self._unanswered: dict[str, str] = {}
        self._subruns: dict[str, AgUiTranslator] = {}

    def convert(self, event: Event) -> Iterable[Wire]:
        """The AG-UI events ``event`` stands for (none, one or several)."""
        if self.subagent_run_id is not None:  # its usage is counted by the run's tally
            return [self._tagged(wire) for wire in self._converted(event)]
        if type(event) is TextDelta and self._message is not None:
            # Most of a streamed run's events: kept to one dict, as they arrive in the thousands.
            return (
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": self._message, "delta": event.text},
            )
        kind = type(event)
        if kind not in _NO_USAGE:
            self._usage.add(event)
        return () if kind in _SILENT else self._converted(event)

    def _converted(self, event: Event) -> Iterator[Wire]:
        match event:
            case TextDelta(agent=agent, text=text):
                yield from self._open_message(agent)
                yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": self._message, "delta": text}
            case ModelCallFinished(agent=agent, content=content, reasoning=reasoning):
                yield from self._finish_message(agent, content, reasoning)
            case ToolCalled(tool_call_id=call_id, name=name, arguments=arguments):
                yield from self._close_message()
                self._unanswered[call_id] = name
                yield from tool_call(call_id, name, arguments)
            case ToolResulted(tool_call_id=call_id, content=content, is_error=is_error):
                self._unanswered.pop(call_id, None)
                yield _tool_result(self._new_id(), call_id, content, is_error)
            case SubRunEvent():
                yield from self._sub_run(event)
            case AgentStarted(agent=agent):
                yield from self._start_step(agent)
            case RunStarted(session_id=session_id):
                yield from self._start_run(session_id)
            case ModelAttemptDiscarded(agent=agent, attempt=attempt, reason=reason):
                voided = self._message
                yield from self._close_message()
                value = {"message_id": voided, "agent": agent, "attempt": attempt, "reason": reason}
                yield {"type": "CUSTOM", "name": ATTEMPT_DISCARDED, "value": value}
            case HandoffPerformed() | HandoffRefused():
                name = HANDOFF if isinstance(event, HandoffPerformed) else HANDOFF_REFUSED
                yield {"type": "CUSTOM", "name": name, "value": to_jsonable_python(event)}
            case RunFinished(result=result):
                yield from self._finish_run(result)
            case _:
                return

    def _tagged(self, wire: Wire) -> Wire:
        """``wire`` attributed to this sub-run (its own SUBAGENT_* events already are)."""
        if "subagentRunId" not in wire:
            wire["subagentRunId"] = self.subagent_run_id
        return wire

    def _start_run(self, session_id: str) -> Iterator[Wire]:
        if self.subagent_run_id is None:  # a sub-run's start is its SUBAGENT_STARTED
            yield {
                "type": "RUN_STARTED",
                "threadId": self.thread_id,
                "runId": self.run_id,
                "protocolVersion": PROTOCOL_VERSION,
                "metadata": {"session_id": session_id},
            }

    def _sub_run(self, event: SubRunEvent) -> Iterator[Wire]:
        """A delegated sub-run's event: the sub-run announced at its first, its events
        attributed to it, its end told as SUBAGENT_FINISHED or SUBAGENT_ERROR."""
        sub = self._subruns.get(event.session_id)
        if sub is None:
            sub = AgUiTranslator(
                thread_id=self.thread_id,
                run_id=self.run_id,
                new_id=self._new_id,
                subagent_run_id=event.session_id,
            )
            self._subruns[event.session_id] = sub
            yield self._subagent_started(event)
        inner = event.event
        yield from sub._converted(inner) if isinstance(inner, SubRunEvent) else sub.convert(inner)
        if isinstance(inner, RunFinished):
            del self._subruns[event.session_id]

    def _subagent_started(self, event: SubRunEvent) -> Wire:
        inner = event.event
        name = inner.entry_agent if isinstance(inner, RunStarted) else event.tool_name
        started: Wire = {
            "type": "SUBAGENT_STARTED",
            "subagentRunId": event.session_id,
            "name": name,
            "parentToolCallId": event.tool_call_id,
        }
        if self.subagent_run_id is not None:
            started["parentSubagentRunId"] = self.subagent_run_id
        return started

    def _start_step(self, agent: str) -> Iterator[Wire]:
        """The step of the agent that starts, after the previous agent's step is finished."""
        yield from self._finish_step()
        self._step = agent
        self._trail.append(agent)
        yield {"type": "STEP_STARTED", "stepName": agent}
        if self.subagent_run_id is None:  # the thread's state is the run's, not a sub-run's
            snapshot = {"agent": agent, "trail": list(self._trail)}
            yield {"type": "STATE_SNAPSHOT", "snapshot": snapshot}

    def _finish_message(
        self, agent: str, content: str | None, reasoning: Reasoning | None
    ) -> Iterator[Wire]:
        """The end of a model call: its streamed message closed, its reasoning, and its
        message whole when nothing streamed (a run that does not stream)."""
        streamed = self._message is not None
        yield from self._close_message()
        if reasoning is not None:
            yield from reasoning_events(reasoning, self._new_id)
        if content and not streamed:
            yield from self._open_message(agent)
            yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": self._message, "delta": content}
            yield from self._close_message()

    def _finish_run(self, result: RunResult) -> Iterator[Wire]:
        """What closes the run: its open message and step, its final state and its outcome."""
        yield from self._close_message()
        yield from self._finish_step()
        if self.subagent_run_id is not None:
            yield self._subagent_outcome(result)
            return
        snapshot = {"agent": result.final_agent, "trail": list(result.trail)}
        yield {"type": "STATE_SNAPSHOT", "snapshot": {**snapshot, "context": dict(result.context)}}
        yield self._outcome(result)

    def _open_message(self, agent: str) -> Iterator[Wire]:
        if self._message is None:
            self._message = self._new_id()
            yield {
                "type": "TEXT_MESSAGE_START",
                "messageId": self._message,
                "role": "assistant",
                "name": agent,
            }

    def _close_message(self) -> Iterator[Wire]:
        if self._message is not None:
            yield {"type": "TEXT_MESSAGE_END", "messageId": self._message}
            self._message = None

    def _finish_step(self) -> Iterator[Wire]:
        if self._step is not None:
            yield {"type": "STEP_FINISHED", "stepName": self._step}
            self._step = None

    def _outcome(self, result: RunResult) -> Wire:
        """The run's last event, with the usage of the model calls this stream told of."""
        ended: Wire = {"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": self.run_id}
        if result.stop_reason == "final_output":
            output = result.final_output
            ended["result"] = output if type(output) is str else _json(output)
            ended["outcome"] = {"type": "success"}
        elif result.stop_reason == "interrupted" and result.pending is not None:
            paused = interrupt(result, self._paused_call(result))
            ended["outcome"] = {"type": "interrupt", "interrupts": [paused]}
        else:
            failure = f": {result.failure.type}: {result.failure.message}" if result.failure else ""
            ended = {
                "type": "RUN_ERROR",
                "message": f"the run stopped ({result.stop_reason}){failure}",
                "code": result.stop_reason,
                "metadata": {"session_id": result.session_id},
            }
        usage = self._usage.entries()
        if usage is not None:
            ended["usage"] = usage
        return ended

    def _subagent_outcome(self, result: RunResult) -> Wire:
        """A sub-run's end: finished (with its output, or suspended awaiting a decision) or
        failed (its parent run goes on: the delegating tool reports the failure)."""
        ids = {"subagentRunId": self.subagent_run_id}
        if result.stop_reason == "final_output":
            return {"type": "SUBAGENT_FINISHED", **ids, "result": _json(result.final_output)}
        if result.stop_reason == "interrupted" and result.pending is not None:
            return {"type": "SUBAGENT_FINISHED", **ids, "outcome": {"type": "suspended"}}
        failure = f": {result.failure.type}: {result.failure.message}" if result.failure else ""
        message = f"the sub-run stopped ({result.stop_reason}){failure}"
        return {"type": "SUBAGENT_ERROR", **ids, "message": message, "code": result.stop_reason}

    def _paused_call(self, result: RunResult) -> str | None:
        """The id of the tool call a run paused to have approved (the latest of that tool's
        calls without a result); None when it paused for something else."""
        pending = result.pending
        if pending is None or pending.kind != "tool":
            return None
        calls = [call for call, name in self._unanswered.items() if name == pending.tool_name]
        return calls[-1] if calls else None


def _json(value: object) -> Any:
    """A run's output as JSON data (what is not JSON as its text)."""
    return to_jsonable_python(value, fallback=str)


def _ids() -> Callable[[], str]:
    """Ids unique across runs and threads: the process's random prefix, then a counter (a
    random id per event, or per run, cost more than the rest of a run's conversion)."""
    return _next_id


_PREFIX = secrets.token_hex(8)
_COUNTER = itertools.count(1)


def _next_id() -> str:
    return f"{_PREFIX}-{next(_COUNTER)}"


def _tool_result(message_id: str, call_id: str, content: str, is_error: bool) -> Wire:
    return {
        "type": "TOOL_CALL_RESULT",
        "messageId": message_id,
        "toolCallId": call_id,
        "content": content,
        "role": "tool",
        "metadata": {"is_error": is_error},
    }
