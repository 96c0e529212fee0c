"""Half of a traced session in its own interpreter: the run that pauses, or its resume.

``tests/test_tracing_resume.py`` runs ``python -m tests.tracing_resume_app pause JOURNAL`` and
then ``... resume JOURNAL`` as two processes sharing one SQLite journal; each prints its
finished spans as JSON (name, ids, parent, links, attributes).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from swarmkit import Agent, Swarm, approve, tool
from swarmkit.journal import SQLiteJournal
from swarmkit.testing import ScriptedModel, text, tool_call
from swarmkit.tracing import RunTracing

SESSION = "refund-1"


@tool(needs_approval=True)
def refund(amount: int) -> str:
    """Refund money."""
    return f"refunded {amount}"


async def main(phase: str, path: str) -> None:
    """Pause the session for approval, or resume it approved; print this process's spans."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # Each phase scripts only the calls it makes live (a resume replays the first one).
    script = tool_call("refund", amount=30) if phase == "pause" else text("Refunded.")
    with SQLiteJournal(path) as journal:
        swarm = Swarm(
            [Agent(name="billing", tools=[refund])],
            "billing",
            model=ScriptedModel(script),
            journal=journal,
            observers=[RunTracing(tracer_provider=provider)],
        )
        if phase == "pause":
            await swarm.run("refund me", session_id=SESSION)
        else:
            await swarm.resume(SESSION, decision=approve())
    print(json.dumps([_shown(span) for span in exporter.get_finished_spans()]))


def _shown(span: ReadableSpan) -> dict[str, Any]:
    assert span.context is not None
    return {
        "name": span.name,
        "trace_id": span.context.trace_id,
        "span_id": span.context.span_id,
        "parent": span.parent.span_id if span.parent else None,
        "links": [[link.context.trace_id, link.context.span_id] for link in span.links],
        "attributes": dict(span.attributes or {}),
    }


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
