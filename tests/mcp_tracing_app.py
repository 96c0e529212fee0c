"""Runs one MCP tool call under tracing with a global tracer provider, in its own interpreter.

A global provider cannot be unset, so ``tests/test_mcp.py`` runs this as a subprocess. It
prints the finished spans as JSON ``[name, parent name or null]`` pairs.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from swarmkit import Agent, Swarm
from swarmkit.mcp import MCPToolSource
from swarmkit.testing import ScriptedModel, text, tool_call
from swarmkit.tracing import traced

ROOT = Path(__file__).resolve().parent.parent


async def main() -> None:
    """Call ``add`` on the test server through a traced swarm; print the spans."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    source = MCPToolSource.stdio(sys.executable, ["-m", "tests.mcp_server", "stdio"], cwd=ROOT)
    async with source:
        tools = await source.tools()
        exporter.clear()
        model = ScriptedModel(tool_call("add", a=1, b=2), text("3"))
        swarm = Swarm([Agent(name="calc", tools=tools)], "calc", model=model, observers=[traced])
        await swarm.run("1 + 2?")
    spans = exporter.get_finished_spans()
    names = {span.context.span_id: span.name for span in spans if span.context is not None}
    pairs = [[s.name, names.get(s.parent.span_id) if s.parent else None] for s in spans]
    print(json.dumps(pairs))


if __name__ == "__main__":
    asyncio.run(main())
