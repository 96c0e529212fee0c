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

Per configuration: the workers start and run ``--warmup`` sessions each, untimed; then N
sessions are started (16 starts at once) and waited for. Sessions/s is N over the wall time
from the first start to the last end; p50/p95 latency is each session's end minus its start
as the engine recorded them (queue wait included). CPU, from /proc over the same span, per
part in ms per session: the workers, the engine's server (PostgreSQL with its backends, or
the dev server), the model server, the client; "cores" is their sum over the wall time and
"machine" the whole machine's busy cores (other jobs included). "DB ops" is PostgreSQL's
committed transactions per session, or the dev server's persistence operations (from its
metrics endpoint); "DB busy" the latter's summed latency over the wall time: the operations
in flight on average on the dev server's one SQLite connection (above 1 they queue).
Run: ``.venv/bin/python bench/durable_scale.py [--sessions 96] [--concurrency 8]
[--workers 1 2 3] [--engines dbos temporal] [--local-activities]``.
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
import urllib.request
import uuid
from collections.abc import Awaitable, Callable, Iterator
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
    server_ms: float = 0.0
    """The engine's server (PostgreSQL with its backends, or the Temporal dev server)."""
    model_ms: float = 0.0
    client_ms: float = 0.0
    cores: float = 0.0
    """All of this configuration's processes: CPU seconds per wall second."""
    machine: float = 0.0
    """The whole machine's busy cores over the same time (other jobs included)."""
    db_ops: float = 0.0
    """Per session: PostgreSQL's committed transactions (DBOS; queue polling included), or
    the Temporal dev server's persistence operations on its SQLite file."""
    db_busy: float = 0.0
    timeouts: int = 0
    """Temporal: activity and workflow tasks that timed out (and ran again) in the row."""
    slowest: float = 0.0
    """Temporal: the persistence operations' summed latency over the wall time, i.e. how many
    are in flight on average; the dev server has one SQLite connection, so above 1 they queue."""


def _stat(pid: int) -> list[str]:
    """A process's /proc stat fields after its name: state, ppid, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def descendants(pid: int) -> list[int]:
    """Every live process under ``pid``, its children's children included."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                parents[int(entry.name)] = int(_stat(int(entry.name))[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def tree_seconds(pid: int) -> float:
    """User + system CPU time of a process and its descendants, ended ones included
    (PostgreSQL's backends come and go; the postmaster reaps them and counts their time)."""
    total = 0
    for member in [pid, *descendants(pid)]:
        with contextlib.suppress(OSError):
            fields = _stat(member)
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / TICKS


def listening_ports(pid: int) -> list[int]:
    """The TCP ports a process listens on (its sockets' inodes, looked up in /proc/net/tcp)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    ports = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(set(ports))


def machine_busy() -> tuple[int, int]:
    """The machine's total and idle (idle + iowait) clock ticks so far, all cores."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(ticks), ticks[3] + ticks[4]


def persistence(url: str) -> tuple[float, float]:
    """The Temporal server's persistence operations so far and their summed latency (s)."""
    count = seconds = 0.0
    with urllib.request.urlopen(url, timeout=10) as response:
        for line in response.read().decode().splitlines():
            name, _, value = line.rpartition(" ")
            if name.startswith("persistence_latency_count{"):
                count += float(value)
            elif name.startswith("persistence_latency_sum{"):
                seconds += float(value)
    return count, seconds


def metrics_url(pid: int) -> str:
    """The dev server's Prometheus endpoint: the one of its listening ports that serves it."""
    ports = listening_ports(pid)
    for port in ports:
        url = f"http://127.0.0.1:{port}/metrics"
        with contextlib.suppress(OSError, ValueError):
            persistence(url)
            return url
    raise RuntimeError(f"no metrics endpoint among the dev server's ports {ports}")


@dataclass
class Meter:
    """The CPU time of each part of a configuration, between ``start()`` and ``stop()``."""

    workers: list[int]
    server: int
    model: int
    began: dict[str, float] = dataclasses.field(default_factory=dict)
    spent: dict[str, float] = dataclasses.field(default_factory=dict)
    ticks: tuple[int, int] = (0, 0)
    machine: float = 0.0

    def read(self) -> dict[str, float]:
        """Each part's CPU seconds so far (the client's own, not its children's)."""
        me = os.times()
        return {
            "workers": sum(tree_seconds(pid) for pid in self.workers),
            "server": tree_seconds(self.server),
            "model": tree_seconds(self.model),
            "client": me.user + me.system,
        }

    def start(self) -> None:
        """Mark the start of the timed phase."""
        self.began, self.ticks = self.read(), machine_busy()

    def stop(self) -> None:
        """Mark its end: each part's CPU seconds, and the machine's busy share of its cores."""
        now, (total, idle) = self.read(), machine_busy()
        self.spent = {part: now[part] - self.began[part] for part in now}
        busy = (total - self.ticks[0]) - (idle - self.ticks[1])
        self.machine = (os.cpu_count() or 1) * busy / max(1, total - self.ticks[0])


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
    base: str, workers: int, args: argparse.Namespace, env: dict[str, str], parts: Parts
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
    commits = f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{name}'"

    async def start() -> Any:
        return await client.start_session("swarm", PROMPT)

    with (
        processes(commands, env, parts.folder) as pids,
        psycopg.connect(url, autocommit=True) as db,
    ):
        await _sessions(start, args.warmup * workers, lambda h: h.result())
        empty = _one(db.execute(size).fetchone())
        meter = Meter(pids, parts.server, parts.model)
        committed = await _settled(db, commits)
        meter.start()
        began = time.perf_counter()
        handles = await _sessions(start, args.sessions, lambda h: h.result())
        wall = time.perf_counter() - began
        meter.stop()
        committed = await _settled(db, commits) - committed
        db.execute("CHECKPOINT")
        grown = _one(db.execute(size).fetchone()) - empty
    ids = {h.session_id for h in handles}
    found = await client.dbos.list_workflows_async(load_input=False, load_output=False)
    client.close()
    latencies = [
        (s.updated_at - s.created_at) / 1000
        for s in found
        if s.updated_at and s.created_at and s.workflow_id in ids
    ]
    figures = _figures("DBOS", workers, args.sessions, wall, latencies, meter)
    per_session = {"db_kb": grown / 1024, "db_ops": committed}
    return dataclasses.replace(figures, **{k: v / args.sessions for k, v in per_session.items()})


async def _settled(db: psycopg.Connection[Any], query: str) -> int:
    """A pg_stat counter a little over a second late. The polling workers keep their backends
    busy, and a busy backend reports at most about a second late, so reading both ends of a
    phase this way counts about the phase's own (a backend gone idle may report up to 10 s
    late: not waited for, a small share beside the polling here)."""
    await asyncio.sleep(1.1)
    db.execute("SELECT pg_stat_clear_snapshot()")
    return _one(db.execute(query).fetchone())


@dataclass(frozen=True)
class Parts:
    """What every configuration shares: the engine's server and the model server, by pid."""

    server: int
    model: int
    folder: Path


async def _sessions(
    start: Callable[[], Awaitable[Any]], count: int, result: Callable[[Any], Awaitable[Any]]
) -> list[Any]:
    """Start ``count`` sessions, at most 16 starts at once (as many clients would), and wait
    for every result."""
    gate = asyncio.Semaphore(16)

    async def one() -> Any:
        async with gate:
            return await start()

    handles = await asyncio.gather(*(one() for _ in range(count)))
    await asyncio.gather(*(result(h) for h in handles))
    return list(handles)


def _one(row: tuple[Any, ...] | None) -> int:
    assert row is not None
    return int(row[0])


async def run_temporal(
    address: str, workers: int, args: argparse.Namespace, env: dict[str, str], parts: Parts
) -> Figures:
    """N sessions through ``workers`` Temporal workers on one task queue."""
    from temporalio.client import Client  # noqa: PLC0415

    from swarmkit.temporal import SwarmPlugin, session_result, start_session  # noqa: PLC0415

    queue = f"scale-{uuid.uuid4().hex[:8]}"
    client = await Client.connect(address, plugins=[SwarmPlugin()])
    command = [*SWARMKIT, "temporal", "worker", "durable_scale:swarm", "--address", address]
    command += ["--task-queue", queue, "--max-concurrent-activities", str(args.concurrency)]
    command += ["--local-activities"] if args.local_activities else []

    async def start() -> Any:
        return await start_session(client, "swarm", PROMPT, task_queue=queue)

    url = metrics_url(parts.server)
    with processes([command] * workers, env, parts.folder) as pids:
        await _sessions(start, args.warmup * workers, session_result)
        meter = Meter(pids, parts.server, parts.model)
        ops, latency = persistence(url)
        meter.start()
        began = time.perf_counter()
        handles = await _sessions(start, args.sessions, session_result)
        wall = time.perf_counter() - began
        meter.stop()
        ops, latency = (a - b for a, b in zip(persistence(url), (ops, latency), strict=True))
    latencies, timeouts = [], 0
    for handle in handles:
        described = await handle.describe()
        if described.close_time and described.start_time:
            latencies.append((described.close_time - described.start_time).total_seconds())
        timeouts += sum(_timed_out(e) for e in (await handle.fetch_history()).events)
    figures = _figures("Temporal", workers, args.sessions, wall, latencies, meter)
    return dataclasses.replace(
        figures, db_ops=ops / args.sessions, db_busy=latency / wall, timeouts=timeouts
    )


def _timed_out(event: Any) -> bool:
    """A workflow or activity task that timed out: it waits out its timeout and runs again."""
    return event.WhichOneof("attributes") in (
        "activity_task_timed_out_event_attributes",
        "workflow_task_timed_out_event_attributes",
    )


def _figures(
    engine: str, workers: int, sessions: int, wall: float, latencies: list[float], meter: Meter
) -> Figures:
    latencies.sort()
    spent = meter.spent
    return Figures(
        engine=engine,
        workers=workers,
        sessions=sessions,
        per_second=sessions / wall,
        p50=statistics.median(latencies),
        p95=latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))],
        slowest=latencies[-1],
        cpu_ms=1000 * spent["workers"] / sessions,
        server_ms=1000 * spent["server"] / sessions,
        model_ms=1000 * spent["model"] / sessions,
        client_ms=1000 * spent["client"] / sessions,
        cores=sum(spent.values()) / wall,
        machine=meter.machine,
    )


def report(rows: list[Figures]) -> None:
    """The table, each engine's throughput ratio to its one-worker figure, and where the CPU
    went: milliseconds per session of each part, and the cores used against the machine's."""
    print(
        f"{'engine':<9}{'workers':>8}{'sess/s':>8}{'vs 1':>7}{'p50 s':>7}{'p95 s':>7}"
        f"{'worker ms':>10}{'server ms':>10}{'model ms':>9}{'client ms':>10}"
        f"{'cores':>7}{'machine':>8}{'DB ops':>7}{'DB busy':>8}{'DB KB':>7}"
    )
    for row in rows:
        one = next(
            r
            for r in rows
            if r.engine == row.engine
            and r.workers == min(x.workers for x in rows if x.engine == row.engine)
        )
        print(
            f"{row.engine:<9}{row.workers:>8}{row.per_second:>8.2f}"
            f"{row.per_second / one.per_second:>6.2f}x{row.p50:>7.2f}{row.p95:>7.2f}"
            f"{row.cpu_ms:>10.1f}{row.server_ms:>10.1f}{row.model_ms:>9.1f}{row.client_ms:>10.1f}"
            f"{row.cores:>7.2f}{row.machine:>8.2f}{row.db_ops:>7.1f}{row.db_busy:>8.2f}"
            f"{row.db_kb:>7.1f}{row.slowest:>7.1f}{row.timeouts:>9}"
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
                parts = Parts(server=pg.pid, model=server.pid, folder=folder)
                for workers in args.workers:
                    rows.append(await run_dbos(base, workers, args, env, parts))
                    print(rows[-1], file=sys.stderr, flush=True)
        if "temporal" in args.engines:
            from swarmkit.temporal import dev_server  # noqa: PLC0415

            (folder / "temporal").mkdir()
            with dev_server(folder / "temporal") as address:
                (temporal,) = [
                    pid
                    for pid in descendants(os.getpid())
                    if Path(f"/proc/{pid}/comm").read_text().strip() == "temporal"
                ]
                parts = Parts(server=temporal, model=server.pid, folder=folder)
                for workers in args.workers:
                    rows.append(await run_temporal(address, workers, args, env, parts))
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
    parser.add_argument("--sessions", type=int, default=96)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument(
        "--local-activities",
        action="store_true",
        help="Temporal: model and tool calls as local activities (the worker command's option)",
    )
    parser.add_argument(
        "--warmup", type=int, default=8, help="untimed sessions per worker before each row"
    )
    parser.add_argument("--engines", nargs="+", default=["dbos", "temporal"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rows = asyncio.run(measure(args, Path(folder)))
    print(
        f"{args.sessions} sessions per row after {args.warmup} per worker untimed, "
        f"{args.concurrency} at once per worker, model latency {args.latency * 1000:.0f} ms, "
        f"{os.cpu_count()} cores; CPU in ms per session"
        + ("; Temporal calls as local activities" if args.local_activities else "")
    )
    report(rows)


if __name__ == "__main__":
    main()
