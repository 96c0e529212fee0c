"""One run's spans, fed its events in order: workflow, agent, model, tool and transfer spans."""

from __future__ import annotations

import json
from contextlib import suppress
from typing import TYPE_CHECKING, Any, assert_never

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from swarmkit import events as ev
from swarmkit._log import log
from swarmkit.journal import turn_of
from swarmkit.models import UNKNOWN_PROVIDER, ModelRequest, ToolSpec
from swarmkit.result import RunResult
from swarmkit.tracing import _content as content

if TYPE_CHECKING:
    from contextvars import Token

    from swarmkit.tracing import RunTracing

_CLIENT = SpanKind.CLIENT
_INTERNAL = SpanKind.INTERNAL


class _Stint:
    """An agent's open ``invoke_agent`` span and what its model calls add up to."""

    __slots__ = ("context", "counted", "descriptions", "offered", "reasons", "span", "tokens")

    def __init__(self, span: Span) -> None:
        self.span = span
        self.context = trace.set_span_in_context(span)
        self.tokens = [0, 0, 0, 0]  # input, output, cache read, cache creation
        self.counted = False
        self.reasons: list[str] = []
        self.descriptions: dict[str, str] = {}
        self.offered: tuple[ToolSpec, ...] | None = None

    def add(self, event: ev.ModelCallFinished) -> None:
        if event.finish_reason is not None:
            self.reasons.append(event.finish_reason)
        if event.replayed:
            return
        usage, tokens = event.usage, self.tokens
        tokens[0] += usage.prompt_tokens
        tokens[1] += usage.completion_tokens
        tokens[2] += usage.cache_read_tokens
        tokens[3] += usage.cache_write_tokens
        self.counted = True

    def end(self) -> None:
        """Set the stint's usage (only what was spent now) and finish reasons; end the span."""
        attributes: dict[str, Any] = {}
        if self.counted:
            _set_usage(attributes, *self.tokens)
        if self.reasons:
            attributes["gen_ai.response.finish_reasons"] = self.reasons
        if attributes:
            self.span.set_attributes(attributes)
        self.span.end()


class RunSpans:
    """The open spans of one run, fed its events in order; the innermost one is current.

    A delegated sub-run's events arrive wrapped in the parent's stream: each sub-run gets its
    own ``RunSpans`` whose run span is a child of the delegating tool call's span, so the
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
        self._children: dict[str, RunSpans] = {}
        self._run: Span | None = None
        self._run_context: Context | None = None
        self._stint: _Stint | None = None
        self._model: Span | None = None
        self._tools: dict[str, Span] = {}
        self._common: dict[str, Any] = {}
        self._current: Span | None = None
        self._broken = False
        self._token: Token[Context] | None = None
        self._trace_token: Token[tuple[str, str] | None] | None = None

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
        for span in self._tools.values():
            span.end()
        self._tools.clear()
        if self._model is not None:
            self._model.end()
        if self._stint is not None:
            self._stint.end()
        if self._run is not None:
            self._run.end()
        self._model = self._stint = self._run = None
        self._make_current()
        if self._trace_token is not None:
            token, self._trace_token = self._trace_token, None
            with suppress(ValueError):  # closed from another context (a collected generator)
                ev.RUN_TRACE.reset(token)

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
        if self._tracing.capture_content:
            prompt = [{"role": "user", "parts": [{"type": "text", "content": event.prompt}]}]
            attributes["gen_ai.input.messages"] = content.dumps(prompt)
        self._run = run = self._start_run(f"invoke_workflow {workflow}", event, attributes)
        if not run.is_recording():
            return False
        self._run_context = trace.set_span_in_context(run)
        self._make_current()
        return True

    def _workflow_name(self, event: ev.RunStarted) -> str:
        name = self._tracing.workflow_name
        return name if name is not None and self._parent is None else event.entry_agent

    def _start_run(self, name: str, event: ev.RunStarted, attributes: dict[str, Any]) -> Span:
        """The run's span: a sub-run's under its caller's; a top run that picks up a session
        (a resume, a replay) linked to the session's previous run span, when it is known."""
        tracing = self._tracing
        if self._parent is not None:
            where = trace.set_span_in_context(self._parent)
            span = self._tracer.start_span(name, context=where, attributes=attributes)
        else:
            previous = _previous_run(tracing, event) if event.replay else None
            links = [Link(previous, {"swarmkit.link": "continues"})] if previous else None
            span = self._tracer.start_span(name, attributes=attributes, links=links)
        if span.is_recording():
            run = span.get_span_context()
            tracing.remember_run(event.session_id, run)
            if self._parent is None:  # journaled with the run's end, for a later run to link to
                parent = f"00-{run.trace_id:032x}-{run.span_id:016x}-{run.trace_flags:02x}"
                self._trace_token = ev.RUN_TRACE.set((event.session_id, parent))
        return span

    def _agent_started(self, event: ev.AgentStarted) -> None:
        if self._stint is not None:
            self._stint.end()
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": event.agent,
            "gen_ai.provider.name": event.provider or UNKNOWN_PROVIDER,
            "swarmkit.sub_session_id": event.sub_session_id,
        }
        if event.description:
            attributes["gen_ai.agent.description"] = event.description
        if event.model is not None:
            attributes["gen_ai.request.model"] = event.model
        span = self._start(f"invoke_agent {event.agent}", self._run_context, attributes)
        self._stint = _Stint(span)

    def _rule_evaluated(self, event: ev.RuleEvaluated) -> None:
        attributes: dict[str, Any] = {"swarmkit.rule.matched": event.target is not None}
        if event.target is not None:
            attributes["swarmkit.rule.target"] = event.target
            attributes["swarmkit.decided_by"] = "rule"
        if event.condition is not None:
            attributes["swarmkit.rule.condition"] = event.condition
        self._start("swarmkit.rule", self._agent_context(), attributes).end()
        if event.audited and not event.audit_replayed:  # told once, when the model was asked
            self._audit_result(event)

    def _audit_result(self, event: ev.RuleEvaluated) -> None:
        """An audited rule decision as the conventions' evaluation result, in the run's span:
        score 1 when the model, asked too, chose the rule's target."""
        agrees = event.audit_choice == event.target
        chose = repr(event.audit_choice) if event.audit_choice else "to keep the turn"
        attributes: dict[str, Any] = {
            "gen_ai.evaluation.name": "swarmkit.rule_audit",
            "gen_ai.evaluation.score.value": 1.0 if agrees else 0.0,
            "gen_ai.evaluation.score.label": "agrees" if agrees else "disagrees",
            "gen_ai.evaluation.explanation": (
                f"the model chose {chose} where the rule routes to {event.target!r}"
            ),
            "gen_ai.agent.name": event.agent,
            "swarmkit.rule.target": event.target,
            **self._common,
        }
        if event.condition is not None:
            attributes["swarmkit.rule.condition"] = event.condition
        self._tracing.evaluation_logger().emit(
            event_name="gen_ai.evaluation.result", context=self._run_context, attributes=attributes
        )

    def _model_started(self, event: ev.ModelCallStarted) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": event.provider or UNKNOWN_PROVIDER,
            "swarmkit.turn": event.turn,
        }
        if event.model is not None:
            attributes["gen_ai.request.model"] = event.model
        if event.server_address is not None:
            attributes["server.address"] = event.server_address
            attributes["server.port"] = event.server_port
        if event.stream:  # the conventions: set if and only if the request streams
            attributes["gen_ai.request.stream"] = True
        if event.spend is not None:
            attributes["swarmkit.spend.reservation"] = str(event.spend.get("reservation"))
            attributes["swarmkit.spend.estimate_tokens"] = event.spend.get("estimate_tokens", 0)
            attributes["swarmkit.spend.budgets"] = list(event.spend.get("budgets", ()))
        request = event.request
        if request is not None:
            self._know_tools(request)
            if self._tracing.capture_content:
                self._request_content(attributes, event, request)
        name = f"chat {event.model}" if event.model else "chat"
        self._model = self._start(name, self._agent_context(), attributes, kind=_CLIENT)

    def _know_tools(self, request: ModelRequest) -> None:
        """Keep the offered tools' descriptions for their spans (once per agent's tool set)."""
        stint = self._stint
        if stint is not None and stint.offered is not request.tools:
            stint.offered = request.tools
            stint.descriptions = {tool.name: tool.description for tool in request.tools}

    def _request_content(
        self, attributes: dict[str, Any], event: ev.ModelCallStarted, request: ModelRequest
    ) -> None:
        redactor = self._tracing.redactor
        history = event.history
        messages = history.messages(request.messages[:1]) if history else request.messages
        instructions = content.system_instructions(messages, redactor)
        if instructions is not None:
            attributes["gen_ai.system_instructions"] = instructions
        attributes["gen_ai.input.messages"] = content.input_messages(messages, redactor)
        tools = content.tool_definitions(request.tools)
        if tools is not None:
            attributes["gen_ai.tool.definitions"] = tools

    def _model_finished(self, event: ev.ModelCallFinished) -> None:
        if self._stint is not None:
            self._stint.add(event)
        span, self._model = self._model, None
        if span is None:
            return
        attributes: dict[str, Any]
        if event.replayed:  # spent, and traced, when the call was made
            attributes = {"swarmkit.replayed": True}
        else:
            attributes = {}
            usage = event.usage
            _set_usage(
                attributes,
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
            )
        if event.response_id is not None:
            attributes["gen_ai.response.id"] = event.response_id
        if event.response_model is not None:
            attributes["gen_ai.response.model"] = event.response_model
        if event.finish_reason is not None:
            attributes["gen_ai.response.finish_reasons"] = (event.finish_reason,)
        if self._tracing.capture_content and event.content is not None:
            answer = content.output_messages(event.content, event.finish_reason)
            attributes["gen_ai.output.messages"] = answer
        span.set_attributes(attributes)
        span.end()

    def _tool_called(self, event: ev.ToolCalled) -> None:
        attributes = self._tool_attributes(event.name, event.tool_call_id, event.agent)
        if self._tracing.capture_content:
            arguments = content.recorded(event.arguments, self._tracing.redactor)
            attributes["gen_ai.tool.call.arguments"] = arguments
        self._tools[event.tool_call_id] = self._start(
            f"execute_tool {event.name}", self._agent_context(), attributes
        )

    def _tool_resulted(self, event: ev.ToolResulted) -> None:
        span = self._tools.pop(event.tool_call_id, None)
        if span is None:  # an unknown tool or a bad handoff call: answered with no execution
            attributes = self._tool_attributes(event.name, event.tool_call_id, event.agent)
            span = self._start(f"execute_tool {event.name}", self._agent_context(), attributes)
        attributes = {}
        if self._tracing.capture_content:
            result = content.recorded(event.content, self._tracing.redactor)
            attributes["gen_ai.tool.call.result"] = result
        if event.decision is not None:
            _decision_attributes(attributes, event, self._tracing)
        if event.is_error:
            attributes["error.type"] = "tool_error"
            span.set_status(Status(StatusCode.ERROR, event.content[:200]))
        if attributes:
            span.set_attributes(attributes)
        span.end()

    def _handoff(self, event: ev.HandoffPerformed | ev.HandoffRefused) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.transfer.mode": "pass_control",
            "gen_ai.transfer.target.name": event.target,
        }
        if event.decided_by == "llm":  # the model called a transfer tool: a transfer tool span
            tool = getattr(event, "tool_name", None) or f"transfer_to_{event.target}"
            name = f"execute_tool {tool}"
            attributes |= self._tool_attributes(tool, getattr(event, "tool_call_id", None), None)
        else:  # a rule, a tool's goto or a spent budget: a transfer of its own, with its reason
            name = f"transfer {event.target}"
            reason = getattr(event, "condition", None) or event.decided_by
            attributes["swarmkit.transfer.reason"] = reason
        attributes["gen_ai.agent.name"] = event.source
        attributes["swarmkit.decided_by"] = event.decided_by
        if isinstance(event, ev.HandoffRefused):
            attributes["swarmkit.handoff.refused"] = event.reason
        else:
            _performed(attributes, event, self._tracing)
        self._start(name, self._agent_context(), attributes).end()

    def _sub_run(self, event: ev.SubRunEvent) -> None:
        child = self._children.get(event.session_id)
        if child is None:
            tool = self._tools.get(event.tool_call_id)
            if tool is not None and isinstance(event.event, ev.RunStarted):
                tool.set_attributes(_delegation(event.event.entry_agent))
            parent = tool or (self._stint.span if self._stint else None) or self._run
            child = self._children[event.session_id] = RunSpans(
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
        pending = result.pending
        if pending is not None and pending.kind == "tool":
            self._paused(pending.tool_name)
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
        if self._tracing.capture_content and result.final_output_text is not None:
            answer = content.output_messages(result.final_output_text, None)
            attributes["gen_ai.output.messages"] = answer
        self._run.set_attributes(attributes)
        if result.error is not None:
            _fail(self._run, result.error)
        self.close()

    def _paused(self, tool: str | None) -> None:
        """The run waits for a person to approve a tool call: its span (the last one opened,
        still open) says so."""
        if self._tools:
            span = next(reversed(self._tools.values()))
            span.set_attributes(_PENDING)
            span.add_event("swarmkit.interrupt", {**_PENDING, "gen_ai.tool.name": tool or ""})

    # -- spans ---------------------------------------------------------------------------

    def _tool_attributes(self, name: str, call_id: str | None, agent: str | None) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
        }
        if call_id is not None:
            attributes["gen_ai.tool.call.id"] = call_id
        description = self._stint.descriptions.get(name) if self._stint else None
        if description:
            attributes["gen_ai.tool.description"] = description
        if agent is not None:
            attributes["gen_ai.agent.name"] = agent
        return attributes

    def _agent_context(self) -> Context | None:
        return self._stint.context if self._stint is not None else self._run_context

    def _start(
        self,
        name: str,
        where: Context | None,
        attributes: dict[str, Any],
        *,
        kind: SpanKind = _INTERNAL,
    ) -> Span:
        attributes.update(self._common)
        return self._tracer.start_span(name, context=where, kind=kind, attributes=attributes)

    def _open(self) -> list[Span]:
        """Open spans, innermost first."""
        stint = self._stint.span if self._stint is not None else None
        spans = [*self._tools.values(), self._model, stint, self._run]
        return [span for span in spans if span is not None]

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
            self._token = otel_context.attach(self._context_of(innermost))

    def _context_of(self, span: Span) -> Context:
        """The context that makes ``span`` current: the agent's and the run's are made once."""
        if self._stint is not None and span is self._stint.span:
            return self._stint.context
        if span is self._run and self._run_context is not None:
            return self._run_context
        return trace.set_span_in_context(span)

    def _innermost(self) -> Span | None:
        if self._tools:
            return next(reversed(self._tools.values()))
        if self._model is not None:
            return self._model
        if self._stint is not None:
            return self._stint.span
        return self._run


def _previous_run(tracing: RunTracing, event: ev.RunStarted) -> SpanContext | None:
    """The span of the session's previous run: the one this tracer remembers, else the one
    its journal names (recorded in another process, or before a restart)."""
    remembered = tracing.previous_run(event.session_id)
    if remembered is not None or event.previous_trace is None:
        return remembered
    carrier = {"traceparent": event.previous_trace}
    journaled = trace.get_current_span(_W3C.extract(carrier)).get_span_context()
    return journaled if journaled.is_valid else None


_W3C = TraceContextTextMapPropagator()
"""Reads a journaled ``traceparent`` (a malformed one gives an invalid context: no link)."""

_PENDING = {"swarmkit.interrupt.kind": "tool", "swarmkit.interrupt.status": "pending"}
"""A tool call's span while its run waits for a person's decision."""


def _set_usage(attributes: dict[str, Any], *tokens: int) -> None:
    """The conventions' usage attributes; cache counts only when the provider reported some."""
    attributes["gen_ai.usage.input_tokens"] = tokens[0]
    attributes["gen_ai.usage.output_tokens"] = tokens[1]
    if tokens[2]:
        attributes["gen_ai.usage.cache_read.input_tokens"] = tokens[2]
    if tokens[3]:
        attributes["gen_ai.usage.cache_creation.input_tokens"] = tokens[3]


def _performed(attributes: dict[str, Any], event: ev.HandoffPerformed, tracing: RunTracing) -> None:
    attributes["swarmkit.handoff.number"] = event.number
    if event.condition is not None:
        attributes["swarmkit.rule.condition"] = event.condition
    if event.payload_type is not None:
        attributes["swarmkit.handoff.payload_type"] = event.payload_type
    if tracing.capture_content and event.payload is not None:
        payload = tracing.redactor.value(dict(event.payload), json_strings=True)
        attributes["swarmkit.handoff.payload"] = json.dumps(payload, ensure_ascii=False)


def _delegation(target: str) -> dict[str, Any]:
    """A delegating tool call is a transfer that comes back (the proposed transfer attributes)."""
    return {"gen_ai.transfer.mode": "return_to_caller", "gen_ai.transfer.target.name": target}


def _total(result: RunResult, field: str) -> int:
    return sum(getattr(usage, field) for usage in result.usage.values())


def _fail(span: Span, error: BaseException) -> None:
    span.set_attribute("error.type", type(error).__name__)
    span.set_status(Status(StatusCode.ERROR, str(error)[:200]))


def _decision_attributes(
    attributes: dict[str, Any], event: ev.ToolResulted, tracing: RunTracing
) -> None:
    """A person's decision on the call (the interrupt resolved), and the arguments that ran
    when they were edited (``gen_ai.tool.call.arguments`` holds the model's proposal)."""
    decision = event.decision
    assert decision is not None
    kind = str(decision.get("kind"))
    attributes["swarmkit.decision.kind"] = kind
    attributes["swarmkit.interrupt.kind"] = "tool"
    attributes["swarmkit.interrupt.status"] = kind
    if decision.get("decided_by") is not None:
        attributes["swarmkit.decision.decided_by"] = str(decision["decided_by"])
    if decision.get("edited"):
        attributes["swarmkit.decision.edited"] = [str(f) for f in decision["edited"]]
    if event.arguments is not None and tracing.capture_content:
        executed = content.recorded(event.arguments, tracing.redactor)
        attributes["swarmkit.tool.call.executed_arguments"] = executed
