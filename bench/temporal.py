"""Temporal overhead: a swarm session on a local dev server against the same swarm in process.

The swarm: one agent calls a quick tool, then answers (three steps: model, tool, model). A
scripted model answers at once, so the figures are what Temporal adds per step: medians of
30 sessions each, in process, on Temporal with model calls as activities, and with model calls
as local activities. Then recovery: a worker process is SIGKILLed while a tool call is in
flight, a new one starts at once, and the time from the kill to the result is measured (the
tool's attempt timeout is 1 s and the sticky-queue timeout 0.5 s, the floor of that figure).
Run: ``make bench`` or ``.venv/bin/python bench/temporal.py`` (needs the dev extra).
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.worker import Worker

from swarmkit import Agent, Swarm, tool
from swarmkit.messages import AssistantMessage, ToolCall, ToolMessage
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.temporal import ActivityOptions, SwarmPlugin, dev_server, run_session, start_session

SESSIONS = 30
STEPS = 3
STICKY = timedelta(milliseconds=500)
QUICK = ActivityOptions(
    start_to_close_timeout=timedelta(seconds=1),
    retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=50)),
)


@tool
async def lookup(order_id: str) -> str:
    """Look an order up; it waits while the recovery benchmark holds the gate."""
    gate = os.environ.get("BENCH_GATE")
    if gate and not Path(gate).exists():
        Path(gate).touch()
        await asyncio.sleep(30)  # the first attempt hangs until the worker is killed
    return f"{order_id}: delivered"


class QuickModel:
    """Calls the tool, then answers, decided from the request alone."""

    name = "quick"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """One of two answers, at once."""
        if any(isinstance(m, ToolMessage) for m in request.messages):
            return ModelResponse(message=AssistantMessage(content="delivered"))
        call = ToolCall(id="call_1", name="lookup", arguments='{"order_id": "A-1"}')
        return ModelResponse(message=AssistantMessage(tool_calls=(call,)))


clerk = Swarm([Agent(name="clerk", tools=[lookup])], "clerk", model=QuickModel())


def _plugin(*, local: bool) -> SwarmPlugin:
    return SwarmPlugin(
        swarms={"clerk": clerk},
        models={"quick": QuickModel()},
        model_options=ActivityOptions(local=local),
    )


async def _median_ms(run: Callable[[], Awaitable[object]]) -> float:
    await run()  # warm up
    times = []
    for _ in range(SESSIONS):
        start = time.perf_counter()
        await run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def _on_temporal(address: str, *, local: bool) -> float:
    client = await Client.connect(address, plugins=[_plugin(local=local)])
    queue = f"bench-{uuid.uuid4().hex[:6]}"
    async with Worker(client, task_queue=queue):
        return await _median_ms(lambda: run_session(client, "clerk", "where?", task_queue=queue))


def _worker(address: str, queue: str, gate: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BENCH_GATE": str(gate)}
    command = [sys.executable, __file__, "--worker", address, queue]
    return subprocess.Popen(command, env=env)


async def _recovery_s(address: str) -> float:
    client = await Client.connect(address, plugins=[SwarmPlugin()])
    queue = f"bench-{uuid.uuid4().hex[:6]}"
    with tempfile.TemporaryDirectory() as folder:
        gate = Path(folder) / "gate"
        first = _worker(address, queue, gate)
        handle = await start_session(client, "clerk", "where?", task_queue=queue)
        while not gate.exists():
            await asyncio.sleep(0.01)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        killed = time.perf_counter()
        second = _worker(address, queue, gate)
        await handle.result()
        recovered = time.perf_counter() - killed
        os.kill(second.pid, signal.SIGTERM)
        second.wait()
    return recovered


async def _serve(address: str, queue: str) -> None:
    plugin = SwarmPlugin(
        swarms={"clerk": clerk}, models={"quick": QuickModel()}, tool_options=QUICK
    )
    client = await Client.connect(address, plugins=[plugin])
    worker = Worker(client, task_queue=queue, sticky_queue_schedule_to_start_timeout=STICKY)
    await worker.run()


async def main() -> None:
    """Print the per-step overheads and the recovery time."""
    with dev_server() as address:
        local_ms = await _median_ms(lambda: clerk.run("where?"))
        remote_ms = await _on_temporal(address, local=False)
        local_model_ms = await _on_temporal(address, local=True)
        recovery = await _recovery_s(address)
    print(f"in process:                           {local_ms:8.2f} ms per session")
    print(f"Temporal, model calls as activities:  {remote_ms:8.2f} ms per session")
    print(f"Temporal, model calls local:          {local_model_ms:8.2f} ms per session")
    print(f"per step (activities):                {(remote_ms - local_ms) / STEPS:8.2f} ms")
    print(f"per step (local model activities):    {(local_model_ms - local_ms) / STEPS:8.2f} ms")
    print(f"recovery from a SIGKILL to the result: {recovery:7.2f} s (attempt timeout 1 s)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        asyncio.run(_serve(sys.argv[2], sys.argv[3]))
    else:
        asyncio.run(main())
