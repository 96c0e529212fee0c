"""Durable swarms at scale: N sessions through 1, 2 and 3 worker processes, DBOS and Temporal
in the same run.

The session: triage looks an invoice up (a tool), hands off to
billing, billing answers: four steps, a handoff, a tool; each model call goes over HTTP to a
loopback model server (its own process) that answers after ``--latency`` seconds (200 ms).
Each worker is the ``swarmkit dbos worker`` / ``swarmkit temporal worker`` command in its own
process, capped at ``--concurrency`` sessions (DBOS ``--per-worker``) or model and tool calls
(Temporal ``--max-concurrent-activities``) at once, as a deployment caps a worker. DBOS uses
one throwaway PostgreSQL server (a fresh database per configuration); Temporal the dev server
(its own SQLite: the CLI dev server cannot use Postgres).

Per configuration: N sessions are queued at once; sessions/s is N over the wall time from the
first start to the last end; p50/p95 latency is each session's end minus its start as the
engine recorded them (queue wait included); orchestration CPU per session is the workers'
user+system CPU time (from /proc, after their start-up) over N; the model server's and the
database's CPU are not in it. Run: ``.venv/bin/python bench/durable_scale.py [--sessions 48]
[--concurrency 8] [--workers 1 2 3] [--engines dbos temporal]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROOT = HERE.parent
sys.path.append(str(ROOT))  # after PYTHONPATH: a base checkout wins
sys.path.insert(0, str(HERE))

import psycopg  # noqa: E402

from swarmkit import Agent, Handoff, OpenAIModel, Swarm, tool  # noqa: E402
from swarmkit.models import RetryPolicy  # noqa: E402
from tests.journal.postgres_server import running_postgres  # noqa: E402

SWARMKIT = [sys.executable, "-c", "import sys; from swarmkit.cli import main; sys.exit(main())"]
PROMPT = "I was charged twice for invoice A-1."
TICKS = os.sysconf("SC_CLK_TCK")


# -- the session and its model server ---------------------------------------------------

MODEL_URL = "SCALE_MODEL_URL"


@tool
def lookup_invoice(invoice: str) -> str:
    """Look an invoice up."""
    return f"invoice {invoice}: charged twice"


def build() -> Swarm:
    """The benchmark swarm, its model at ``$SCALE_MODEL_URL``."""
    model = OpenAIModel(
        "gpt-bench",
        base_url=os.environ.get(MODEL_URL, "http://127.0.0.1:9/v1"),
        api_key="sk-bench-key",
        retry=RetryPolicy(max_attempts=1),
    )
    billing = Agent(name="billing", instructions="Billing. Refund duplicates.")
    triage = Agent(
        name="triage",
        instructions="Triage. Look the invoice up, then pass on.",
        tools=[lookup_invoice],
        handoffs=[Handoff(agent=billing)],
    )
    return Swarm([triage, billing], "triage", model=model)


swarm = build()


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The chat completion the scripted model gives this request."""
    messages = body.get("messages", [])
    system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
    looked_up = any(
        m.get("role") == "tool" and "invoice" in str(m.get("content")) for m in messages
    )
    if system.startswith("Billing") or "Billing." in system:
        message: dict[str, Any] = {"role": "assistant", "content": "Refunded the duplicate."}
    else:
        name, arguments = (
            ("transfer_to_billing", "{}") if looked_up else ("lookup_invoice", '{"invoice": "A-1"}')
        )
        call = {"id": f"call_{name}", "type": "function"}
        call["function"] = {"name": name, "arguments": arguments}  # type: ignore[assignment]
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-bench",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


async def _serve(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: float
) -> None:
    """HTTP/1.1 with keep-alive, POST with a JSON body only: what the openai client sends."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.decode("latin-1").split("\r\n")[1:]:
                key, _, value = line.partition(":")
                if key.strip().lower() == "content-length":
                    length = int(value)
            body = json.loads(await reader.readexactly(length)) if length else {}
            await asyncio.sleep(latency)
            data = json.dumps(answer(body)).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                + f"content-length: {len(data)}\r\n\r\n".encode()
                + data
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(port: int, latency: float) -> None:
    """Serve until killed."""
    server = await asyncio.start_server(
        lambda r, w: _serve(r, w, latency), "127.0.0.1", port, backlog=1024
    )
    print(f"model server on {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


# -- the measurement ------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """One configuration's figures."""

    engine: str
    workers: int
    sessions: int
    per_second: float
    p50: float
    p95: float
    cpu_ms: float
    db_kb: float = 0.0
    """DBOS: the system database's growth per session (rows, indexes, WAL not counted)."""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@contextlib.contextmanager
def processes(commands: list[list[str]], env: dict[str, str], folder: Path) -> Iterator[list[int]]:
    """Start each command in its own process, wait for its first line; SIGTERM them after."""
    started = []
    for number, command in enumerate(commands):
        log = folder / f"worker-{number}-{uuid.uuid4().hex[:4]}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                command, cwd=HERE, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        started.append((process, log))
    try:
        for process, log in started:
            while not log.read_text().strip():
                if process.poll() is not None:
                    raise RuntimeError(f"a worker stopped: {log.read_text()}")
                time.sleep(0.05)
        yield [process.pid for process, _ in started]
    finally:
        for process, _ in started:
            process.send_signal(signal.SIGTERM)
        for process, _ in started:
            process.wait(timeout=60)


async def run_dbos(
    base: str, workers: int, args: argparse.Namespace, env: dict[str, str], folder: Path
) -> Figures:
    """N sessions through ``workers`` DBOS workers on a fresh Postgres database."""
    from swarmkit.dbos import SessionClient  # noqa: PLC0415

    name = f"scale_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = f"{base}/{name}"
    client = SessionClient({"swarm": build()}, database_url=url)
    await client.dbos.list_workflows_async(limit=1)  # the schema exists before workers poll
    command = [*SWARMKIT, "dbos", "worker", "durable_scale:swarm", "--db", url]
    command += ["--per-worker", str(args.concurrency), "--polling-interval", "0.05"]
    commands = [[*command, "--executor-id", f"w{n}"] for n in range(workers)]
    size = f"SELECT pg_database_size('{name}')"
    with processes(commands, env, folder) as pids, psycopg.connect(url, autocommit=True) as db:
        empty = _one(db.execute(size).fetchone())
        before = sum(cpu_seconds(pid) for pid in pids)
        began = time.perf_counter()
        handles = [await client.start_session("swarm", PROMPT) for _ in range(args.sessions)]
        await asyncio.gather(*(h.result() for h in handles))
        wall = time.perf_counter() - began
        cpu = sum(cpu_seconds(pid) for pid in pids) - before
        db.execute("CHECKPOINT")
        grown = _one(db.execute(size).fetchone()) - empty
    found = await client.dbos.list_workflows_async(load_input=False, load_output=False)
    client.close()
    latencies = [
        (s.updated_at - s.created_at) / 1000 for s in found if s.updated_at and s.created_at
    ]
    figures = _figures("DBOS", workers, args.sessions, wall, latencies, cpu)
    return dataclasses.replace(figures, db_kb=grown / 1024 / args.sessions)


def _one(row: tuple[Any, ...] | None) -> int:
    assert row is not None
    return int(row[0])


async def run_temporal(
    address: str, workers: int, args: argparse.Namespace, env: dict[str, str], folder: Path
) -> Figures:
    """N sessions through ``workers`` Temporal workers on one task queue."""
    from temporalio.client import Client  # noqa: PLC0415

    from swarmkit.temporal import SwarmPlugin, session_result, start_session  # noqa: PLC0415

    queue = f"scale-{uuid.uuid4().hex[:8]}"
    client = await Client.connect(address, plugins=[SwarmPlugin()])
    command = [*SWARMKIT, "temporal", "worker", "durable_scale:swarm", "--address", address]
    command += ["--task-queue", queue, "--max-concurrent-activities", str(args.concurrency)]
    with processes([command] * workers, env, folder) as pids:
        before = sum(cpu_seconds(pid) for pid in pids)
        began = time.perf_counter()
        handles = [
            await start_session(client, "swarm", PROMPT, task_queue=queue)
            for _ in range(args.sessions)
        ]
        await asyncio.gather(*(session_result(h) for h in handles))
        wall = time.perf_counter() - began
        cpu = sum(cpu_seconds(pid) for pid in pids) - before
    latencies = []
    for handle in handles:
        described = await handle.describe()
        if described.close_time and described.start_time:
            latencies.append((described.close_time - described.start_time).total_seconds())
    return _figures("Temporal", workers, args.sessions, wall, latencies, cpu)


def _figures(
    engine: str, workers: int, sessions: int, wall: float, latencies: list[float], cpu: float
) -> Figures:
    latencies.sort()
    return Figures(
        engine=engine,
        workers=workers,
        sessions=sessions,
        per_second=sessions / wall,
        p50=statistics.median(latencies),
        p95=latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))],
        cpu_ms=1000 * cpu / sessions,
    )


def report(rows: list[Figures]) -> None:
    """The table, and each engine's throughput ratio to its one-worker figure."""
    print(
        f"{'engine':<9}{'workers':>8}{'sessions':>9}{'sess/s':>9}{'p50 s':>8}{'p95 s':>8}"
        f"{'CPU ms/sess':>13}{'vs 1 worker':>13}{'DB KB/sess':>12}"
    )
    for row in rows:
        one = next(
            r
            for r in rows
            if r.engine == row.engine
            and r.workers == min(x.workers for x in rows if x.engine == row.engine)
        )
        print(
            f"{row.engine:<9}{row.workers:>8}{row.sessions:>9}{row.per_second:>9.2f}"
            f"{row.p50:>8.2f}{row.p95:>8.2f}{row.cpu_ms:>13.1f}"
            f"{row.per_second / one.per_second:>12.2f}x"
            f"{row.db_kb:>12.1f}"
        )


async def measure(args: argparse.Namespace, folder: Path) -> list[Figures]:
    """Every engine at every worker count, the model server up throughout."""
    port = 18000 + os.getpid() % 2000
    server = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "durable_scale.py"),
            "--serve-model",
            str(port),
            str(args.latency),
        ],
        stdout=subprocess.PIPE,
    )
    assert server.stdout is not None
    server.stdout.readline()
    env = {**os.environ, MODEL_URL: f"http://127.0.0.1:{port}/v1"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    rows: list[Figures] = []
    try:
        if "dbos" in args.engines:
            with running_postgres(durable=True) as pg:
                base = pg.dsn.rsplit("/", 1)[0]
                for workers in args.workers:
                    rows.append(await run_dbos(base, workers, args, env, folder))
                    print(rows[-1], file=sys.stderr, flush=True)
        if "temporal" in args.engines:
            from swarmkit.temporal import dev_server  # noqa: PLC0415

            (folder / "temporal").mkdir()
            with dev_server(folder / "temporal") as address:
                for workers in args.workers:
                    rows.append(await run_temporal(address, workers, args, env, folder))
                    print(rows[-1], file=sys.stderr, flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    return rows


def main() -> None:
    """Parse the sizes, measure, print (or, with --serve-model PORT LATENCY, serve the model)."""
    if sys.argv[1:2] == ["--serve-model"]:
        asyncio.run(serve(int(sys.argv[2]), float(sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description="Durable swarms through 1, 2, 3 workers.")
    parser.add_argument("--sessions", type=int, default=48)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--engines", nargs="+", default=["dbos", "temporal"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rows = asyncio.run(measure(args, Path(folder)))
    print(
        f"{args.sessions} sessions per row, {args.concurrency} at once per worker, model "
        f"latency {args.latency * 1000:.0f} ms, {os.cpu_count()} cores"
    )
    report(rows)


if __name__ == "__main__":
    main()
