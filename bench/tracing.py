"""Tracing's cost on the two-call LLM-handoff session (``bench/session.py``), and its parts.

1. The session untraced, traced to the SDK's in-memory exporter (simple processor), and with
   the observer but no tracer provider, taking turns round by round; per-session CPU time
   (``time.process_time``: on a shared machine wall time mostly measures the neighbours) and
   the ratios to untraced, min / median / max over the rounds (target: traced <= 1.15x).
2. The spans' price apart from the run: one session's events fed to the span builder alone,
   against the SDK making the same spans with the same attributes in one call each (the floor
   any mapping from events to these spans pays).
3. Python calls a traced session makes beyond one with the observer but no tracer provider
   (cProfile), split by where they run: the SDK's (and the builtins it calls) and
   ``swarmkit.tracing``'s. Counts do not move with the machine's load.

Run from the checkout: ``PYTHONPATH=. .venv/bin/python bench/tracing.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import session as session_bench
from _size import size

from swarmkit import events as ev
from swarmkit.tracing import RunTracing, traced
from swarmkit.tracing._spans import RunSpans

SESSIONS = size(200, 2)
SPAN_ROUNDS = size(3_000, 2)


def _cpu_per_session(
    loop: asyncio.AbstractEventLoop, run: Callable[[], Awaitable[object]]
) -> float:
    async def many() -> None:
        for _ in range(SESSIONS):
            await run()

    started = time.process_time()
    loop.run_until_complete(many())
    return (time.process_time() - started) / SESSIONS


def session_ratios(rounds: int) -> None:
    """Untraced, traced and no-provider sessions, round by round."""
    client = session_bench._client()
    sessions = {
        "untraced": session_bench._swarm(client, rule=False),
        "traced": session_bench._traced(client, batch=False),
        "no provider": session_bench._swarm(client, rule=False, observer=traced),
    }
    loop = asyncio.new_event_loop()
    for run in sessions.values():
        _cpu_per_session(loop, run)  # warm up
    samples: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(rounds):
        for name, run in sessions.items():
            samples[name].append(_cpu_per_session(loop, run))
    off = samples["untraced"]
    for name, values in samples.items():
        ratios = [on / base for on, base in zip(values, off, strict=True)]
        print(
            f"{name:12} {statistics.median(values) * 1e6:6.0f} µs CPU a session; "
            f"to untraced {min(ratios):.3f} / {statistics.median(ratios):.3f} / {max(ratios):.3f}"
        )


def span_price() -> None:
    """The span builder fed one session's events, against the SDK's floor for its spans."""
    events: list[ev.Event] = []

    async def keep(stream: AsyncGenerator[ev.Event, None]) -> AsyncGenerator[ev.Event, None]:
        async for event in stream:
            events.append(event)
            yield event

    run = session_bench._swarm(session_bench._client(), rule=False, observer=keep)
    asyncio.new_event_loop().run_until_complete(run())
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing = RunTracing(tracer_provider=provider)
    tracer = provider.get_tracer("bench")

    def build() -> None:
        spans = RunSpans(tracing, tracer)
        for event in events:
            spans.observe(event)

    build()
    made = [(span.name, dict(span.attributes or {})) for span in exporter.get_finished_spans()]

    def floor() -> None:
        for name, attributes in made:
            tracer.start_span(name, attributes=attributes).end()

    count = sum(len(attributes) for _, attributes in made)
    print(f"{len(events)} events, {len(made)} spans, {count} attributes")
    for name, work in (("span builder", build), ("SDK floor", floor)):
        for _ in range(SPAN_ROUNDS // 10):
            work()
        started = time.process_time()
        for index in range(SPAN_ROUNDS):
            work()
            if index % 50 == 0:
                exporter.clear()
        spent = (time.process_time() - started) / SPAN_ROUNDS
        print(f"{name:12} {spent * 1e6:6.0f} µs CPU a session")


def call_counts() -> None:
    """Python calls a traced session adds over the observer with no provider, by origin."""
    client = session_bench._client()
    loop = asyncio.new_event_loop()
    sessions = size(200, 2)

    def counted(run: Callable[[], Awaitable[object]]) -> dict[str, float]:
        async def many(count: int) -> None:
            for _ in range(count):
                await run()

        loop.run_until_complete(many(sessions // 4 or 1))
        profile = cProfile.Profile()
        profile.enable()
        loop.run_until_complete(many(sessions))
        profile.disable()
        counts: dict[str, float] = {}
        for (path, _, _), (_, calls, *_) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
            origin = "swarmkit.tracing" if "swarmkit/tracing" in path else "other"
            counts[origin] = counts.get(origin, 0) + calls / sessions
        return counts

    off = counted(session_bench._swarm(client, rule=False, observer=traced))
    on = counted(session_bench._traced(client, batch=False))
    ours = on.get("swarmkit.tracing", 0) - off.get("swarmkit.tracing", 0)
    sdk = on["other"] - off["other"]
    print(f"calls a session added by tracing: {ours + sdk:.0f} ({ours:.0f} in swarmkit.tracing)")


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--rounds", type=int, default=9)
    args = options.parse_args()
    session_ratios(args.rounds)
    span_price()
    call_counts()


if __name__ == "__main__":
    main()
