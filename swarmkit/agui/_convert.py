"""A swarm run's events as AG-UI events: one step per agent, text and tool calls as messages,
reasoning as reasoning messages, delegated sub-runs as subagents, handoffs as custom events,
the outcome as RUN_FINISHED (success or interrupt) or RUN_ERROR.

The events are built in their wire form (JSON objects with the protocol's camelCase keys,
absent fields left out), not as ag-ui-protocol's models: building a model per event cost
as much as the run itself. The tests validate every event against those models. One
translator serves two forms: JSON objects (``ag_ui_events``) and the SSE messages the
endpoint sends, written without the objects where a template does it (``_sse.py``).
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Sequence
from typing import Any, Generic, TypeAlias

from pydantic_core import to_jsonable_python

from swarmkit.agui._usage import UsageTally
from swarmkit.agui._wire import (
    OBJECTS,
    Form,
    T,
    Wire,
    interrupt,
    reasoning_events,
    tool_call,
)
from swarmkit.events import (
    AgentStarted,
    Event,
    HandoffPerformed,
    HandoffRefused,
    ModelAttemptDiscarded,
    ModelCallFinished,
    ModelCallStarted,
    RunFinished,
    RunStarted,
    SubRunEvent,
    TextDelta,
    ToolCalled,
    ToolResulted,
)
from swarmkit.messages import Reasoning
from swarmkit.redaction import DEFAULT_REDACTOR, Redactor
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
    redactor: Redactor | None = None,
) -> AsyncGenerator[Wire, None]:
    """The AG-UI events of a run, each a JSON object as the protocol sends it: pass
    ``swarm.stream(...)`` (or ``swarm.run``'s events). Values under secret keys in tool
    arguments and results, payloads, pauses and the context are ``[redacted]``, by
    ``redactor`` (default: swarmkit's default secret words; pass
    ``Redactor.of(swarm.config.redact_keys)`` for a swarm's own words)."""
    translator = AgUiTranslator(
        thread_id=thread_id, run_id=run_id, new_id=new_id, redactor=redactor
    )
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


class Translator(Generic[T]):
    """Turns swarmkit events into AG-UI events one at a time, in a form (JSON objects or SSE
    messages), keeping what is open: the current agent's step, its streaming message and the
    sub-runs under way."""

    def __init__(
        self,
        form: Form[T],
        *,
        thread_id: str,
        run_id: str,
        new_id: Callable[[], str] | None,
        subagent_run_id: str | None,
        redactor: Redactor | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.subagent_run_id = subagent_run_id
        """The sub-run this translator speaks for (None: the run itself)."""
        self._form = form
        self._redact = redactor or DEFAULT_REDACTOR
        """Hides secret keys' values in what the model wrote and tools returned."""
        self._new_id = new_id or _next_id
        self._step: str | None = None
        self._message: str | None = None
        self._trail: list[str] = []
        self._usage = UsageTally()
        self._unanswered: dict[str, str] = {}
        self._subruns: dict[str, AgUiTranslator] = {}

    def convert(self, event: Event) -> Sequence[T]:
        """The AG-UI events ``event`` stands for (none, one or several)."""
        kind = type(event)
        if kind is TextDelta and self._message is not None:
            # Most of a streamed run's events: kept to one call, as they arrive in thousands.
            return (self._form.text(self._message, event.text),)  # type: ignore[union-attr]
        if kind in _COUNTED:  # the run's tally counts its sub-runs' calls too
            self._usage.add(event)
        handler = _HANDLERS.get(kind)
        return () if handler is None else handler(self, event)

    def _converted(self, event: Event) -> Sequence[T]:
        handler = _HANDLERS.get(type(event))
        return () if handler is None else handler(self, event)

    def _on_text(self, event: TextDelta) -> list[T]:
        return [*self._open_message(event.agent), self._form.text(self._message or "", event.text)]

    def _on_model_call(self, event: ModelCallFinished) -> list[T]:
        message = self._message
        if message is not None and event.reasoning is None:  # a streamed answer, as most are
            self._message = None
            return [self._form.text_end(message)]
        return self._finish_message(event.agent, event.content, event.reasoning)

    def _on_tool_call(self, event: ToolCalled) -> list[T]:
        self._unanswered[event.tool_call_id] = event.name
        arguments = self._redact.json_text(event.arguments)
        called = tool_call(event.tool_call_id, event.name, arguments)
        return [*self._close_message(), *map(self._form.event, called)]

    def _on_tool_result(self, event: ToolResulted) -> list[T]:
        self._unanswered.pop(event.tool_call_id, None)
        content = self._redact.in_text(self._redact.json_text(event.content))
        result = _tool_result(self._new_id(), event.tool_call_id, content, event.is_error)
        return [self._form.event(result)]

    def _on_agent(self, event: AgentStarted) -> list[T]:
        """The step of the agent that starts, after the previous agent's step is finished."""
        finished = [] if self._step is None else self._finish_step()
        agent = event.agent
        self._step = agent
        self._trail.append(agent)
        finished.append(self._form.step_started(agent))
        if self.subagent_run_id is None:  # the thread's state is the run's, not a sub-run's
            finished.append(self._form.state(agent, self._trail))
        return finished

    def _on_run_started(self, event: RunStarted) -> list[T]:
        if self.subagent_run_id is not None:  # a sub-run's start is its SUBAGENT_STARTED
            return []
        return [self._form.run_started(self.thread_id, self.run_id, event.session_id)]

    def _on_discarded(self, event: ModelAttemptDiscarded) -> list[T]:
        voided = self._message
        closed = self._close_message()
        value = {
            "message_id": voided,
            "agent": event.agent,
            "attempt": event.attempt,
            "reason": event.reason,
        }
        custom = {"type": "CUSTOM", "name": ATTEMPT_DISCARDED, "value": value}
        closed.append(self._form.event(custom))
        return closed

    def _on_handoff(self, event: HandoffPerformed | HandoffRefused) -> list[T]:
        name = HANDOFF if isinstance(event, HandoffPerformed) else HANDOFF_REFUSED
        value = self._redact.value(to_jsonable_python(event))
        custom = {"type": "CUSTOM", "name": name, "value": value}
        return [self._form.event(custom)]

    def _on_run_finished(self, event: RunFinished) -> list[T]:
        """What closes the run: its open message and step, its final state and its outcome."""
        ended = [] if self._message is None else self._close_message()
        if self._step is not None:
            ended.extend(self._finish_step())
        result = event.result
        if self.subagent_run_id is not None:
            ended.append(self._form.event(self._subagent_outcome(result)))
            return ended
        context = self._redact.value(result.context)
        ended.append(self._form.final_state(result.final_agent, result.trail, context))
        ended.append(self._outcome(result))
        return ended

    def _on_sub_run(self, event: SubRunEvent) -> list[T]:
        """A delegated sub-run's event: the sub-run announced at its first, its events
        attributed to it, its end told as SUBAGENT_FINISHED or SUBAGENT_ERROR."""
        out: list[Wire] = []
        sub = self._subruns.get(event.session_id)
        if sub is None:
            sub = AgUiTranslator(
                thread_id=self.thread_id,
                run_id=self.run_id,
                new_id=self._new_id,
                subagent_run_id=event.session_id,
                redactor=self._redact,
            )
            self._subruns[event.session_id] = sub
            out.append(self._subagent_started(event))
        inner = event.event
        out.extend(sub._converted(inner) if isinstance(inner, SubRunEvent) else sub.convert(inner))
        if isinstance(inner, RunFinished):
            del self._subruns[event.session_id]
        return [self._form.event(wire) for wire in out]

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

    def _finish_message(
        self, agent: str, content: str | None, reasoning: Reasoning | None
    ) -> list[T]:
        """The end of a model call: its streamed message closed, its reasoning, and its
        message whole when nothing streamed (a run that does not stream)."""
        streamed = self._message is not None
        finished = self._close_message()
        if reasoning is not None:
            finished.extend(map(self._form.event, reasoning_events(reasoning, self._new_id)))
        if content and not streamed:
            finished.extend(self._open_message(agent))
            finished.append(self._form.text(self._message or "", content))
            finished.extend(self._close_message())
        return finished

    def _open_message(self, agent: str) -> list[T]:
        if self._message is not None:
            return []
        self._message = self._new_id()
        return [self._form.text_start(self._message, agent)]

    def _close_message(self) -> list[T]:
        if self._message is None:
            return []
        closed = self._form.text_end(self._message)
        self._message = None
        return [closed]

    def _finish_step(self) -> list[T]:
        if self._step is None:
            return []
        finished = self._form.step_finished(self._step)
        self._step = None
        return [finished]

    def _outcome(self, result: RunResult) -> T:
        """The run's last event, with the usage of the model calls this stream told of."""
        output = result.final_output
        if result.stop_reason == "final_output" and type(output) is str:
            return self._form.run_finished(self.thread_id, self.run_id, output, self._usage)
        return self._form.event(self._outcome_object(result, self._usage.entries()))

    def _outcome_object(self, result: RunResult, usage: list[dict[str, Any]] | None) -> Wire:
        """The run's last event as a JSON object (``usage``: its entries, if any)."""
        ended: Wire = {"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": self.run_id}
        if result.stop_reason == "final_output":
            ended["result"] = _json(result.final_output)
            ended["outcome"] = {"type": "success"}
        elif result.stop_reason == "interrupted" and result.pending is not None:
            paused = interrupt(result, self._paused_call(result), self._redact)
            ended["outcome"] = {"type": "interrupt", "interrupts": [paused]}
        else:
            failure = f": {result.failure.type}: {result.failure.message}" if result.failure else ""
            ended = {
                "type": "RUN_ERROR",
                "message": f"the run stopped ({result.stop_reason}){failure}",
                "code": result.stop_reason,
                "metadata": {"session_id": result.session_id},
            }
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


class AgUiTranslator(Translator[Wire]):
    """Turns swarmkit events into AG-UI events (JSON objects) one at a time, keeping what is
    open: the current agent's step, its streaming message and the sub-runs under way."""

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        new_id: Callable[[], str] | None = None,
        subagent_run_id: str | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        super().__init__(
            OBJECTS,
            thread_id=thread_id,
            run_id=run_id,
            new_id=new_id,
            subagent_run_id=subagent_run_id,
            redactor=redactor,
        )

    def convert(self, event: Event) -> Sequence[Wire]:
        """The AG-UI events ``event`` stands for (none, one or several)."""
        if self.subagent_run_id is not None:  # its usage is counted by the run's tally
            return [self._tagged(wire) for wire in self._converted(event)]
        return super().convert(event)

    def _tagged(self, wire: Wire) -> Wire:
        """``wire`` attributed to this sub-run (its own SUBAGENT_* events already are)."""
        if "subagentRunId" not in wire:
            wire["subagentRunId"] = self.subagent_run_id
        return wire


_Handler: TypeAlias = Callable[[Translator[Any], Any], Sequence[Any]]
_HANDLERS: dict[type[Any], _Handler] = {
    TextDelta: Translator._on_text,
    ModelCallFinished: Translator._on_model_call,
    ToolCalled: Translator._on_tool_call,
    ToolResulted: Translator._on_tool_result,
    SubRunEvent: Translator._on_sub_run,
    AgentStarted: Translator._on_agent,
    RunStarted: Translator._on_run_started,
    ModelAttemptDiscarded: Translator._on_discarded,
    HandoffPerformed: Translator._on_handoff,
    HandoffRefused: Translator._on_handoff,
    RunFinished: Translator._on_run_finished,
}
"""What each kind of event becomes (a kind not here, a model call's start or a rule's
evaluation, has nothing in AG-UI: the call shows as its message, the rule as its handoff)."""

_COUNTED = frozenset({ModelCallStarted, ModelCallFinished, SubRunEvent})
"""The events the run's usage tally reads."""


def _json(value: object) -> Any:
    """A run's output as JSON data (what is not JSON as its text)."""
    return to_jsonable_python(value, fallback=str)


_PREFIX = secrets.token_hex(8)
_COUNTER = itertools.count(1)


def _next_id() -> str:
    """An id unique across runs and threads: the process's random prefix, then a counter (a
    random id per event, or per run, cost more than the rest of a run's conversion)."""
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
