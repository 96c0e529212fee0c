"""OpenTelemetry traces of a swarm: one span tree per run, and the same tree for its replay.

A known category goes to billing by rule (no triage model call); anything else is decided by
triage's model, which looks the order up with a tool first. ``observers=[tracing]`` turns
every run into spans; here they are kept in memory and printed as a tree. In an application,
configure the tracer provider once with the exporter of your tracing backend (OTLP, say) and
pass ``observers=[traced]``: swarmkit records nothing while no provider is configured, and
never sends anything anywhere itself.

Run it offline (a scripted model plays the LLM):   python examples/tracing.py
or live:   OPENAI_API_KEY=sk-... python examples/tracing.py
Needs the extra: pip install 'swarmkit-agents[otel]'.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from swarmkit import Agent, HandoffGraph, Model, OpenAIModel, Swarm, tool
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import ScriptedModel, text, tool_call, transfer
from swarmkit.tracing import RunTracing

SHOWN = (
    "gen_ai.request.model",
    "gen_ai.usage.input_tokens",
    "gen_ai.transfer.mode",
    "gen_ai.tool.call.id",
    "swarmkit.decided_by",
    "swarmkit.rule.condition",
    "swarmkit.stop_reason",
    "swarmkit.replay",
)


@tool
def find_order(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: shipped yesterday, arrives Friday"


def build_swarm(model: Model, tracing: RunTracing, journal: InMemoryJournal) -> Swarm:
    """Triage with a rule for billing, and a model that decides the rest."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="category == 'billing'")
    triage = Agent(name="triage", instructions="Route the ticket.", tools=[find_order])
    shipping = Agent(name="shipping", instructions="Answer delivery questions.", handoffs=[])
    billing = Agent(name="billing", instructions="Answer billing questions.", handoffs=[])
    return Swarm(
        [triage, shipping, billing],
        "triage",
        model=model,
        graph=graph,
        journal=journal,
        observers=[tracing],
    )


def offline_model() -> ScriptedModel:
    """The turns a real model would take: billing's answer, then the shipping ticket."""
    return ScriptedModel(
        text("Your refund is on its way.", for_agent="billing"),
        tool_call("find_order", order_id="B-77", for_agent="triage"),
        transfer("shipping", for_agent="triage"),
        text("Order B-77 arrives on Friday.", for_agent="shipping"),
    )


def pick_model() -> Model:
    """The real API when OPENAI_API_KEY is set, else the scripted stand-in."""
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAIModel(os.environ.get("SWARMKIT_MODEL", "gpt-4o-mini"))
    return offline_model()


def draw(spans: Sequence[ReadableSpan]) -> list[str]:
    """The spans as indented lines, children under their parent, in start order."""
    ordered = sorted(spans, key=lambda span: span.start_time or 0)
    lines: list[str] = []

    def add(parent: int | None, depth: int) -> None:
        for span in ordered:
            parent_id = span.parent.span_id if span.parent is not None else None
            if parent_id != parent:
                continue
            attributes = span.attributes or {}
            shown = ", ".join(
                f"{k.split('.')[-1]}={attributes[k]!s}" for k in SHOWN if k in attributes
            )
            lines.append(f"{'  ' * depth}{span.name}" + (f"  [{shown}]" if shown else ""))
            add(span.context.span_id, depth + 1)

    add(None, 0)
    return lines


async def main() -> dict[str, list[str]]:
    """Run two tickets and replay the second; print and return each run's span tree."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()  # an application would add an OTLP exporter here
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    journal = InMemoryJournal()
    swarm = build_swarm(pick_model(), RunTracing(tracer_provider=provider), journal)
    trees: dict[str, list[str]] = {}
    await swarm.run("I was charged twice.", context={"category": "billing"})
    trees["rule-routed"] = draw(exporter.get_finished_spans())
    exporter.clear()
    shipping = await swarm.run("Where is order B-77?", context={"category": "delivery"})
    trees["llm-decided"] = draw(exporter.get_finished_spans())
    exporter.clear()
    await swarm.replay(shipping.session_id)
    trees["replay"] = draw(exporter.get_finished_spans())
    for title, lines in trees.items():
        print(f"== {title}\n" + "\n".join(lines))
    return trees


if __name__ == "__main__":
    asyncio.run(main())
