"""Temporal overhead: a swarm session on a local dev server against the same swarm in process.

The swarm: one agent calls a quick tool, then answers (model, tool, model, ...). A scripted
model answers at once, so the figures are what Temporal adds per step. Each kind of worker
runs in its own process: Temporal's floor (a bare workflow taking the same steps and doing
nothing), swarmkit as it is here, and with ``--against PATH`` swarmkit from another checkout
(``PATH`` put first on the worker's PYTHONPATH: the "before" of a change). The client takes
interleaved rounds, one short and one long session per worker per round, so a busy machine
slows every column alike; a step's cost is the difference of the medians over the extra
steps. Then recovery: a worker process is SIGKILLed while a tool call is in flight, a new one
starts at once, and the time from the kill to the result is measured (the tool's attempt
timeout is 1 s and the sticky-queue timeout 0.5 s, the floor of that figure).
Run: ``make bench`` or ``.venv/bin/python bench/temporal.py [--against /path/to/checkout]``.
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

ROUNDS = 30
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


CONFIGS = {
    "model and tool calls as activities": (False, False),
    "model calls as local activities": (True, False),
    "all calls as local activities": (True, True),
}
"""Each configuration: (model calls local, tool calls local)."""


def _spawn(
    address: str, queue: str, kind: str, *, path: str | None = None
) -> subprocess.Popen[bytes]:
    """A worker process of ``kind`` (``floor`` or ``swarm``), with ``path`` first on its path."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([path, *filter(None, [env.get("PYTHONPATH")])])
    command = [sys.executable, __file__, "--worker", address, queue, kind]
    return subprocess.Popen(command, env=env)


async def _serve_kind(address: str, queue: str, kind: str, models: bool, tools: bool) -> None:
    if kind == "floor":
        client = await Client.connect(address)
        worker = Worker(client, task_queue=queue, workflows=[Floor], activities=[step])
    else:
        client = await Client.connect(
            address, plugins=[_plugin(local_models=models, local_tools=tools)]
        )
        worker = Worker(client, task_queue=queue)
    await worker.run()


async def _one(
    client: Client, queue: str, kind: str, rounds: int, local: tuple[bool, bool]
) -> float:
    """One session's time (s) on the worker serving ``queue``."""
    start = time.perf_counter()
    if kind == "floor":
        plan = [rounds, int(local[0]), int(local[1])]
        await client.execute_workflow(Floor.run, plan, id=uuid.uuid4().hex, task_queue=queue)
    else:
        await run_session(client, "clerk", _prompt(rounds), task_queue=queue)
    return time.perf_counter() - start


async def _compare(
    address: str, local: tuple[bool, bool], columns: dict[str, str | None]
) -> dict[str, list[tuple[float, float]]]:
    """Interleaved rounds over one worker process per column; per column, (short, long) s."""
    client = await Client.connect(address, plugins=[SwarmPlugin()])
    queues = {name: f"bench-{uuid.uuid4().hex[:6]}" for name in columns}
    kinds = {name: "floor" if name == "floor" else "swarm" for name in columns}
    flags = [str(int(flag)) for flag in local]
    workers = [
        _spawn(address, queues[name], f"{kinds[name]}:{':'.join(flags)}", path=path)
        for name, path in columns.items()
    ]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in columns}
    try:
        for name in columns:  # warm up each worker (and wait until it polls)
            await _one(client, queues[name], kinds[name], SHORT, local)
        for _ in range(ROUNDS):
            for name in columns:
                short = await _one(client, queues[name], kinds[name], SHORT, local)
                long = await _one(client, queues[name], kinds[name], LONG, local)
                times[name].append((short, long))
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
            worker.wait()
    return times


def _per_step_ms(times: list[tuple[float, float]]) -> tuple[float, float, float]:
    """(short session ms, long session ms, ms per extra step), from the medians."""
    short = statistics.median(t[0] for t in times) * 1000
    long = statistics.median(t[1] for t in times) * 1000
    return short, long, (long - short) / EXTRA_STEPS


def _spread(times: list[tuple[float, float]]) -> str:
    """min / median / max of the per-step cost over rounds (long minus short, per round)."""
    steps = sorted((t[1] - t[0]) * 1000 / EXTRA_STEPS for t in times)
    return f"{steps[0]:5.1f} / {statistics.median(steps):5.1f} / {steps[-1]:5.1f}"


def _worker(address: str, queue: str, gate: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BENCH_GATE": str(gate)}
    command = [sys.executable, __file__, "--worker", address, queue, "recovery"]
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


async def main(against: str | None) -> None:
    """Print, per configuration, each column's session times and per-step cost side by side,
    the ratios to the floor (and to the "before"), then the recovery time."""
    columns: dict[str, str | None] = {"floor": None, "swarmkit": None}
    if against is not None:
        columns = {"floor": None, "before": against, "after": None}
    with dev_server() as address:
        short, long = await _in_process()
        print(f"{ROUNDS} interleaved rounds of a {SHORT}- and a {LONG}-tool-round session")
        print(
            f"  in process: {short:.2f} / {long:.2f} ms, {(long - short) / EXTRA_STEPS:.3f} ms/step"
        )
        for name, local in CONFIGS.items():
            times = await _compare(address, local, columns)
            print(f"{name} (ms: short, long, per step from medians; per step min/med/max):")
            steps = {}
            for column, series in times.items():
                short, long, steps[column] = _per_step_ms(series)
                row = f"{short:8.1f} {long:8.1f} {steps[column]:7.1f}"
                print(f"  {column:9} {row}   {_spread(series)}")
            swarm = "after" if against is not None else "swarmkit"
            print(f"  {swarm} / floor per step: {steps[swarm] / steps['floor']:.2f}")
            if against is not None:
                print(f"  after / before per step: {steps['after'] / steps['before']:.2f}")
        recovery = await _recovery_s(address)
    print(f"recovery from a SIGKILL to the result: {recovery:.2f} s (attempt timeout 1 s)")


async def _in_process() -> tuple[float, float]:
    async def median_ms(rounds: int) -> float:
        times = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            await clerk.run(_prompt(rounds))
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000

    return await median_ms(SHORT), await median_ms(LONG)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        address, queue, kind = sys.argv[2:5]
        if kind == "recovery":
            asyncio.run(_serve(address, queue))
        else:
            name, models, tools = kind.split(":")
            asyncio.run(_serve_kind(address, queue, name, models == "1", tools == "1"))
    else:
        against = sys.argv[2] if sys.argv[1:2] == ["--against"] else None
        asyncio.run(main(against))
