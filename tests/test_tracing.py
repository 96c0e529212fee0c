"""OpenTelemetry spans from a run's events, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from swarmkit import (
    Agent,
    ConfigurationError,
    HandoffGraph,
    ModelError,
    ReplayDivergenceError,
    Swarm,
    approve,
    tool,
)
from swarmkit.journal import InMemoryJournal
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, text, tool_call, transfer
from swarmkit.tracing import RunTracing, traced

Tree = tuple[str, tuple[Any, ...]]


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    """Spans of the runs under test, kept in memory."""
    return InMemorySpanExporter()


def _tracing(exporter: InMemorySpanExporter, **options: Any) -> RunTracing:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return RunTracing(tracer_provider=provider, **options)


def _tree(spans: Sequence[ReadableSpan]) -> list[Tree]:
    """The spans as (name, children) nested by parent, children in start order."""
    by_parent: dict[int | None, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        parent = span.parent.span_id if span.parent is not None else None
        by_parent.setdefault(parent, []).append(span)

    def build(parent: int | None) -> list[Tree]:
        children = by_parent.get(parent, [])
        return [(s.name, tuple(build(s.context.span_id))) for s in children]

    return build(None)


def _named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


@tool
def lookup(invoice_id: str) -> str:
    """Look up an invoice."""
    return f"{invoice_id}: 30 EUR"


def _llm_swarm(observer: Any, journal: InMemoryJournal | None = None) -> Swarm:
    model = ScriptedModel(
        tool_call("lookup", invoice_id="A-1"), transfer("billing"), text("Refunded.")
    )
    triage = Agent(name="triage", tools=[lookup])
    return Swarm(
        [triage, Agent(name="billing")],
        "triage",
        model=model,
        observers=[observer],
        journal=journal,
        session_ids=lambda: "s-1",
    )


LLM_TREE = [
    (
        "invoke_workflow triage",
        (
            (
                "invoke_agent triage",
                (
                    ("chat scripted", ()),
                    ("execute_tool lookup", ()),
                    ("chat scripted", ()),
                    ("execute_tool transfer_to_billing", ()),
                ),
            ),
            ("invoke_agent billing", (("chat scripted", ()),)),
        ),
    )
]


async def test_a_rule_routed_run_has_a_rule_span_and_a_transfer_span(
    exporter: InMemorySpanExporter,
) -> None:
    """The rule and the transfer it caused (a span of its own, no tool, the rule as its reason)
    sit in triage's span; billing's model call in its own."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="topic == 'billing'")
    swarm = Swarm(
        [Agent(name="triage"), Agent(name="billing")],
        "triage",
        model=ScriptedModel(text("Refunded.")),
        graph=graph,
        observers=[_tracing(exporter)],
    )

    result = await swarm.run("refund", context={"topic": "billing"})

    spans = exporter.get_finished_spans()
    assert _tree(spans) == [
        (
            "invoke_workflow triage",
            (
                (
                    "invoke_agent triage",
                    (("swarmkit.rule", ()), ("transfer billing", ())),
                ),
                ("invoke_agent billing", (("chat scripted", ()),)),
            ),
        )
    ]
    rule = _named(spans, "swarmkit.rule")[0].attributes or {}
    assert rule["swarmkit.rule.condition"] == "topic == 'billing'"
    assert rule["swarmkit.rule.target"] == "billing" and rule["swarmkit.rule.matched"] is True
    assert dict(_named(spans, "transfer billing")[0].attributes or {}) == {
        "gen_ai.transfer.mode": "pass_control",
        "gen_ai.transfer.target.name": "billing",
        "gen_ai.agent.name": "triage",
        "swarmkit.transfer.reason": "topic == 'billing'",
        "swarmkit.decided_by": "rule",
        "swarmkit.handoff.number": 1,
        "swarmkit.rule.condition": "topic == 'billing'",
        "gen_ai.conversation.id": result.session_id,
        "swarmkit.session_id": result.session_id,
    }
    run = _named(spans, "invoke_workflow triage")[0].attributes or {}
    assert run["swarmkit.session_id"] == result.session_id
    assert run["swarmkit.stop_reason"] == "final_output"
    assert run["swarmkit.replay"] is False


async def test_an_llm_handoff_with_a_tool_nests_model_tool_and_handoff_spans(
    exporter: InMemorySpanExporter,
) -> None:
    """Model calls and the tool call are GenAI spans in triage's turn; no content by default."""
    await _llm_swarm(_tracing(exporter)).run("refund A-1")

    spans = exporter.get_finished_spans()
    assert _tree(spans) == LLM_TREE
    chat = _named(spans, "chat scripted")[0].attributes or {}
    assert chat["gen_ai.operation.name"] == "chat"
    assert chat["gen_ai.request.model"] == chat["gen_ai.response.model"] == "scripted"
    assert (chat["gen_ai.usage.input_tokens"], chat["gen_ai.usage.output_tokens"]) == (10, 5)
    assert chat["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert "gen_ai.output.messages" not in chat
    called = _named(spans, "execute_tool lookup")[0].attributes or {}
    assert called["gen_ai.operation.name"] == "execute_tool"
    assert called["gen_ai.tool.call.id"] == "call_1"
    assert "gen_ai.tool.call.arguments" not in called
    agent = _named(spans, "invoke_agent billing")[0].attributes or {}
    assert agent["gen_ai.agent.name"] == "billing"
    assert agent["swarmkit.sub_session_id"] == "s-1__swarm_billing_1"
    handoff = _named(spans, "execute_tool transfer_to_billing")[0].attributes or {}
    assert handoff["swarmkit.decided_by"] == "llm"
    assert handoff["gen_ai.transfer.target.name"] == "billing"
    assert all(s.status.status_code is StatusCode.UNSET for s in spans)
    assert {(s.attributes or {})["swarmkit.session_id"] for s in spans} == {"s-1"}


class _FailingModel:
    name = "gpt-test"
    provider = "openai"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("503 from the API after 3 attempts", model=self.name, attempts=3)


async def test_a_failed_model_call_sets_the_error_status(exporter: InMemorySpanExporter) -> None:
    """The chat span and the run span fail with the error's type; the run ends with 'error'."""
    swarm = Swarm([Agent(name="a")], "a", model=_FailingModel(), observers=[_tracing(exporter)])

    result = await swarm.run("hi")

    spans = exporter.get_finished_spans()
    assert result.stop_reason == "error"
    assert _tree(spans) == [
        ("invoke_workflow a", (("invoke_agent a", (("chat gpt-test", ()),)),)),
    ]
    chat = _named(spans, "chat gpt-test")[0]
    assert chat.status.status_code is StatusCode.ERROR
    assert "503 from the API" in (chat.status.description or "")
    assert (chat.attributes or {})["error.type"] == "ModelError"
    assert (chat.attributes or {})["gen_ai.provider.name"] == "openai"
    run = _named(spans, "invoke_workflow a")[0]
    assert run.status.status_code is StatusCode.ERROR
    assert (run.attributes or {})["swarmkit.stop_reason"] == "error"


async def test_a_replay_produces_the_same_span_tree_marked_as_a_replay(
    exporter: InMemorySpanExporter,
) -> None:
    """A replay gives the recorded tree again, marked swarmkit.replay, counting no usage twice."""
    journal = InMemoryJournal()
    swarm = _llm_swarm(_tracing(exporter), journal)
    recorded = await swarm.run("refund A-1")
    first = _named(exporter.get_finished_spans(), "invoke_workflow triage")[0]
    exporter.clear()

    await swarm.replay(recorded.session_id)

    spans = exporter.get_finished_spans()
    assert _tree(spans) == LLM_TREE
    assert all((s.attributes or {})["swarmkit.replay"] is True for s in spans)
    chats = [dict(s.attributes or {}) for s in _named(spans, "chat scripted")]
    assert [chat.get("swarmkit.replayed") for chat in chats] == [True, True, True]
    assert not any("gen_ai.usage.input_tokens" in chat for chat in chats)
    run = _named(spans, "invoke_workflow triage")[0]
    assert [link.context for link in run.links] == [first.context]


async def test_a_replay_that_diverges_fails_the_open_spans(exporter: InMemorySpanExporter) -> None:
    """The divergence propagates to the caller; the run span ends with its error status."""
    journal = InMemoryJournal()
    recorded = await _llm_swarm(_tracing(exporter), journal).run("refund A-1")
    exporter.clear()
    changed = Swarm(
        [Agent(name="triage", instructions="Changed.", tools=[lookup]), Agent(name="billing")],
        "triage",
        model=ScriptedModel(),
        observers=[_tracing(exporter)],
        journal=journal,
    )

    with pytest.raises(ReplayDivergenceError):
        await changed.replay(recorded.session_id)

    run = _named(exporter.get_finished_spans(), "invoke_workflow triage")[0]
    assert run.status.status_code is StatusCode.ERROR
    assert (run.attributes or {})["error.type"] == "ReplayDivergenceError"
    assert trace.get_current_span() is trace.INVALID_SPAN


async def test_content_is_recorded_only_on_opt_in_with_secret_keys_redacted(
    exporter: InMemorySpanExporter,
) -> None:
    """capture_content adds prompt, answer and tool arguments; an api_key value never shows."""

    @tool
    def call_api(city: str, api_key: str) -> dict[str, str]:
        """Call an API."""
        return {"city": city, "accessToken": "t-123"}

    model = ScriptedModel(tool_call("call_api", city="Paris", api_key="sk-live-1"), text("Done."))
    swarm = Swarm(
        [Agent(name="a", tools=[call_api])],
        "a",
        model=model,
        observers=[_tracing(exporter, capture_content=True)],
    )

    await swarm.run("weather in Paris")

    spans = exporter.get_finished_spans()
    called = _named(spans, "execute_tool call_api")[0].attributes or {}
    arguments = json.loads(str(called["gen_ai.tool.call.arguments"]))
    assert arguments == {"city": "Paris", "api_key": "[redacted]"}
    assert json.loads(str(called["gen_ai.tool.call.result"])) == {
        "city": "Paris",
        "accessToken": "[redacted]",
    }
    run = _named(spans, "invoke_workflow a")[0].attributes or {}
    prompt = [{"role": "user", "parts": [{"type": "text", "content": "weather in Paris"}]}]
    assert json.loads(str(run["gen_ai.input.messages"])) == prompt
    done = {"role": "assistant", "parts": [{"type": "text", "content": "Done."}]}
    assert json.loads(str(run["gen_ai.output.messages"])) == [{**done, "finish_reason": "stop"}]
    chats = _named(spans, "chat scripted")
    assert json.loads(str((chats[1].attributes or {})["gen_ai.output.messages"])) == [
        {**done, "finish_reason": "stop"}
    ]
    assert not any("sk-live-1" in str(s.attributes) for s in spans)


def test_secret_words_match_whole_words_of_a_key() -> None:
    """api_token, accessToken and X-Api-Key are secret; prompt_tokens and monkey are not."""
    tracing = RunTracing()

    secret = [tracing.is_secret(k) for k in ("api_token", "accessToken", "X-Api-Key", "passwd")]
    plain = [tracing.is_secret(k) for k in ("prompt_tokens", "max_tokens", "monkey", "keyboard")]

    assert secret == [True, True, True, True]
    assert plain == [False, False, False, False]


async def test_the_tool_span_is_current_while_the_tool_runs(
    exporter: InMemorySpanExporter,
) -> None:
    """Spans a tool's own library makes (the mcp SDK's, an HTTP client's) nest under it."""
    seen: list[int] = []

    @tool
    def probe() -> str:
        """Report the current span."""
        seen.append(trace.get_current_span().get_span_context().span_id)
        return "ok"

    model = ScriptedModel(tool_call("probe"), text("done"))
    swarm = Swarm(
        [Agent(name="a", tools=[probe])], "a", model=model, observers=[_tracing(exporter)]
    )

    await swarm.run("go")

    tool_span = _named(exporter.get_finished_spans(), "execute_tool probe")[0]
    assert seen == [tool_span.context.span_id]
    assert trace.get_current_span() is trace.INVALID_SPAN


async def test_tracing_is_off_without_a_tracer_provider() -> None:
    """With no provider configured, traced passes the events on and makes no span current."""
    seen: list[object] = []

    @tool
    def probe() -> str:
        """Report the current span."""
        seen.append(trace.get_current_span())
        return "ok"

    model = ScriptedModel(tool_call("probe"), text("done"))
    swarm = Swarm([Agent(name="a", tools=[probe])], "a", model=model, observers=[traced])

    events = [event.kind async for event in swarm.stream("go")]

    assert events[0] == "run_started" and events[-1] == "run_finished"
    assert seen == [trace.INVALID_SPAN]


def test_observers_must_be_callables() -> None:
    """A non-callable observer is a configuration error at construction."""
    with pytest.raises(ConfigurationError, match="observer"):
        Swarm([Agent(name="a")], "a", model=ScriptedModel(), observers=["traced"])  # type: ignore[list-item]


class _BrokenProcessor(SimpleSpanProcessor):
    """A span processor that fails on every span after the first."""

    def __init__(self) -> None:
        super().__init__(InMemorySpanExporter())
        self.started = 0

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.started += 1
        if self.started > 1:
            raise RuntimeError("the tracing backend is broken")


async def test_a_tracing_failure_never_fails_the_run() -> None:
    """A span processor that raises stops the run's tracing; the run itself finishes."""
    provider = TracerProvider()
    provider.add_span_processor(_BrokenProcessor())
    swarm = _llm_swarm(RunTracing(tracer_provider=provider))

    result = await swarm.run("refund A-1")

    assert result.stop_reason == "final_output" and result.final_output == "Refunded."
    assert trace.get_current_span() is trace.INVALID_SPAN


class _PlainModel:
    """A model that declares no provider."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        return await ScriptedModel(text("hello")).respond(request)


async def test_every_chat_and_agent_span_names_a_provider(exporter: InMemorySpanExporter) -> None:
    """gen_ai.provider.name is Required: a scripted model names its own, an undeclared _OTHER."""
    scripted = Swarm(
        [Agent(name="a")], "a", model=ScriptedModel(text("hi")), observers=[_tracing(exporter)]
    )
    plain = Swarm([Agent(name="b")], "b", model=_PlainModel(), observers=[_tracing(exporter)])

    await scripted.run("hi")
    await plain.run("hi")

    provider = {
        span.name: (span.attributes or {}).get("gen_ai.provider.name")
        for span in exporter.get_finished_spans()
        if span.name.startswith(("chat", "invoke_agent"))
    }
    assert provider == {
        "chat scripted": "swarmkit.scripted",
        "invoke_agent a": "swarmkit.scripted",
        "chat": "_OTHER",
        "invoke_agent b": "_OTHER",
    }


@pytest.mark.parametrize(
    ("base_url", "provider"),
    [
        (None, "openai"),
        ("https://api.openai.com/v1", "openai"),
        ("https://my-team.openai.azure.com/openai/v1", "azure.ai.openai"),
        ("https://api.groq.com/openai/v1", "groq"),
        ("https://api.mistral.ai/v1", "mistral_ai"),
        ("https://generativelanguage.googleapis.com/v1beta/openai/", "gcp.gemini"),
        ("http://127.0.0.1:8000/v1", "openai"),
    ],
)
def test_the_openai_adapters_name_the_provider_their_base_url_serves(
    base_url: str | None, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compatible server the conventions list is named by its host; others speak openai."""
    from swarmkit.models import OpenAIModel, OpenAIResponsesModel  # noqa: PLC0415

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert OpenAIModel("m", base_url=base_url).provider == provider
    assert OpenAIResponsesModel("m", base_url=base_url).provider == provider


async def test_a_later_turn_s_run_span_names_the_next_turn_decision(
    exporter: InMemorySpanExporter,
) -> None:
    """The run span of turn 2 says which policy chose which agent."""
    model = ScriptedModel(transfer("billing"), text("refunded"), text("triage again"))
    swarm = Swarm(
        [Agent(name="triage", handoffs=["billing"]), Agent(name="billing", handoffs=[])],
        "triage",
        model=model,
        next_turn="entry",
        observers=[_tracing(exporter)],
    )
    first = await swarm.run("Refund me")

    await swarm.run("Hello", history=first)

    runs = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_workflow")]
    attributes = dict(runs[-1].attributes or {})
    assert attributes["swarmkit.next_turn.policy"] == "entry"
    assert attributes["swarmkit.next_turn.agent"] == "triage"
    assert attributes["swarmkit.next_turn.last_agent"] == "billing"
    assert "swarmkit.next_turn.policy" not in dict(runs[0].attributes or {})


def _usage(spans: Sequence[ReadableSpan], operation: str = "chat") -> tuple[int, int]:
    """Tokens summed over the spans of one operation (model calls, or agents' stints)."""
    attributes = [
        s.attributes or {}
        for s in spans
        if (s.attributes or {}).get("gen_ai.operation.name") == operation
    ]
    return (
        sum(int(str(a.get("gen_ai.usage.input_tokens", 0))) for a in attributes),
        sum(int(str(a.get("gen_ai.usage.output_tokens", 0))) for a in attributes),
    )


async def test_a_resumed_run_links_to_the_paused_one_and_counts_no_usage_twice(
    exporter: InMemorySpanExporter,
) -> None:
    """Usage summed over both traces' model calls (or agents) equals the journal's; the resumed
    run span links back."""

    @tool(needs_approval=True)
    def refund(amount: int) -> str:
        """Refund money."""
        return f"refunded {amount}"

    journal = InMemoryJournal()
    model = ScriptedModel(tool_call("refund", amount=30), text("Refunded."))
    swarm = Swarm(
        [Agent(name="billing", tools=[refund])],
        "billing",
        model=model,
        journal=journal,
        observers=[_tracing(exporter)],
    )
    paused = await swarm.run("refund me", session_id="s-9")
    await swarm.resume("s-9", decision=approve())

    spans = exporter.get_finished_spans()
    runs = _named(spans, "invoke_workflow billing")
    records = [r for r in await journal.read("s-9") if r.kind == "model_call"]
    journaled = [r.data["response"]["usage"] for r in records]
    assert paused.stop_reason == "interrupted" and len(journaled) == 2
    expected = (
        sum(u["prompt_tokens"] for u in journaled),
        sum(u["completion_tokens"] for u in journaled),
    )
    assert _usage(spans) == _usage(spans, "invoke_agent") == expected
    assert len({s.context.trace_id for s in spans}) == 2
    assert [link.context for link in runs[1].links] == [runs[0].context]


async def test_every_span_of_a_conversation_s_turns_carries_the_conversation_id(
    exporter: InMemorySpanExporter,
) -> None:
    """A continued conversation's second turn is its own session, but the same conversation."""
    swarm = Swarm(
        [Agent(name="a")],
        "a",
        model=ScriptedModel(text("one"), text("two")),
        journal=InMemoryJournal(),
        observers=[_tracing(exporter)],
    )

    await swarm.run("first", session_id="chat-7")
    second = await swarm.run("second", session_id="chat-7", continue_session=True)

    spans = exporter.get_finished_spans()
    assert second.session_id == "chat-7__turn_2"
    assert {(s.attributes or {})["gen_ai.conversation.id"] for s in spans} == {"chat-7"}
    sessions = {(s.attributes or {})["swarmkit.session_id"] for s in spans}
    assert sessions == {"chat-7", "chat-7__turn_2"}


async def test_the_run_span_is_an_invoke_workflow_span_named_by_the_tracer(
    exporter: InMemorySpanExporter,
) -> None:
    """workflow_name names the workflow; the run span has exactly the workflow attributes."""
    swarm = Swarm(
        [Agent(name="a")],
        "a",
        model=ScriptedModel(text("hi")),
        observers=[_tracing(exporter, workflow_name="support")],
        session_ids=lambda: "s-2",
    )

    await swarm.run("hello")

    run = _named(exporter.get_finished_spans(), "invoke_workflow support")[0]
    assert dict(run.attributes or {}) == {
        "gen_ai.operation.name": "invoke_workflow",
        "gen_ai.workflow.name": "support",
        "gen_ai.conversation.id": "s-2",
        "swarmkit.session_id": "s-2",
        "swarmkit.entry_agent": "a",
        "swarmkit.replay": False,
        "swarmkit.stop_reason": "final_output",
        "swarmkit.final_agent": "a",
        "swarmkit.usage.input_tokens": 10,
        "swarmkit.usage.output_tokens": 5,
    }


async def test_a_model_decided_handoff_is_a_transfer_tool_span_that_passes_control(
    exporter: InMemorySpanExporter,
) -> None:
    """The transfer_to_billing span has the tool and transfer attributes, exactly."""
    await _llm_swarm(_tracing(exporter)).run("refund A-1")

    span = _named(exporter.get_finished_spans(), "execute_tool transfer_to_billing")[0]
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "transfer_to_billing",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_2",
        "gen_ai.tool.description": "Hand off to billing.",
        "gen_ai.agent.name": "triage",
        "gen_ai.transfer.mode": "pass_control",
        "gen_ai.transfer.target.name": "billing",
        "swarmkit.decided_by": "llm",
        "swarmkit.handoff.number": 1,
        "gen_ai.conversation.id": "s-1",
        "swarmkit.session_id": "s-1",
    }


async def test_a_delegation_is_a_transfer_that_returns_to_the_caller(
    exporter: InMemorySpanExporter,
) -> None:
    """The ask_<agent> span names its target; the sub-run shares the caller's conversation."""
    helper = Agent(name="helper", handoffs=[], model=ScriptedModel(text("42")))
    boss = Agent(
        name="boss",
        tools=[helper.as_tool()],
        handoffs=[],
        model=ScriptedModel(tool_call("ask_helper", input="what?"), text("It is 42.")),
    )
    swarm = Swarm([boss, helper], "boss", observers=[_tracing(exporter)], session_ids=lambda: "s-3")

    await swarm.run("ask")

    spans = exporter.get_finished_spans()
    asked = dict(_named(spans, "execute_tool ask_helper")[0].attributes or {})
    assert asked == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "ask_helper",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Ask agent 'helper' to do a task; returns its answer.",
        "gen_ai.agent.name": "boss",
        "gen_ai.transfer.mode": "return_to_caller",
        "gen_ai.transfer.target.name": "helper",
        "gen_ai.conversation.id": "s-3",
        "swarmkit.session_id": "s-3",
    }
    assert {(s.attributes or {})["gen_ai.conversation.id"] for s in spans} == {"s-3"}
    assert _named(spans, "invoke_workflow helper")
