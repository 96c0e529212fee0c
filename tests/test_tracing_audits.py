"""A rule audit is a GenAI evaluation result in the audited run's trace, told once."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from swarmkit import Agent, HandoffGraph, Swarm
from swarmkit.events import RuleEvaluated
from swarmkit.journal import InMemoryJournal
from swarmkit.shadow import RuleAudit
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, transfer
from swarmkit.tracing import RunTracing

CONDITION = "category == 'billing'"


class _Traced:
    """A tracer writing spans and evaluation events to memory."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.logs = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        logger_provider = LoggerProvider()
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs))
        self.tracing = RunTracing(tracer_provider=tracer_provider, logger_provider=logger_provider)

    def evaluations(self) -> list[Any]:
        return [log.log_record for log in self.logs.get_finished_logs()]


def _swarm(journal: InMemoryJournal, tracing: RunTracing, share: float = 1.0) -> Swarm:
    """Triage's active billing rule, each decision audited (by default)."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", CONDITION)
    agents = [Agent(name=name) for name in ("triage", "billing", "sales")]
    return Swarm(
        agents,
        "triage",
        graph=graph,
        journal=journal,
        model=ScriptedModel(),
        audit=RuleAudit(share=share),
        observers=[tracing],
    )


@pytest.mark.parametrize(
    ("said", "score", "label", "explanation"),
    [
        ("billing", 1.0, "agrees", "the model chose 'billing' where the rule routes to 'billing'"),
        ("sales", 0.0, "disagrees", "the model chose 'sales' where the rule routes to 'billing'"),
    ],
)
async def test_an_audit_is_an_evaluation_result_parented_to_the_run(
    said: str, score: float, label: str, explanation: str
) -> None:
    """The event carries the audit; the evaluation record names the rule, the score, the
    label and why, in the run span's trace and span."""
    traced = _Traced()
    swarm = _swarm(InMemoryJournal(), traced.tracing)
    model = ScriptedModel(transfer(said), text("Done."))
    events = [
        e
        async for e in swarm.with_model(model).stream(
            "help", context={"category": "billing"}, session_id="s-1"
        )
    ]

    [rule] = [e for e in events if isinstance(e, RuleEvaluated)]
    assert (rule.audited, rule.audit_choice, rule.audit_replayed) == (True, said, False)
    [record] = traced.evaluations()
    run = next(s for s in traced.spans.get_finished_spans() if s.name == "invoke_workflow triage")
    assert record.event_name == "gen_ai.evaluation.result"
    assert (record.trace_id, record.span_id) == (run.context.trace_id, run.context.span_id)
    assert dict(record.attributes or {}) == {
        "gen_ai.evaluation.name": "swarmkit.rule_audit",
        "gen_ai.evaluation.score.value": score,
        "gen_ai.evaluation.score.label": label,
        "gen_ai.evaluation.explanation": explanation,
        "gen_ai.agent.name": "triage",
        "swarmkit.rule.target": "billing",
        "swarmkit.rule.condition": CONDITION,
        "gen_ai.conversation.id": "s-1",
        "swarmkit.session_id": "s-1",
    }


def _capture(seen: list[Any]) -> Any:
    """An observer that keeps every event of the runs it watches."""

    async def observe(events: AsyncGenerator[Any, None]) -> AsyncGenerator[Any, None]:
        async for event in events:
            seen.append(event)
            yield event

    return observe


async def test_a_replay_reads_the_audit_back_and_tells_no_second_result() -> None:
    """Replayed, the event says the answer came from the journal; no evaluation is emitted."""
    journal = InMemoryJournal()
    live = _Traced()
    model = ScriptedModel(transfer("sales"), text("Done."))
    await (
        _swarm(journal, live.tracing)
        .with_model(model)
        .run("help", context={"category": "billing"}, session_id="s-2")
    )
    again, seen = _Traced(), list[Any]()
    replaying = _swarm(journal, again.tracing).with_model(NeverCalledModel())
    result = await replaying.with_observers(_capture(seen)).replay("s-2")

    assert result.trail == ("triage", "billing")
    [rule] = [e for e in seen if isinstance(e, RuleEvaluated)]
    assert (rule.audited, rule.audit_choice, rule.audit_replayed) == (True, "sales", True)
    assert len(live.evaluations()) == 1
    assert again.evaluations() == []


async def test_a_decision_not_sampled_is_no_audit() -> None:
    """Share 0: the event says nothing was audited, and nothing is emitted."""
    traced = _Traced()
    swarm = _swarm(InMemoryJournal(), traced.tracing, share=0.0)
    model = ScriptedModel(text("Done."))
    events = [
        e async for e in swarm.with_model(model).stream("help", context={"category": "billing"})
    ]

    [rule] = [e for e in events if isinstance(e, RuleEvaluated)]
    assert (rule.audited, rule.audit_choice, rule.audit_replayed) == (False, None, False)
    assert traced.evaluations() == []
