"""OpenTelemetry spans built from a run's events (extra ``otel``); the loop makes no calls.

```python
from swarmkit.tracing import traced

swarm = Swarm(agents, "triage", model=model, observers=[traced])
```

Every run then has an ``invoke_workflow`` span, with one per agent turn, model call, tool
call, handoff and rule decision nested inside, named and attributed after the OpenTelemetry
GenAI semantic conventions (``swarmkit.*`` for what they do not cover); every span carries
``gen_ai.conversation.id``. A model call served from the journal (a replay, the journaled
steps of a resume) has its span but no ``gen_ai.usage.*``, and a resumed run's span links to
the paused run's, so usage summed over a session's traces counts each call once. Nothing is
recorded unless the application configured a tracer provider, and the library configures no
exporter: nothing is sent anywhere by default. Prompts, answers and tool arguments are
recorded only with ``RunTracing(capture_content=True)``, and JSON keys that name secrets are
redacted even then.
The only module of swarmkit that imports ``opentelemetry``.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Collection
from contextlib import aclosing
from contextvars import Token
from typing import Any, assert_never

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import (
    Link,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    Tracer,
    TracerProvider,
)

from swarmkit import __version__
from swarmkit import events as ev
from swarmkit._log import log
from swarmkit.bounds import load_json
from swarmkit.journal import turn_of
from swarmkit.models import UNKNOWN_PROVIDER
from swarmkit.redaction import DEFAULT_SECRET_PATTERNS, Redactor
from swarmkit.result import RunResult

DEFAULT_SECRET_WORDS = DEFAULT_SECRET_PATTERNS
"""Words of a JSON key that mark its value as secret in recorded content (the journal's)."""

_SCOPE = "swarmkit"
_REMEMBERED_RUNS = 1024
"""Run spans a tracer remembers (the latest of each session) to link a resume to."""


class RunTracing:
    """An event observer that turns each run into OpenTelemetry spans; see the module docstring.

    ``tracer_provider`` defaults to the global one the application configured (spans are not
    recorded while there is none). ``capture_content`` adds the prompt, answers, tool arguments
    and results to the spans, with the values of secret-looking JSON keys redacted.
    ``workflow_name`` names every top-level run's ``invoke_workflow`` span; without it the
    name is the agent that takes the run's first step.
    """

    def __init__(
        self,
        *,
        capture_content: bool = False,
        tracer_provider: TracerProvider | None = None,
        secret_words: Collection[str] = DEFAULT_SECRET_WORDS,
        workflow_name: str | None = None,
    ) -> None:
        self.capture_content = capture_content
        self.workflow_name = workflow_name
        self._runs: OrderedDict[str, SpanContext] = OrderedDict()
        self._provider = tracer_provider
        self._redactor = Redactor.of(secret_words)
        self._tracers: tuple[TracerProvider, Tracer] | None = None

    def __call__(self, events: AsyncGenerator[ev.Event, None]) -> AsyncGenerator[ev.Event, None]:
        """Pass the run's events on, recording spans as they go by."""
        return self._observe(events)

    async def _observe(
        self, events: AsyncGenerator[ev.Event, None]
    ) -> AsyncGenerator[ev.Event, None]:
        async with aclosing(events):
            first = await anext(events, None)
            if first is None:
                return
            spans = _RunSpans(self, self._tracer())
            if not spans.observe(first):
                yield first  # nobody records: pass the rest through untouched
                async for event in events:
                    yield event
                return
            try:
                yield first
                async for event in events:
                    spans.safely_observe(event)
                    yield event
            except BaseException as exc:
                spans.abort(exc)
                raise
            finally:
                spans.close()

    def _tracer(self) -> Tracer:
        provider = self._provider or trace.get_tracer_provider()
        if self._tracers is None or self._tracers[0] is not provider:
            self._tracers = (provider, provider.get_tracer(_SCOPE, __version__))
        return self._tracers[1]

    def content(self, text: str | None) -> str | None:
        """``text`` as recorded: None unless content is captured; secret JSON keys redacted."""
        if not self.capture_content or text is None:
            return None
        try:
            data = load_json(text)
        except ValueError:
            return text
        if not isinstance(data, dict | list):
            return text
        return json.dumps(self._redactor.value(data), ensure_ascii=False)

    def previous_run(self, session_id: str) -> SpanContext | None:
        """The span of the session's latest run this tracer recorded, if it remembers one.

        Only this process's recent runs are remembered: a run resumed elsewhere starts an
        unlinked trace (its spans still carry the session and conversation ids)."""
        return self._runs.get(session_id)

    def remember_run(self, session_id: str, run: SpanContext) -> None:
        """Keep ``run`` as the session's latest run span, for a later resume to link to."""
        self._runs.pop(session_id, None)
        self._runs[session_id] = run
        if len(self._runs) > _REMEMBERED_RUNS:
            self._runs.popitem(last=False)

    def is_secret(self, key: str) -> bool:
        """Whether a key names a secret, by swarmkit's redaction rules (whole words)."""
        return self._redactor.is_secret(key)


traced = RunTracing()
"""The default observer: spans without content, on the application's tracer provider."""


class _RunSpans:
    """The open spans of one run, fed its events in order; the innermost one is current.

    A delegated sub-run's events arrive wrapped in the parent's stream: each sub-run gets its
    own ``_RunSpans`` whose run span is a child of the delegating tool call's span, so the
    nesting is live; only the top run switches the current span.
    """

    def __init__(
        self,
        tracing: RunTracing,
        tracer: Tracer,
        parent: Span | None = None,
        conversation_id: str | None = None,
    ) -> None:
        self._tracing = tracing
        self._tracer = tracer
        self._parent = parent
        self._conversation_id = conversation_id
        self._children: dict[str, _RunSpans] = {}
        self._run: Span | None = None
        self._agent: Span | None = None
        self._model: Span | None = None
        self._tools: dict[str, Span] = {}
        self._common: dict[str, Any] = {}
        self._current: Span | None = None
        self._broken = False
        self._token: Token[Context] | None = None

    def observe(self, event: ev.Event) -> bool:
        """Record one event; False when the run's span is not recorded (tracing is off)."""
        match event:
            case ev.RunStarted():
                return self._run_started(event)
            case ev.AgentStarted():
                self._agent_started(event)
            case ev.RuleEvaluated():
                self._rule_evaluated(event)
            case ev.ModelCallStarted():
                self._model_started(event)
            case ev.ModelCallFinished():
                self._model_finished(event)
            case ev.ToolCalled():
                self._tool_called(event)
            case ev.ToolResulted():
                self._tool_resulted(event)
            case ev.HandoffPerformed() | ev.HandoffRefused():
                self._handoff(event)
            case ev.RunFinished():
                self._run_finished(event.result)
            case ev.TextDelta() | ev.ModelAttemptDiscarded():
                return True  # text is not traced (content, when asked for, is the answer's)
            case ev.SubRunEvent():
                self._sub_run(event)
            case _:
                assert_never(event)
        self._make_current()
        return True

    def safely_observe(self, event: ev.Event) -> None:
        """Record one event; a failure to trace is logged, and never fails the run."""
        if self._broken:
            return
        try:
            self.observe(event)
        except Exception as exc:
            self._broken = True
            log("swarmkit.tracing", "tracing_failed", level="warning", error=repr(exc))

    def abort(self, error: BaseException) -> None:
        """The run raised (or its reader stopped): fail the open spans unless it just stopped."""
        if isinstance(error, GeneratorExit):
            return
        for child in self._children.values():
            child.abort(error)
        for span in self._open():
            _fail(span, error)

    def close(self) -> None:
        """End whatever is still open and restore the context the run started in."""
        for child in self._children.values():
            child.close()
        self._children.clear()
        for span in self._open():
            span.end()
        self._tools.clear()
        self._model = self._agent = self._run = None
        self._make_current()

    # -- events --------------------------------------------------------------------------

    def _run_started(self, event: ev.RunStarted) -> bool:
        # Every span carries the conversation and session ids, so a backend finds a session's
        # spans (or one step's, from a worker that ran only that step) with one query; a
        # sub-run belongs to its caller's conversation; a replay marks all.
        if self._conversation_id is None:
            self._conversation_id = turn_of(event.session_id)[0]
        self._common = {
            "gen_ai.conversation.id": self._conversation_id,
            "swarmkit.session_id": event.session_id,
        }
        if event.replay:
            self._common["swarmkit.replay"] = True
        workflow = self._workflow_name(event)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.workflow.name": workflow,
            **self._common,
            "swarmkit.entry_agent": event.entry_agent,
            "swarmkit.replay": event.replay,
        }
        decision = event.next_turn
        if decision is not None:  # a later turn of a conversation: who answers, and why
            attributes["swarmkit.next_turn.policy"] = decision.policy
            attributes["swarmkit.next_turn.agent"] = decision.agent
            attributes["swarmkit.next_turn.last_agent"] = decision.last_agent
            if decision.condition is not None:
                attributes["swarmkit.next_turn.condition"] = decision.condition
        _set_content(attributes, "swarmkit.prompt", self._tracing.content(event.prompt))
        self._run = self._start_run(f"invoke_workflow {workflow}", event, attributes)
        if not self._run.is_recording():
            return False
        self._make_current()
        return True

    def _workflow_name(self, event: ev.RunStarted) -> str:
        name = self._tracing.workflow_name
        return name if name is not None and self._parent is None else event.entry_agent

    def _start_run(self, name: str, event: ev.RunStarted, attributes: dict[str, Any]) -> Span:
        """The run's span: a sub-run's under its caller's; a top run that picks up a session
        (a resume, a replay) linked to the session's previous run span, when it is known."""
        if self._parent is not None:
            where = trace.set_span_in_context(self._parent)
            return self._tracer.start_span(name, context=where, attributes=attributes)
        previous = self._tracing.previous_run(event.session_id) if event.replay else None
        links = [Link(previous, {"swarmkit.link": "continues"})] if previous else None
        span = self._tracer.start_span(name, attributes=attributes, links=links)
        if span.is_recording():
            self._tracing.remember_run(event.session_id, span.get_span_context())
        return span

    def _agent_started(self, event: ev.AgentStarted) -> None:
        if self._agent is not None:
            self._agent.end()
        self._agent = self._start(
            f"invoke_agent {event.agent}",
            self._run,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": event.agent,
                "gen_ai.provider.name": event.provider or UNKNOWN_PROVIDER,
                "swarmkit.sub_session_id": event.sub_session_id,
            },
        )

    def _rule_evaluated(self, event: ev.RuleEvaluated) -> None:
        attributes: dict[str, Any] = {"swarmkit.rule.matched": event.target is not None}
        if event.target is not None:
            attributes["swarmkit.rule.target"] = event.target
            attributes["swarmkit.decided_by"] = "rule"
        if event.condition is not None:
            attributes["swarmkit.rule.condition"] = event.condition
        self._start("swarmkit.rule", self._agent, attributes).end()

    def _model_started(self, event: ev.ModelCallStarted) -> None:
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "swarmkit.turn": event.turn}
        attributes["gen_ai.provider.name"] = event.provider or UNKNOWN_PROVIDER
        if event.model is not None:
            attributes["gen_ai.request.model"] = event.model
        if event.spend is not None:
            attributes["swarmkit.spend.reservation"] = str(event.spend.get("reservation"))
            attributes["swarmkit.spend.estimate_tokens"] = event.spend.get("estimate_tokens", 0)
            attributes["swarmkit.spend.budgets"] = list(event.spend.get("budgets", ()))
        name = f"chat {event.model}" if event.model else "chat"
        self._model = self._start(name, self._agent, attributes, kind=SpanKind.CLIENT)

    def _model_finished(self, event: ev.ModelCallFinished) -> None:
        span, self._model = self._model, None
        if span is None:
            return
        attributes: dict[str, Any]
        if event.replayed:  # spent, and traced, when the call was made
            attributes = {"swarmkit.replayed": True}
        else:
            attributes = {
                "gen_ai.usage.input_tokens": event.usage.prompt_tokens,
                "gen_ai.usage.output_tokens": event.usage.completion_tokens,
            }
        if event.response_model is not None:
            attributes["gen_ai.response.model"] = event.response_model
        if event.finish_reason is not None:
            attributes["gen_ai.response.finish_reasons"] = [event.finish_reason]
        answer = self._tracing.content(event.content)
        if answer is not None:
            attributes["gen_ai.output.messages"] = _output_messages(answer)
        span.set_attributes(attributes)
        span.end()

    def _tool_called(self, event: ev.ToolCalled) -> None:
        attributes = _tool_attributes(event.name, event.tool_call_id)
        _set_content(attributes, "gen_ai.tool.call.arguments", self._content(event.arguments))
        self._tools[event.tool_call_id] = self._start(
            f"execute_tool {event.name}", self._agent, attributes
        )

    def _tool_resulted(self, event: ev.ToolResulted) -> None:
        span = self._tools.pop(event.tool_call_id, None)
        if span is None:  # an unknown tool or a bad handoff call: answered with no execution
            attributes = _tool_attributes(event.name, event.tool_call_id)
            span = self._start(f"execute_tool {event.name}", self._agent, attributes)
        result = self._content(event.content)
        if result is not None:
            span.set_attribute("gen_ai.tool.call.result", result)
        _audit_attributes(span, event, self._content)
        if event.is_error:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, event.content[:200]))
        span.end()

    def _handoff(self, event: ev.HandoffPerformed | ev.HandoffRefused) -> None:
        name = "swarmkit.handoff"
        attributes: dict[str, Any] = {}
        if event.decided_by == "llm":  # the model called a transfer tool: a transfer span
            name = f"execute_tool transfer_to_{event.target}"
            attributes = _tool_attributes(f"transfer_to_{event.target}", None)
            attributes["gen_ai.transfer.mode"] = "pass_control"
            attributes["gen_ai.transfer.target.name"] = event.target
        attributes |= {
            "swarmkit.handoff.source": event.source,
            "swarmkit.handoff.target": event.target,
            "swarmkit.decided_by": event.decided_by,
        }
        if isinstance(event, ev.HandoffRefused):
            attributes["swarmkit.handoff.refused"] = event.reason
        else:
            attributes["swarmkit.handoff.number"] = event.number
            if event.condition is not None:
                attributes["swarmkit.rule.condition"] = event.condition
            if event.payload_type is not None:
                attributes["swarmkit.handoff.payload_type"] = event.payload_type
            payload = json.dumps(event.payload) if event.payload is not None else None
            _set_content(attributes, "swarmkit.handoff.payload", self._content(payload))
        self._start(name, self._agent, attributes).end()

    def _sub_run(self, event: ev.SubRunEvent) -> None:
        child = self._children.get(event.session_id)
        if child is None:
            tool = self._tools.get(event.tool_call_id)
            if tool is not None and isinstance(event.event, ev.RunStarted):
                tool.set_attributes(_delegation(event.event.entry_agent))
            parent = tool or self._agent or self._run
            child = self._children[event.session_id] = _RunSpans(
                self._tracing, self._tracer, parent, self._conversation_id
            )
        child.observe(event.event)
        if isinstance(event.event, ev.RunFinished):
            del self._children[event.session_id]

    def _run_finished(self, result: RunResult) -> None:
        if self._model is not None and result.error is not None:
            _fail(self._model, result.error)
        if self._run is None:
            return
        attributes: dict[str, Any] = {
            "swarmkit.stop_reason": result.stop_reason,
            "swarmkit.final_agent": result.final_agent,
            # The session's totals so far, journaled calls included: not gen_ai.usage.*, which
            # the model call spans carry, so a sum over spans counts each call once.
            "swarmkit.usage.input_tokens": _total(result, "prompt_tokens"),
            "swarmkit.usage.output_tokens": _total(result, "completion_tokens"),
        }
        if result.limit is not None and result.limit.budget is not None:
            attributes["swarmkit.spend.budget"] = result.limit.budget
            attributes["swarmkit.spend.limit"] = result.limit.allowed
            attributes["swarmkit.spend.used"] = result.limit.used
        output = self._tracing.content(result.final_output)
        if output is not None:
            attributes["swarmkit.final_output"] = output
        self._run.set_attributes(attributes)
        if result.error is not None:
            _fail(self._run, result.error)
        self.close()

    # -- spans ---------------------------------------------------------------------------

    def _start(
        self,
        name: str,
        parent: Span | None,
        attributes: dict[str, Any],
        *,
        kind: SpanKind = SpanKind.INTERNAL,
    ) -> Span:
        where = trace.set_span_in_context(parent) if parent is not None else None
        attributes.update(self._common)
        return self._tracer.start_span(name, context=where, kind=kind, attributes=attributes)

    def _open(self) -> list[Span]:
        """Open spans, innermost first."""
        spans = [*self._tools.values(), self._model, self._agent, self._run]
        return [span for span in spans if span is not None]

    def _content(self, text: str | None) -> str | None:
        return self._tracing.content(text)

    def _make_current(self) -> None:
        # The innermost open span is current between events, so spans of the step that
        # follows (an MCP call, an HTTP request) nest under it. A sub-run runs in its own
        # task: its spans are parented explicitly, and the context stays the top run's.
        if self._parent is not None:
            return
        innermost = self._innermost()
        if innermost is self._current:
            return
        if self._token is not None:
            otel_context.detach(self._token)
            self._token = None
        self._current = innermost
        if innermost is not None:
            self._token = otel_context.attach(trace.set_span_in_context(innermost))

    def _innermost(self) -> Span | None:
        if self._tools:
            return next(reversed(self._tools.values()))
        for span in (self._model, self._agent, self._run):
            if span is not None:
                return span
        return None


def _tool_attributes(name: str, call_id: str | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": "function",
    }
    if call_id is not None:
        attributes["gen_ai.tool.call.id"] = call_id
    return attributes


def _delegation(target: str) -> dict[str, Any]:
    """A delegating tool call is a transfer that comes back (the proposed transfer attributes)."""
    return {"gen_ai.transfer.mode": "return_to_caller", "gen_ai.transfer.target.name": target}


def _set_content(attributes: dict[str, Any], key: str, value: str | None) -> None:
    if value is not None:
        attributes[key] = value


def _output_messages(text: str) -> str:
    message = {"role": "assistant", "parts": [{"type": "text", "content": text}]}
    return json.dumps([message], ensure_ascii=False)


def _total(result: RunResult, field: str) -> int:
    return sum(getattr(usage, field) for usage in result.usage.values())


def _fail(span: Span, error: BaseException) -> None:
    span.set_attribute("error.type", type(error).__name__)
    span.set_status(Status(StatusCode.ERROR, str(error)[:200]))


def _audit_attributes(span: Any, event: ev.ToolResulted, content: Callable[[str], Any]) -> None:
    """A person's decision on the call, and the arguments that ran when they were edited
    (the span's ``gen_ai.tool.call.arguments`` holds the model's proposal)."""
    decision = event.decision
    if decision is None:
        return
    span.set_attribute("swarmkit.decision.kind", str(decision.get("kind")))
    if decision.get("decided_by") is not None:
        span.set_attribute("swarmkit.decision.decided_by", str(decision["decided_by"]))
    if decision.get("edited"):
        span.set_attribute("swarmkit.decision.edited", [str(f) for f in decision["edited"]])
    if event.arguments is not None:
        executed = content(event.arguments)
        if executed is not None:
            span.set_attribute("swarmkit.tool.call.executed_arguments", executed)
