"""Spans and events compared attribute by attribute with the GenAI semantic conventions.

The conventions followed are open-telemetry/semantic-conventions-genai at commit 7e7e4e7
(``model/gen-ai/spans.yaml``, ``registry.yaml``, ``events.yaml``); the transfer attributes
follow that repository's open pull request 447 as a proposal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from swarmkit import Agent, ConfigurationError, Handoff, Swarm, ToolResult, approve, tool
from swarmkit.evals import TaskSet, evaluate
from swarmkit.evals.support_desk import DOMAIN, build_swarm, tasks
from swarmkit.journal import InMemoryJournal
from swarmkit.lowlevel import response_from_data, response_to_data
from swarmkit.messages import AssistantMessage
from swarmkit.models import ModelResponse, Usage
from swarmkit.testing import ScriptedModel, text, tool_call
from swarmkit.tracing import RunTracing
from tests.models.openai_adapters import ADAPTERS, Adapter


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    """Spans of the runs under test, kept in memory."""
    return InMemorySpanExporter()


def _tracing(exporter: InMemorySpanExporter, **options: Any) -> RunTracing:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return RunTracing(tracer_provider=provider, **options)


def _span(spans: Sequence[ReadableSpan], name: str, index: int = 0) -> ReadableSpan:
    return [span for span in spans if span.name == name][index]


def _attributes(spans: Sequence[ReadableSpan], name: str, index: int = 0) -> dict[str, Any]:
    return dict(_span(spans, name, index).attributes or {})


@tool
def lookup(invoice_id: str) -> str:
    """Look up an invoice."""
    return f"{invoice_id}: 30 EUR"


async def test_an_agent_s_stint_is_an_invoke_agent_span_with_its_usage_and_finish_reasons(
    exporter: InMemorySpanExporter,
) -> None:
    """The span has the agent's description, the model asked, and its two calls' usage summed."""
    triage = Agent(name="triage", description="Routes customers.", tools=[lookup])
    swarm = Swarm(
        [triage],
        "triage",
        model=ScriptedModel(tool_call("lookup", invoice_id="A-1"), text("It is 30 EUR.")),
        observers=[_tracing(exporter)],
        session_ids=lambda: "s-1",
    )

    await swarm.run("how much is A-1?")

    span = _span(exporter.get_finished_spans(), "invoke_agent triage")
    assert span.kind is SpanKind.INTERNAL
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "triage",
        "gen_ai.agent.description": "Routes customers.",
        "gen_ai.provider.name": "swarmkit.scripted",
        "gen_ai.request.model": "scripted",
        "gen_ai.usage.input_tokens": 20,
        "gen_ai.usage.output_tokens": 10,
        "gen_ai.response.finish_reasons": ("tool_calls", "stop"),
        "gen_ai.conversation.id": "s-1",
        "swarmkit.session_id": "s-1",
        "swarmkit.sub_session_id": "s-1__swarm_triage_0",
    }


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda adapter: adapter.name)
async def test_a_model_call_span_has_the_response_id_server_and_usage(
    adapter: Adapter, exporter: InMemorySpanExporter
) -> None:
    """Through the real OpenAI client: the provider's response id, host and port, no stream."""
    api = adapter.fake(adapter.answer("Hello!"))
    swarm = Swarm([Agent(name="a")], "a", model=api.model, observers=[_tracing(exporter)])

    await swarm.run("Hi", session_id="s-2")

    span = _span(exporter.get_finished_spans(), "chat gpt-test")
    assert span.kind is SpanKind.CLIENT
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "server.address": "llm.test",
        "server.port": 443,
        "gen_ai.response.id": "chatcmpl-1" if adapter.name == "chat" else "resp_1",
        "gen_ai.response.model": "gpt-test",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 5,
        "gen_ai.conversation.id": "s-2",
        "swarmkit.session_id": "s-2",
        "swarmkit.turn": 1,
    }


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda adapter: adapter.name)
async def test_a_streamed_call_says_so_and_keeps_its_response_id(
    adapter: Adapter, exporter: InMemorySpanExporter
) -> None:
    """gen_ai.request.stream is set (only) for a streamed request; the id comes from the stream."""
    api = adapter.fake(adapter.hello())
    swarm = Swarm([Agent(name="a")], "a", model=api.model, observers=[_tracing(exporter)])

    [_ async for _ in swarm.stream("Hi")]

    chat = _attributes(exporter.get_finished_spans(), "chat gpt-test")
    assert chat["gen_ai.request.stream"] is True
    assert chat["gen_ai.response.id"] == ("chatcmpl-1" if adapter.name == "chat" else "resp_1")


def _cached_usage(adapter: Adapter) -> dict[str, Any]:
    if adapter.name == "chat":
        return {
            "prompt_tokens": 100,
            "completion_tokens": 5,
            "total_tokens": 105,
            "prompt_tokens_details": {"cached_tokens": 64},
        }
    return {
        "input_tokens": 100,
        "output_tokens": 5,
        "total_tokens": 105,
        "input_tokens_details": {"cached_tokens": 64},
    }


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda adapter: adapter.name)
async def test_cached_prompt_tokens_are_the_conventions_cache_read_tokens(
    adapter: Adapter, exporter: InMemorySpanExporter
) -> None:
    """Both OpenAI APIs' cached_tokens become gen_ai.usage.cache_read.input_tokens."""
    reply = adapter.answer("Hello!")
    body = json.loads(reply.content)
    body["usage"] = _cached_usage(adapter)
    api = adapter.fake(type(reply)(200, json=body))
    swarm = Swarm([Agent(name="a")], "a", model=api.model, observers=[_tracing(exporter)])

    result = await swarm.run("Hi")

    chat = _attributes(exporter.get_finished_spans(), "chat gpt-test")
    assert chat["gen_ai.usage.input_tokens"] == 100
    assert chat["gen_ai.usage.cache_read.input_tokens"] == 64
    assert "gen_ai.usage.cache_creation.input_tokens" not in chat
    assert sum(usage.cache_read_tokens for usage in result.usage.values()) == 64


class _CachingModel:
    """A model whose provider reports prompt cache reads and writes (as Anthropic does)."""

    name = "claude-test"
    provider = "anthropic"
    server = ("api.anthropic.com", 443)

    async def respond(self, request: Any) -> ModelResponse:
        usage = Usage(
            prompt_tokens=120,
            completion_tokens=7,
            total_tokens=127,
            cache_read_tokens=80,
            cache_write_tokens=30,
        )
        message = AssistantMessage(content="Done.")
        return ModelResponse(
            message=message, usage=usage, finish_reason="stop", model=self.name, id="msg_9"
        )


async def test_cache_writes_and_reads_show_on_the_chat_and_agent_spans(
    exporter: InMemorySpanExporter,
) -> None:
    """Cache creation and read tokens under the conventions' names, on the call and the stint."""
    swarm = Swarm([Agent(name="a")], "a", model=_CachingModel(), observers=[_tracing(exporter)])

    await swarm.run("Hi")

    spans = exporter.get_finished_spans()
    for attributes in (
        _attributes(spans, "chat claude-test"),
        _attributes(spans, "invoke_agent a"),
    ):
        assert attributes["gen_ai.usage.cache_read.input_tokens"] == 80
        assert attributes["gen_ai.usage.cache_creation.input_tokens"] == 30
    chat = _attributes(spans, "chat claude-test")
    assert (chat["server.address"], chat["server.port"]) == ("api.anthropic.com", 443)
    assert chat["gen_ai.response.id"] == "msg_9"


def test_the_response_id_is_journaled_only_when_known() -> None:
    """A response's id survives the journal; a record written before it reads as None."""
    response = ModelResponse(message=AssistantMessage(content="hi"), id="chatcmpl-7")
    data = response_to_data(response)
    older = {key: value for key, value in data.items() if key != "id"}

    assert response_from_data(data).id == "chatcmpl-7"
    assert response_from_data(older).id is None
    assert "id" not in response_to_data(ModelResponse(message=AssistantMessage(content="hi")))


@tool
def call_api(city: str, api_key: str) -> dict[str, str]:
    """Call the weather API."""
    return {"city": city, "accessToken": "t-123"}


async def test_content_capture_records_messages_instructions_and_tools_without_secrets(
    exporter: InMemorySpanExporter,
) -> None:
    """Opt-in: the second call's input messages, system instructions and tool definitions, in
    the conventions' forms; the api_key and token values are redacted everywhere."""
    model = ScriptedModel(tool_call("call_api", city="Paris", api_key="sk-live-1"), text("Sunny."))
    agent = Agent(name="a", instructions="You report the weather.", tools=[call_api])
    swarm = Swarm([agent], "a", model=model, observers=[_tracing(exporter, capture_content=True)])

    await swarm.run("weather in Paris")

    spans = exporter.get_finished_spans()
    second = _attributes(spans, "chat scripted", 1)
    assert json.loads(second["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "You report the weather."}
    ]
    assert json.loads(second["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "weather in Paris"}]},
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": "call_1",
                    "name": "call_api",
                    "arguments": {"city": "Paris", "api_key": "[redacted]"},
                }
            ],
        },
        {
            "role": "tool",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": "call_1",
                    "result": {"city": "Paris", "accessToken": "[redacted]"},
                }
            ],
        },
    ]
    [definition] = json.loads(second["gen_ai.tool.definitions"])
    assert (definition["type"], definition["name"]) == ("function", "call_api")
    assert definition["description"] == "Call the weather API."
    assert set(definition["parameters"]["properties"]) == {"city", "api_key"}
    assert not any("sk-live-1" in str(s.attributes) or "t-123" in str(s.attributes) for s in spans)


async def test_without_content_capture_no_content_attribute_is_recorded(
    exporter: InMemorySpanExporter,
) -> None:
    """Off by default: no messages, instructions, definitions, arguments or results."""
    model = ScriptedModel(tool_call("call_api", city="Paris", api_key="sk-live-1"), text("Sunny."))
    agent = Agent(name="a", instructions="You report the weather.", tools=[call_api])
    swarm = Swarm([agent], "a", model=model, observers=[_tracing(exporter)])

    await swarm.run("weather in Paris")

    opt_in = {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    }
    recorded = {key for span in exporter.get_finished_spans() for key in span.attributes or {}}
    assert not recorded & opt_in


async def test_a_tool_span_names_its_description_and_the_calling_agent(
    exporter: InMemorySpanExporter,
) -> None:
    """execute_tool lookup has exactly the conventions' tool attributes plus the agent."""
    model = ScriptedModel(tool_call("lookup", invoice_id="A-1"), text("30 EUR."))
    swarm = Swarm(
        [Agent(name="clerk", tools=[lookup])],
        "clerk",
        model=model,
        observers=[_tracing(exporter)],
        session_ids=lambda: "s-4",
    )

    await swarm.run("A-1?")

    assert _attributes(exporter.get_finished_spans(), "execute_tool lookup") == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.description": "Look up an invoice.",
        "gen_ai.agent.name": "clerk",
        "gen_ai.conversation.id": "s-4",
        "swarmkit.session_id": "s-4",
    }


async def test_a_custom_transfer_tool_name_shows_on_the_transfer_span(
    exporter: InMemorySpanExporter,
) -> None:
    """A Handoff(tool_name=...) is the span's tool name; the target is the transfer's."""
    billing = Agent(name="billing", handoffs=[])
    triage = Agent(name="triage", handoffs=[Handoff(billing, tool_name="escalate_to_billing")])
    model = ScriptedModel(tool_call("escalate_to_billing"), text("Refunded."))
    swarm = Swarm([triage, billing], "triage", model=model, observers=[_tracing(exporter)])

    await swarm.run("refund")

    span = _attributes(exporter.get_finished_spans(), "execute_tool escalate_to_billing")
    assert span["gen_ai.tool.name"] == "escalate_to_billing"
    assert span["gen_ai.transfer.mode"] == "pass_control"
    assert span["gen_ai.transfer.target.name"] == "billing"
    assert span["gen_ai.agent.name"] == "triage"


@tool(needs_approval=True)
def refund(amount: int) -> str:
    """Refund money."""
    return f"refunded {amount}"


async def test_a_pause_for_approval_shows_on_the_tool_span_and_its_resolution_on_resume(
    exporter: InMemorySpanExporter,
) -> None:
    """The paused run's refund span is pending (attribute and event); the resumed one approved."""
    swarm = Swarm(
        [Agent(name="billing", tools=[refund])],
        "billing",
        model=ScriptedModel(tool_call("refund", amount=30), text("Refunded.")),
        journal=InMemoryJournal(),
        observers=[_tracing(exporter)],
    )

    await swarm.run("refund me", session_id="s-9")
    await swarm.resume("s-9", decision=approve())

    paused = _span(exporter.get_finished_spans(), "execute_tool refund", 0)
    resumed = _span(exporter.get_finished_spans(), "execute_tool refund", 1)
    assert (paused.attributes or {})["swarmkit.interrupt.status"] == "pending"
    assert [(e.name, dict(e.attributes or {})) for e in paused.events] == [
        (
            "swarmkit.interrupt",
            {
                "swarmkit.interrupt.kind": "tool",
                "swarmkit.interrupt.status": "pending",
                "gen_ai.tool.name": "refund",
            },
        )
    ]
    assert (resumed.attributes or {})["swarmkit.interrupt.status"] == "approve"
    assert (resumed.attributes or {})["swarmkit.decision.kind"] == "approve"


async def test_eval_grades_are_evaluation_result_events_parented_to_the_trial_s_run(
    exporter: InMemorySpanExporter,
) -> None:
    """Each grader's verdict is a gen_ai.evaluation.result event in the graded run's trace."""
    logs = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    tracing = _tracing(exporter, logger_provider=logger_provider)
    task = next(t for t in tasks().tasks if t.id == "refund-then-ticket")
    report = await evaluate(
        TaskSet(domain=DOMAIN, tasks=(task,)), build_swarm().with_observers(tracing)
    )

    emitted = tracing.record_evaluations(report)

    [trial] = report.trials
    records = [log.log_record for log in logs.get_finished_logs()]
    assert emitted == len(records) == len(trial.grades) > 0
    run = next(
        s
        for s in exporter.get_finished_spans()
        if s.name.startswith("invoke_workflow")
        and (s.attributes or {})["swarmkit.session_id"] == trial.sessions[-1]
    )
    by_name = {str((r.attributes or {})["gen_ai.evaluation.name"]): r for r in records}
    assert set(by_name) == {grade.grader for grade in trial.grades}
    for grade in trial.grades:
        record = by_name[grade.grader]
        assert record.event_name == "gen_ai.evaluation.result"
        assert (record.trace_id, record.span_id) == (run.context.trace_id, run.context.span_id)
        attributes = dict(record.attributes or {})
        assert attributes["gen_ai.evaluation.score.value"] == grade.score
        assert attributes["gen_ai.evaluation.score.label"] == ("pass" if grade.passed else "fail")
        assert attributes.get("gen_ai.evaluation.explanation", "") == grade.detail
    assert by_name["database"].attributes["gen_ai.evaluation.score.label"] == "fail"  # type: ignore[index]


def test_bad_tracing_arguments_are_configuration_errors() -> None:
    """A non-bool capture_content, an empty workflow name, or no eval results say what to pass."""
    with pytest.raises(ConfigurationError, match="capture_content"):
        RunTracing(capture_content="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="workflow_name"):
        RunTracing(workflow_name="")
    with pytest.raises(ConfigurationError, match="takes an EvalReport"):
        RunTracing().record_evaluations("report")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="takes an EvalReport"):
        RunTracing().record_evaluations([])


async def test_a_tool_s_goto_is_a_transfer_span_whose_reason_is_the_tool(
    exporter: InMemorySpanExporter,
) -> None:
    """A handoff a tool decided (ToolResult(goto=...)) is its own transfer span, reason tool."""

    @tool
    def escalate() -> ToolResult:
        """Escalate to billing."""
        return ToolResult(output="escalated", goto="billing")

    swarm = Swarm(
        [Agent(name="triage", tools=[escalate]), Agent(name="billing", handoffs=[])],
        "triage",
        model=ScriptedModel(tool_call("escalate"), text("Refunded.")),
        observers=[_tracing(exporter)],
    )

    await swarm.run("refund")

    span = _attributes(exporter.get_finished_spans(), "transfer billing")
    assert span["swarmkit.transfer.reason"] == "tool"
    assert span["gen_ai.transfer.mode"] == "pass_control"
    assert "gen_ai.tool.name" not in span
