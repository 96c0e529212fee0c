"""Traces show a call's reservation on its model span and a budget stop on the run's span."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from swarmkit import Agent, Budget, Ledger, Swarm
from swarmkit.models import Usage
from swarmkit.testing import ScriptedModel, text, tool_call
from swarmkit.tools import tool
from swarmkit.tracing import RunTracing

NOON = 1_795_000_000.0


@tool
def look() -> str:
    """Look around."""
    return "seen"


async def test_the_reservation_is_on_the_model_span_and_the_stop_on_the_run_span(
    tmp_path: Path,
) -> None:
    """The first call's span names its hold; the run's span names the budget that stopped it."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ledger = Ledger(
        tmp_path / "spend.db",
        [Budget(name="calls", limit=1, unit="calls")],
        estimate=lambda _: Usage(prompt_tokens=30, completion_tokens=10, total_tokens=40),
        clock=lambda: NOON,
    )
    swarm = Swarm(
        [Agent(name="a", tools=[look])],
        "a",
        model=ScriptedModel(tool_call("look"), text("never")),
        ledger=ledger,
        observers=[RunTracing(tracer_provider=provider)],
    )

    result = await swarm.run("x")

    assert result.stop_reason == "budget"
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name.startswith("chat")]
    assert len(chats) == 1
    attributes = dict(chats[0].attributes or {})
    assert attributes["swarmkit.spend.estimate_tokens"] == 40
    assert attributes["swarmkit.spend.budgets"] == ("calls||2026-11-18",)
    assert len(str(attributes["swarmkit.spend.reservation"])) == 32
    run = [s for s in spans if (s.attributes or {}).get("swarmkit.stop_reason") == "budget"]
    assert dict(run[0].attributes or {})["swarmkit.spend.budget"] == "calls||2026-11-18"
    assert dict(run[0].attributes or {})["swarmkit.spend.limit"] == 1
