"""Workers for the Temporal tests: in process, or as a process a test can SIGKILL."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Worker

from swarmkit.temporal import SessionHandle, SwarmPlugin, start_session
from tests.temporal.swarms import GATE_PORT

ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def running_worker(
    address: str, *, queue: str | None = None, **plugin: Any
) -> AsyncIterator[tuple[Client, str]]:
    """A client and an in-process worker on a task queue (a fresh one by default)."""
    client = await Client.connect(address, plugins=[SwarmPlugin(**plugin)])
    queue = queue or new_queue()
    async with Worker(
        client, task_queue=queue, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1)
    ):
        yield client, queue


def new_queue() -> str:
    """A task queue no other test uses."""
    return f"swarms-{uuid.uuid4().hex[:8]}"


async def wait_for(
    handle: SessionHandle, check: Callable[[], Awaitable[bool]], what: str, limit: float = 30.0
) -> None:
    """Wait until ``check`` holds, checking again at each new event of the session's workflow
    history (the server long-polls it), so nothing sleeps; give up after ``limit`` seconds."""

    async def watch() -> None:
        if await check():
            return
        async for _ in handle.fetch_history_events(wait_new_event=True):
            if await check():
                return
        if not await check():
            raise AssertionError(f"the session ended before {what}")

    try:
        await asyncio.wait_for(watch(), limit)
    except TimeoutError:
        raise AssertionError(f"gave up waiting for {what}") from None


class Gates:
    """Gates that a tool or model in a worker process waits at (``tests.temporal.swarms``):
    it connects to this loopback server and sends the gate's name; the test awaits its
    arrival and opens it, and the server answers every waiter of that gate, now or later."""

    def __init__(self) -> None:
        self._arrived: dict[str, asyncio.Event] = {}
        self._opened: dict[str, asyncio.Event] = {}

    async def arrival(self, name: str, limit: float = 30.0) -> None:
        """Wait until something reaches gate ``name``."""
        try:
            await asyncio.wait_for(_event(self._arrived, name).wait(), limit)
        except TimeoutError:
            raise AssertionError(f"nothing reached the {name} gate") from None

    def open(self, name: str) -> None:
        """Let every waiter at gate ``name`` through, and any that comes later."""
        _event(self._opened, name).set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One waiter: note its arrival, answer once its gate is open."""
        name = (await reader.readline()).decode().strip()
        _event(self._arrived, name).set()
        await _event(self._opened, name).wait()
        try:
            writer.write(b"open\n")
            await writer.drain()
            writer.close()
        except ConnectionError:
            pass  # its worker was killed while it waited


def _event(events: dict[str, asyncio.Event], name: str) -> asyncio.Event:
    return events.setdefault(name, asyncio.Event())


@asynccontextmanager
async def gate_server() -> AsyncIterator[tuple[Gates, dict[str, str]]]:
    """Gates on a free loopback port, and the environment a worker process needs to reach them."""
    gates = Gates()
    server = await asyncio.start_server(gates.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield gates, {GATE_PORT: str(port)}


@contextmanager
def worker_process(address: str, queue: str, state: Path, env: Mapping[str, str]) -> Iterator[int]:
    """A worker in its own process (``tests.temporal.worker_app``); yields its pid."""
    log = (state / f"worker-{uuid.uuid4().hex[:6]}.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.temporal.worker_app", address, queue],
        cwd=ROOT,
        env={**os.environ, **env, "SWARMKIT_TEST_STATE": str(state)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield process.pid
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            process.wait(timeout=15)
        log.close()


def kill(pid: int) -> None:
    """SIGKILL a worker process: no cleanup, no goodbye to the server."""
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


@asynccontextmanager
async def killed_at(
    address: str, state: Path, swarm: str, prompt: str, *, gate: str
) -> AsyncIterator[SessionHandle]:
    """A session of ``swarm`` whose worker process is SIGKILLed when the session reaches
    ``gate`` ("tool", or "model": gating the model call lets the tool through); yields its
    handle while a new worker serves it, the gate open."""
    queue = new_queue()
    client = await Client.connect(address, plugins=[SwarmPlugin()])
    async with gate_server() as (gates, gate_env):
        env = dict(gate_env)
        if gate == "model":
            gates.open("tool")
            env["SWARMKIT_GATE_MODEL"] = "1"
        with worker_process(address, queue, state, env) as pid:
            handle = await start_session(client, swarm, prompt, task_queue=queue)
            await gates.arrival(gate)
            kill(pid)
        gates.open(gate)
        with worker_process(address, queue, state, env):
            yield handle


def activity_counts(history: WorkflowHistory) -> dict[str, dict[str, int]]:
    """Per activity type: how many were scheduled, started and completed (from the history)."""
    counts: dict[str, dict[str, int]] = {}
    types: dict[int, str] = {}
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            types[event.event_id] = name
            counts.setdefault(name, {"scheduled": 0, "completed": 0})["scheduled"] += 1
        elif event.HasField("activity_task_completed_event_attributes"):
            scheduled = event.activity_task_completed_event_attributes.scheduled_event_id
            counts[types[scheduled]]["completed"] += 1
    return counts


def started_input(history: WorkflowHistory) -> dict[str, Any]:
    """The input a workflow run started with (its SessionInput as JSON data)."""
    event = history.events[0]
    payload = event.workflow_execution_started_event_attributes.input.payloads[0]
    data: dict[str, Any] = json.loads(payload.data)
    return data


def activity_inputs(history: WorkflowHistory, name: str) -> list[Any]:
    """The (first) argument of each scheduled activity of type ``name``, as JSON data."""
    inputs = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            attributes = event.activity_task_scheduled_event_attributes
            if attributes.activity_type.name == name:
                inputs.append(json.loads(attributes.input.payloads[0].data))
    return inputs


async def run_histories(client: Client, session_id: str, first_run_id: str) -> list[Any]:
    """The histories of a session's workflow runs, first to last (following continue-as-new)."""
    histories = []
    run_id: str | None = first_run_id
    while run_id:
        history = await client.get_workflow_handle(session_id, run_id=run_id).fetch_history()
        histories.append(history)
        last = history.events[-1]
        attributes = last.workflow_execution_continued_as_new_event_attributes
        run_id = (
            attributes.new_execution_run_id
            if last.HasField("workflow_execution_continued_as_new_event_attributes")
            else None
        )
    return histories
