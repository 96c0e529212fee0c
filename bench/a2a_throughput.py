"""A2A task throughput: swarmkit's ``A2AServer`` against a bare a2a-sdk server, same echo agent.

Both servers answer with bench/_tck_sut.py's echo agent: the swarm (an echo model, one call a
task) behind ``A2AServer``, and the a2a-sdk's own DefaultRequestHandler, InMemoryTaskStore and
routes around an AgentExecutor that echoes. Both run on loopback in this one process, each
under uvicorn, and the a2a-sdk's client sends each one ``--tasks`` non-streaming messages
(SendMessage, one task each, answered completed), ``--concurrency`` in flight; rounds
alternate between the servers. Printed: tasks/s per server and round, by the wall clock and
per CPU second of this process (which a loaded machine moves less), and the ratio
swarmkit/bare of each (min / median / max over the rounds).

Two swarmkit set-ups are measured: ``memory`` (``task_store="memory"`` beside an in-memory
journal, so both servers keep tasks in memory only) and ``journal-file`` (the default
``task_store="journal"`` beside a SQLite journal file, as ``swarmkit serve a2a`` runs: every
task and run written to disk). The client runs in the same process, so its cost is in both
figures. ``--profile FILE [--store journal-file]`` writes a cProfile of one round of each
server instead (client included): FILE for swarmkit, FILE.bare for the bare server.
Run: ``.venv/bin/python bench/a2a_throughput.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import socket
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import uvicorn
from _size import size
from _tck_sut import bare_app, swarm
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, StreamResponse, TaskState

from swarmkit.a2a import A2AServer
from swarmkit.journal import InMemoryJournal, SQLiteJournal


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@asynccontextmanager
async def bare_server() -> AsyncIterator[str]:
    """The bare a2a-sdk echo server under uvicorn on a free loopback port; yields its URL."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    config = uvicorn.Config(
        bare_app(url), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield url
    finally:
        server.should_exit = True
        await serving


@asynccontextmanager
async def swarmkit_server(store: str, work: Path) -> AsyncIterator[tuple[str, str]]:
    """``A2AServer`` on the echo swarm with ``store``; yields its URL and token."""
    if store == "memory":
        server = A2AServer(swarm, InMemoryJournal(), task_store="memory")
    else:
        server = A2AServer(swarm, SQLiteJournal(work / f"{uuid.uuid4().hex}.sqlite"))
    async with server:
        yield server.url, server.token


async def _send_all(url: str, token: str, tasks: int, concurrency: int) -> tuple[float, float]:
    """Send ``tasks`` messages, ``concurrency`` in flight; the wall and CPU seconds it took."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, limits=limits, timeout=60) as http:
        config = ClientConfig(httpx_client=http, streaming=False)
        client = await ClientFactory(config).create_from_url(url)
        await _one(client, "warm")
        queue = list(range(tasks))

        async def worker() -> None:
            while queue:
                await _one(client, f"message {queue.pop()}")

        start, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start, time.process_time() - cpu
        await client.close()
    return elapsed


async def _one(client: Client, text: str) -> None:
    message = Message(role=Role.ROLE_USER, parts=[Part(text=text)], message_id=uuid.uuid4().hex)
    last: StreamResponse | None = None
    async for response in client.send_message(SendMessageRequest(message=message)):
        last = response
    assert last is not None and last.task.status.state == TaskState.TASK_STATE_COMPLETED, last


async def measure(store: str, rounds: int, tasks: int, concurrency: int, work: Path) -> None:
    """Alternate rounds between the two servers; print tasks/s and the ratios."""
    ratios: dict[str, list[float]] = {"wall": [], "CPU": []}
    async with bare_server() as bare_url, swarmkit_server(store, work) as (ours, token):
        for index in range(rounds):
            bare = [tasks / s for s in await _send_all(bare_url, token, tasks, concurrency)]
            mine = [tasks / s for s in await _send_all(ours, token, tasks, concurrency)]
            for kind, b, m in zip(ratios, bare, mine, strict=True):
                ratios[kind].append(m / b)
            print(
                f"  {store:12} round {index + 1}: bare a2a-sdk {bare[0]:6.1f} tasks/s "
                f"({bare[1]:6.1f} a CPU second), swarmkit {mine[0]:6.1f} tasks/s "
                f"({mine[1]:6.1f} a CPU second)"
            )
    for kind, seen in ratios.items():
        low, mid, high = min(seen), statistics.median(seen), max(seen)
        print(
            f"{store}, {kind}: swarmkit/bare {low:.3f} / {mid:.3f} / {high:.3f}x (min/median/max)"
        )


async def profile(store: str, tasks: int, concurrency: int, work: Path, out: str) -> None:
    """One round of each server under cProfile (client included), written to ``out``
    (swarmkit with ``store``) and ``out.bare`` (the bare a2a-sdk server)."""
    async with bare_server() as bare_url, swarmkit_server(store, work) as (url, token):
        for where, path in ((url, out), (bare_url, f"{out}.bare")):
            profiler = cProfile.Profile()
            profiler.enable()
            await _send_all(where, token, tasks, concurrency)
            profiler.disable()
            profiler.dump_stats(path)
            calls = sum(entry[1] for entry in profiler.getstats())
            print(f"{path}: {tasks} tasks, {calls / tasks:,.0f} Python calls a task")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=size(3))
    parser.add_argument("--tasks", type=int, default=size(300, 3))
    parser.add_argument("--concurrency", type=int, default=size(8, 2))
    parser.add_argument("--profile", metavar="FILE")
    parser.add_argument("--store", choices=["memory", "journal-file"], default="memory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        if args.profile:
            await profile(args.store, args.tasks, args.concurrency, Path(work), args.profile)
            return
        print(f"{args.tasks} tasks a round, {args.concurrency} in flight, {args.rounds} rounds")
        for store in ("memory", "journal-file"):
            await measure(store, args.rounds, args.tasks, args.concurrency, Path(work))


if __name__ == "__main__":
    asyncio.run(main())
