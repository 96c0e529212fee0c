"""A session paused in one process and resumed in another: the second trace links to the first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from swarmkit import Agent, Swarm, approve, tool
from swarmkit import events as ev
from swarmkit.journal import InMemoryJournal, SQLiteJournal
from swarmkit.testing import ScriptedModel, text, tool_call
from swarmkit.tracing import RunTracing
from swarmkit.tracing._spans import RunSpans
from tests.tracing_resume_app import SESSION

ROOT = Path(__file__).resolve().parent.parent


def _spans(phase: str, journal: Path) -> list[dict[str, Any]]:
    """The spans one phase's process recorded."""
    output = subprocess.run(
        [sys.executable, "-m", "tests.tracing_resume_app", phase, str(journal)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    spans: list[dict[str, Any]] = json.loads(output)
    return spans


def _run(spans: list[dict[str, Any]]) -> dict[str, Any]:
    [run] = [span for span in spans if span["name"] == "invoke_workflow billing"]
    return run


def _usage(spans: list[dict[str, Any]]) -> tuple[int, int]:
    chats = [span["attributes"] for span in spans if span["name"].startswith("chat")]
    return (
        sum(chat.get("gen_ai.usage.input_tokens", 0) for chat in chats),
        sum(chat.get("gen_ai.usage.output_tokens", 0) for chat in chats),
    )


@pytest.mark.slow  # two interpreters that import swarmkit and the SDK: about 3 s of CPU
async def test_a_run_resumed_in_another_process_links_to_the_paused_run_s_span(
    tmp_path: Path,
) -> None:
    """Process B's workflow span links to process A's (ids from the journal); usage summed over
    both traces equals the journal's."""
    journal = tmp_path / "journal.sqlite"

    paused = _spans("pause", journal)
    resumed = _spans("resume", journal)

    before, after = _run(paused), _run(resumed)
    assert before["attributes"]["swarmkit.stop_reason"] == "interrupted"
    assert after["attributes"]["swarmkit.stop_reason"] == "final_output"
    assert after["trace_id"] != before["trace_id"]
    assert after["links"] == [[before["trace_id"], before["span_id"]]]
    with SQLiteJournal(journal) as store:
        records = await store.read(SESSION)
    usages = [r.data["response"]["usage"] for r in records if r.kind == "model_call"]
    assert len(usages) == 2
    journaled = (
        sum(u["prompt_tokens"] for u in usages),
        sum(u["completion_tokens"] for u in usages),
    )
    assert (_usage(paused)[0] + _usage(resumed)[0], _usage(paused)[1] + _usage(resumed)[1]) == (
        journaled
    )


def _provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


async def test_a_traced_run_journals_its_span_with_its_end_and_replay_ignores_it() -> None:
    """The paused run's end holds its span's traceparent; a tracer that never saw the run
    (as in another process) links the resume to it; a strict replay still matches."""

    @tool(needs_approval=True)
    def refund(amount: int) -> str:
        """Refund money."""
        return f"refunded {amount}"

    exporter = InMemorySpanExporter()
    journal = InMemoryJournal()

    def swarm(*script: Any) -> Swarm:
        tracing = RunTracing(tracer_provider=_provider(exporter))  # remembers no earlier run
        agent = Agent(name="billing", tools=[refund])
        model = ScriptedModel(*script)
        return Swarm([agent], "billing", model=model, journal=journal, observers=[tracing])

    await swarm(tool_call("refund", amount=30)).run("refund me", session_id="s-1")
    [paused] = exporter.get_finished_spans()[-1:]
    [end] = [r for r in await journal.read("s-1") if r.kind == "run_finished"]
    context = paused.context
    assert context is not None
    ids = f"{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"
    assert end.data["trace"] == f"00-{ids}"

    await swarm(text("Refunded.")).resume("s-1", decision=approve())
    await swarm().replay("s-1")

    runs = [s for s in exporter.get_finished_spans() if s.name == "invoke_workflow billing"]
    assert [[link.context.span_id for link in run.links] for run in runs[1:]] == [
        [context.span_id],
        [runs[1].context.span_id if runs[1].context else 0],
    ]


def test_a_malformed_journaled_trace_links_to_nothing() -> None:
    """A traceparent that is not one (a hand-edited journal) starts an unlinked trace."""
    exporter = InMemorySpanExporter()
    provider = _provider(exporter)
    tracing = RunTracing(tracer_provider=provider)
    spans = RunSpans(tracing, provider.get_tracer("test"))
    started = ev.RunStarted(
        session_id="s-2", prompt="hi", entry_agent="a", replay=True, previous_trace="00-zz-01"
    )

    spans.observe(started)
    spans.close()

    [run] = exporter.get_finished_spans()
    assert run.links == ()
