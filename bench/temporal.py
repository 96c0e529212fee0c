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

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.worker import Worker

from swarmkit import Agent, Swarm, tool
from swarmkit.messages import AssistantMessage, ToolCall, ToolMessage
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.temporal import ActivityOptions, SwarmPlugin, dev_server, run_session, start_session

SESSIONS = 30
SHORT = 1
"""Tool rounds of the short session: model, tool, model (3 steps)."""
LONG = 6
"""Tool rounds of the long session: 13 steps, 10 more than the short one."""
EXTRA_STEPS = 2 * (LONG - SHORT)
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
    """Calls the tool as many times as the prompt says (``rounds=N``), then answers."""

    name = "quick"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """The next call or the answer, at once, decided from the request alone."""
        done = sum(isinstance(m, ToolMessage) for m in request.messages)
        prompt = request.messages[1].content or ""
        rounds = int(prompt.partition("rounds=")[2] or 1)
        if done >= rounds:
            return ModelResponse(message=AssistantMessage(content="delivered"))
        call = ToolCall(id=f"call_{done}", name="lookup", arguments='{"order_id": "A-1"}')
        return ModelResponse(message=AssistantMessage(tool_calls=(call,)))


clerk = Swarm([Agent(name="clerk", tools=[lookup])], "clerk", model=QuickModel())


def _plugin(*, local_models: bool, local_tools: bool) -> SwarmPlugin:
    return SwarmPlugin(
        swarms={"clerk": clerk},
        models={"quick": QuickModel()},
        model_options=ActivityOptions(local=local_models),
        tool_options=ActivityOptions(local=local_tools),
    )


@activity.defn(name="bench.step")
async def step() -> str:
    """The floor's activity: does nothing."""
    return "done"


@workflow.defn(name="BenchFloor", sandboxed=False)
class Floor:
    """Temporal's floor: a bare workflow taking the same steps as a session, doing nothing."""

    @workflow.run
    async def run(self, plan: list[int]) -> int:
        """``plan`` is [rounds, models local, tools local]: model, tool, ..., model."""
        rounds, local_models, local_tools = plan
        timeout = timedelta(seconds=10)
        for index in range(2 * rounds + 1):
            local = local_tools if index % 2 else local_models
            if local:
                await workflow.execute_local_activity(step, start_to_close_timeout=timeout)
            else:
                await workflow.execute_activity(step, start_to_close_timeout=timeout)
        return rounds


def _prompt(rounds: int) -> str:
    return f"where is A-1? rounds={rounds}"


async def _median_ms(run: Callable[[], Awaitable[object]]) -> float:
    await run()  # warm up
    times = []
    for _ in range(SESSIONS):
        start = time.perf_counter()
        await run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def _on_temporal(address: str, **local: bool) -> tuple[float, float]:
    """Median ms of a short and a long session; the difference over the extra steps is what a
    step costs, the session's fixed costs (start, fingerprint, completion) taken out."""
    client = await Client.connect(address, plugins=[_plugin(**local)])
    queue = f"bench-{uuid.uuid4().hex[:6]}"
    async with Worker(client, task_queue=queue):
        short = await _median_ms(lambda: _session(client, queue, SHORT))
        long = await _median_ms(lambda: _session(client, queue, LONG))
    return short, long


async def _session(client: Client, queue: str, rounds: int) -> object:
    return await run_session(client, "clerk", _prompt(rounds), task_queue=queue)


async def _floor(address: str, *, local_models: bool, local_tools: bool) -> tuple[float, float]:
    """The same medians for the bare workflow: what Temporal itself costs on this machine."""
    client = await Client.connect(address)
    queue = f"bench-{uuid.uuid4().hex[:6]}"

    async def bare(rounds: int) -> object:
        plan = [rounds, int(local_models), int(local_tools)]
        wid = uuid.uuid4().hex
        return await client.execute_workflow(Floor.run, plan, id=wid, task_queue=queue)

    async with Worker(client, task_queue=queue, workflows=[Floor], activities=[step]):
        return await _median_ms(lambda: bare(SHORT)), await _median_ms(lambda: bare(LONG))


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
        handle = await start_session(client, "clerk", _prompt(SHORT), task_queue=queue)
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


CONFIGS = {
    "model and tool calls as activities": {"local_models": False, "local_tools": False},
    "model calls as local activities": {"local_models": True, "local_tools": False},
    "all calls as local activities": {"local_models": True, "local_tools": True},
}


async def main() -> None:
    """Print session times and per-step costs next to Temporal's floor, then the recovery."""
    rows: list[tuple[str, tuple[float, float]]] = []
    with dev_server() as address:
        rows.append(("in process", await _in_process()))
        for name, local in CONFIGS.items():
            rows.append((f"bare Temporal, {name}", await _floor(address, **local)))
            rows.append((f"swarmkit, {name}", await _on_temporal(address, **local)))
        recovery = await _recovery_s(address)
    print(f"median of {SESSIONS} sessions of {SHORT} and {LONG} tool rounds (ms):")
    for name, (short, long) in rows:
        per_step = (long - short) / EXTRA_STEPS
        print(f"  {name:52} {short:8.2f} {long:8.2f}  -> {per_step:6.2f} ms per step")
    print(f"recovery from a SIGKILL to the result: {recovery:.2f} s (attempt timeout 1 s)")


async def _in_process() -> tuple[float, float]:
    short = await _median_ms(lambda: clerk.run(_prompt(SHORT)))
    long = await _median_ms(lambda: clerk.run(_prompt(LONG)))
    return short, long


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        asyncio.run(_serve(sys.argv[2], sys.argv[3]))
    else:
        asyncio.run(main())
