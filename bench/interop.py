"""Interop speed: an A2A round trip of a one-call swarm vs the same swarm in process, and the
cost of converting a streamed run's events to AG-UI events.

Both figures are measured side by side in one run: the same scripted swarm (one model call,
a 40-word answer) is run in process and through an A2AServer on loopback with the a2a-sdk's
client (one task per round trip, journaled in memory); and a streamed run is read raw and
through ``ag_ui_events`` (the AG-UI events as JSON objects, before SSE encoding), rounds
interleaved, without a journal and journaled in memory as the AG-UI endpoint runs it.
Medians of several rounds. Run: ``.venv/bin/python bench/interop.py``.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid

import httpx
from _size import size
from a2a.client import ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

from swarmkit import Agent, Swarm
from swarmkit.a2a import A2AServer
from swarmkit.agui import ag_ui_events
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import ScriptedModel, text

ROUNDS = size(60, 2)
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


async def _timed_stream(swarm: Swarm, convert: bool, journal: InMemoryJournal | None) -> float:
    start = time.perf_counter()
    events = swarm.stream("hi", journal=journal) if journal is not None else swarm.stream("hi")
    if convert:
        async for _ in ag_ui_events(events, thread_id="t", run_id="r"):
            pass
    else:
        async for _ in events:
            pass
    return time.perf_counter() - start


async def streamed(journaled: bool) -> tuple[float, float, float]:
    """Medians of a streamed run read raw and through ``ag_ui_events``, rounds interleaved,
    and the median of the per-round ratios."""
    swarm = _swarm(2 * ROUNDS + 2)
    journal = InMemoryJournal() if journaled else None
    await _timed_stream(swarm, True, journal)  # warm both paths
    await _timed_stream(swarm, False, journal)
    raw, agui = [], []
    for _ in range(ROUNDS):
        raw.append(await _timed_stream(swarm, False, journal))
        agui.append(await _timed_stream(swarm, True, journal))
    ratio = statistics.median(a / r for a, r in zip(agui, raw, strict=True))
    return statistics.median(raw), statistics.median(agui), ratio


async def main() -> None:
    local = statistics.median(await in_process())
    remote = statistics.median(await over_a2a())
    print(f"one-call swarm in process: {local * 1000:.2f} ms")
    print(f"over A2A on loopback:      {remote * 1000:.2f} ms")
    print(f"A2A overhead: {(remote - local) * 1000:.2f} ms, ratio {remote / local:.1f}x")
    for journaled in (False, True):
        raw, agui, ratio = await streamed(journaled)
        label = "journaled in memory (as the endpoint runs it)" if journaled else "no journal"
        print(f"streamed run, {label}: raw {raw * 1000:.3f} ms, as AG-UI {agui * 1000:.3f} ms")
        print(f"  AG-UI conversion adds {(ratio - 1) * 100:.1f}% (target: at most 5%)")


if __name__ == "__main__":
    asyncio.run(main())
