"""Interop speed: an A2A round trip of a one-call swarm vs the same swarm in process, and the
cost of converting a streamed run's events to AG-UI events.

Both figures are measured side by side in one run: the same scripted swarm (one model call,
a 40-word answer) is run in process and through an A2AServer on loopback with the a2a-sdk's
client (one task per round trip, journaled in memory); and a streamed run is read raw,
through ``ag_ui_events`` (the AG-UI events as JSON objects), through ``ag_ui_sse`` (the SSE
messages of its events) and as the AG-UI endpoint sends it (the same messages, its text
written by the run: ``stream_written``), in CPU time, rounds interleaved, without a journal
and journaled in memory as the endpoint runs it: min / median / max of the per-round
ratios. Run: ``.venv/bin/python bench/interop.py``; ``--profile`` prints cProfile's calls
per run, raw, through ``ag_ui_sse`` and as the endpoint sends it side by side, and the
endpoint's conversion functions by time. ``--runs FORM N [--journal]`` only reads N runs in
one form (raw, objects, sse, endpoint), for an instruction count: under valgrind's callgrind,
the difference between N=60 and N=10 over 50 is a run's instructions.
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
from _size import size
from a2a.client import ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

from swarmkit import Agent, Swarm
from swarmkit.a2a import A2AServer
from swarmkit.agui import ag_ui_events, ag_ui_sse
from swarmkit.agui._sse import SseStream
from swarmkit.events import Event
from swarmkit.journal import InMemoryJournal
from swarmkit.lowlevel import stream_written
from swarmkit.testing import ScriptedModel, text

ROUNDS = size(60, 2)
BATCH = size(5, 1)
"""Runs of each kind timed together in a round."""
ANSWER = " ".join(f"word{i}" for i in range(40))


def _swarm(turns: int) -> Swarm:
    model = ScriptedModel(*[text(ANSWER) for _ in range(turns)])
    return Swarm([Agent(name="solo")], "solo", model=model)


async def in_process() -> list[float]:
    swarm, journal = _swarm(ROUNDS), InMemoryJournal()
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        await swarm.run("hi", journal=journal)
        times.append(time.perf_counter() - start)
    return times


async def over_a2a() -> list[float]:
    times = []
    async with A2AServer(_swarm(ROUNDS + 1), InMemoryJournal()) as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with httpx.AsyncClient(headers=headers) as http:
            config = ClientConfig(httpx_client=http, streaming=False)
            client = await ClientFactory(config).create_from_url(server.url)
            for index in range(ROUNDS + 1):
                message = Message(
                    role=Role.ROLE_USER, parts=[Part(text="hi")], message_id=uuid.uuid4().hex
                )
                start = time.perf_counter()
                async for _ in client.send_message(SendMessageRequest(message=message)):
                    pass
                if index:  # the first round warms the connection
                    times.append(time.perf_counter() - start)
            await client.close()
    return times


async def _read(events: AsyncIterator[object]) -> None:
    async for _ in events:
        pass


def _forms(
    swarm: Swarm, journal: InMemoryJournal | None
) -> dict[str, Callable[[], Awaitable[None]]]:
    """A streamed run read raw, as AG-UI objects, as the SSE messages of its events, and as
    the endpoint sends it (its text written by the run)."""

    def stream() -> AsyncIterator[Event]:
        return swarm.stream("hi", journal=journal) if journal is not None else swarm.stream("hi")

    def endpoint() -> Awaitable[None]:
        sse = SseStream(thread_id="t", run_id="r", new_id=None, redactor=None)
        written = stream_written(swarm, "hi", text=sse.text, journal=journal)
        return _read(sse.messages(written))

    return {
        "raw": lambda: _read(stream()),
        "objects": lambda: _read(ag_ui_events(stream(), thread_id="t", run_id="r")),
        "sse": lambda: _read(ag_ui_sse(stream(), thread_id="t", run_id="r")),
        "endpoint": endpoint,
    }


async def streamed(journaled: bool) -> dict[str, list[float]]:
    """Per-round ratios of a streamed run read in each AG-UI form over the same run read
    raw: CPU time of BATCH runs each, the forms in turn (who goes first rotates), after a
    warm-up round."""
    forms = _forms(_swarm(4 * BATCH * (ROUNDS + 1)), InMemoryJournal() if journaled else None)
    order = list(forms)
    ratios: dict[str, list[float]] = {name: [] for name in order if name != "raw"}
    for index in range(ROUNDS + 1):
        spent: dict[str, float] = {}
        turn = index % len(order)
        for name in order[turn:] + order[:turn]:
            start = time.process_time()
            for _ in range(BATCH):
                await forms[name]()
            spent[name] = time.process_time() - start
        if index:
            for name, kept in ratios.items():
                kept.append(spent[name] / spent["raw"])
    return ratios


async def profile() -> None:
    """cProfile of the same runs read raw, through ``ag_ui_sse`` and as the endpoint sends
    them: Python calls per run side by side, and the endpoint's conversion by time."""
    runs = size(300, 2)
    forms = _forms(_swarm(3 * runs + 3), None)
    calls = {}
    for name in ("raw", "sse", "endpoint"):
        await forms[name]()
        profiler = cProfile.Profile(time.process_time)  # CPU time: waiting for a core is not ours
        profiler.enable()
        for _ in range(runs):
            await forms[name]()
        profiler.disable()
        stats = pstats.Stats(profiler)
        calls[name] = stats.total_calls / runs  # type: ignore[attr-defined]
        if name == "endpoint":
            print("the endpoint's conversion (cProfile, by own time):")
            stats.sort_stats("tottime").print_stats(r"swarmkit/agui|encode_basestring", 12)
    raw, sse, endpoint = calls["raw"], calls["sse"], calls["endpoint"]
    print(f"Python calls per run: raw {raw:.0f}, through ag_ui_sse {sse:.0f} ({sse / raw:.2f}x),")
    print(f"  as the endpoint sends it {endpoint:.0f} ({endpoint / raw:.2f}x)")


async def runs(form: str, count: int, journaled: bool) -> None:
    """``count`` runs read in ``form``, after two to warm up, and nothing else."""
    forms = _forms(_swarm(count + 2), InMemoryJournal() if journaled else None)
    for _ in range(count + 2):
        await forms[form]()


def _spread(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}x"


async def main() -> None:
    local = statistics.median(await in_process())
    remote = statistics.median(await over_a2a())
    print(f"one-call swarm in process: {local * 1000:.2f} ms")
    print(f"over A2A on loopback:      {remote * 1000:.2f} ms")
    print(f"A2A overhead: {(remote - local) * 1000:.2f} ms, ratio {remote / local:.1f}x")
    for journaled in (False, True):
        ratios = await streamed(journaled)
        label = "journaled in memory (as the endpoint runs it)" if journaled else "no journal"
        print(f"streamed run, {label}, over the run alone (min / median / max of rounds):")
        print(f"  as AG-UI objects (ag_ui_events):    {_spread(ratios['objects'])}")
        print(f"  as SSE messages (ag_ui_sse):        {_spread(ratios['sse'])}")
        print(
            f"  as the endpoint sends it:           {_spread(ratios['endpoint'])} (target: 1.05x)"
        )


if __name__ == "__main__":
    if "--runs" in sys.argv:
        at = sys.argv.index("--runs")
        form, count = sys.argv[at + 1], int(sys.argv[at + 2])
        asyncio.run(runs(form, count, "--journal" in sys.argv))
    else:
        asyncio.run(profile() if "--profile" in sys.argv else main())
