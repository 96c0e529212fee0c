"""Journal speed, SQLite beside Postgres in one run: appends, sessions, replay and listing.

Rows: the latency of appending a one-record step; bench/session.py's two-call session (real
``openai`` client, in-process transport) with the journal on vs off, interleaved in rounds,
medians compared; strict replay of a 1,000-step session; listing 100,000 sessions.
Postgres is a throwaway server started from the dev extra's binaries (fsync on), used once
as it comes and once with ``synchronous_commit=off`` set in the DSN, a per-connection choice
comparable to SQLite's ``synchronous=NORMAL`` (a crash of the machine may lose the latest
commits, never corrupt the journal).

Flat-cost rows (issue 14), SQLite only, also alone with ``--flat``: strict replay steps/s of
sessions of 100, 1,000 and 10,000 steps with the per-step loop cost; the journal's cost per
turn (scripted model, journal on minus off, CPU time) at 10 to 5,000 turns, beside the floor:
raw ``sqlite3`` with the journal's pragmas doing the same commits per turn with rows of the
same size, measured between the off and on samples, as a ratio (issue 46), once alone in a
loop and once made at the model calls of a run with the journal off (the same commits cost
more between a run's own work than back to back); the two-call session's on/off ratio round
by round. Repeats interleave the lengths; min/median/max are shown.
Run: ``make bench`` or ``.venv/bin/python bench/journal.py [--flat]``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import quote

import psycopg
from openai import AsyncOpenAI

import swarmkit
from swarmkit import Agent, OpenAIModel, Swarm, tool
from swarmkit.journal import Journal, JournalRecord, PostgresJournal, SQLiteJournal
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, text, tool_call

sys.path.insert(0, str(Path(__file__).parent))
sys.path.append(str(Path(__file__).parents[1]))  # after PYTHONPATH: a base checkout wins
from _size import TINY, size
from session import PROMPT, _client

from tests.journal.postgres_server import running_postgres

TOOL_TURNS = size(499, 3)
REPLAYS = size(7)
APPENDS = size(2_000, 5)
ROUNDS = size(15)
SESSIONS_PER_ROUND = size(30, 2)
LISTED = size(100_000, 10)
LISTINGS = size(5)
PAYLOAD = {
    "agent": "triage",
    "response": {"content": "I will hand you over to billing. " * 10, "tool_calls": []},
    "usage": {"prompt_tokens": 812, "completion_tokens": 37, "total_tokens": 849},
}

Store = Callable[[str], Journal]
"""A fresh, empty journal of one kind, named by a label unique within the run."""


@tool
def lookup(invoice_id: str) -> str:
    """Look up an invoice."""
    return f"{invoice_id}: paid"


def _long_swarm(model: ScriptedModel) -> Swarm:
    agent = Agent(name="clerk", instructions="Check every invoice.", tools=[lookup])
    return Swarm([agent], "clerk", model=model, max_turns=TOOL_TURNS + 1)


async def append_latency(journal: Journal) -> float:
    """Median seconds to append one one-record step to a growing session."""
    timings = []
    for seq in range(APPENDS):
        step = [JournalRecord(session_id="appends", seq=seq, kind="model_call", data=PAYLOAD)]
        started = time.perf_counter()
        await journal.append(step)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


async def replay_speed(journal: Journal) -> float:
    """Steps per second of strict replays of a long session (median of REPLAYS)."""
    script = [tool_call("lookup", invoice_id=f"A-{i}") for i in range(TOOL_TURNS)]
    await _long_swarm(ScriptedModel(*script, text("All paid."))).run(
        "check all", session_id="long", journal=journal
    )
    steps = len(await journal.read("long"))
    swarm = _long_swarm(ScriptedModel())
    timings = []
    for _ in range(REPLAYS):
        started = time.perf_counter()
        await swarm.replay("long", journal)
        timings.append(time.perf_counter() - started)
    return steps / statistics.median(timings)


async def session_rounds(journal: Journal) -> list[tuple[float, float]]:
    """Seconds per two-call session (real client) with the journal off and on, per round,
    interleaved after one warm-up round of each."""
    client = _client()
    swarm_on, swarm_off = _chat_swarm(client, journal), _chat_swarm(client, None)

    async def time_one(swarm: Swarm) -> float:
        started = time.perf_counter()
        for _ in range(SESSIONS_PER_ROUND):
            await swarm.run(PROMPT)
        return (time.perf_counter() - started) / SESSIONS_PER_ROUND

    await time_one(swarm_off)
    await time_one(swarm_on)
    return [(await time_one(swarm_off), await time_one(swarm_on)) for _ in range(ROUNDS)]


async def session_on_off(journal: Journal) -> tuple[float, float]:
    """Median seconds of a two-call session with the journal off and on, interleaved."""
    rounds = await session_rounds(journal)
    return statistics.median(off for off, _ in rounds), statistics.median(on for _, on in rounds)


def _chat_swarm(client: AsyncOpenAI, journal: Journal | None) -> Swarm:
    model = OpenAIModel("gpt-bench", client=client)
    triage = Agent(name="triage", instructions="You route tickets.")
    billing = Agent(name="billing", instructions="You handle billing.", handoffs=[])
    return Swarm([triage, billing], "triage", model=model, journal=journal)


async def listing_time(journal: Journal, fill: Callable[[], None]) -> float:
    """Median seconds to list LISTED sessions, their rows written in bulk by ``fill``."""
    await journal.next_seq("warm-up")  # creates the tables
    fill()
    timings = []
    for _ in range(LISTINGS):
        started = time.perf_counter()
        infos = await journal.sessions()
        timings.append(time.perf_counter() - started)
    assert len(infos) >= LISTED, len(infos)
    return statistics.median(timings)


def fill_sqlite(path: Path) -> Callable[[], None]:
    def fill() -> None:
        conn = sqlite3.connect(path)
        with conn:
            conn.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
                " INSERT INTO sessions (session_id, records, started_at, updated_at, finished,"
                " stop_reason, prompt, agents) SELECT 'bulk-' || i, 7, i, i + 1, 1,"
                " 'final_output', 'Why was I charged twice?', '[\"triage\",\"billing\"]' FROM n",
                (LISTED,),
            )
        conn.close()

    return fill


def fill_postgres(dsn: str) -> Callable[[], None]:
    def fill() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO swarmkit_sessions (session_id, records, started_at, updated_at,"
                " finished, stop_reason, prompt, agents) SELECT 'bulk-' || i, 7, i, i + 1, true,"
                " 'final_output', 'Why was I charged twice?', ARRAY['triage', 'billing']"
                " FROM generate_series(1, %s) AS i",
                (LISTED,),
            )
            conn.execute("ANALYZE swarmkit_sessions")

    return fill


async def measure(
    label: str, journal_at: Callable[[str], Journal], fill_at: Callable[[str], Callable[[], None]]
) -> dict[str, float]:
    """Every figure for one store; each measurement on an empty journal of its own."""
    figures: dict[str, float] = {}
    figures["append"] = await append_latency(journal_at("append"))
    off, on = await session_on_off(journal_at("sessions"))
    figures["off"], figures["on"] = off, on
    figures["replay"] = await replay_speed(journal_at("replay"))
    figures["listing"] = await listing_time(journal_at("listing"), fill_at("listing"))
    print(f"measured {label}", file=sys.stderr)
    return figures


async def measure_postgres(label: str, dsn: str, prefix: str, extra: str) -> dict[str, float]:
    """Every figure for Postgres, each measurement in a schema of its own."""
    dsns: dict[str, str] = {}

    def dsn_for(name: str) -> str:
        return dsns.setdefault(name, _schema_dsn(dsn, f"{prefix}_{name}", extra))

    return await measure(
        label,
        lambda name: PostgresJournal(dsn_for(name)),
        lambda name: fill_postgres(dsn_for(name)),
    )


def _schema_dsn(dsn: str, name: str, extra: str = "") -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {name}")
    return f"{dsn}?options={quote(f'-csearch_path={name}{extra}')}"


def report(columns: dict[str, dict[str, float]]) -> None:
    names = list(columns)
    rows: list[tuple[str, Callable[[dict[str, float]], str]]] = [
        ("append one step (median)", lambda f: f"{f['append'] * 1e6:,.0f} µs"),
        ("two-call session, journal off", lambda f: f"{f['off'] * 1e6:,.0f} µs"),
        ("two-call session, journal on", lambda f: f"{f['on'] * 1e6:,.0f} µs"),
        ("journal overhead per session", lambda f: f"{(f['on'] - f['off']) * 1e6:,.0f} µs"),
        ("journal on / off", lambda f: f"{f['on'] / f['off']:.2f}x"),
        ("replay (1,000-step session)", lambda f: f"{f['replay']:,.0f} steps/s"),
        (f"list {LISTED:,} sessions (median)", lambda f: f"{f['listing'] * 1e3:,.0f} ms"),
    ]
    table = [("", *names), *((title, *(cell(columns[n]) for n in names)) for title, cell in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print(
            "  ".join(
                cell.rjust(w) if i else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    base = columns[names[0]]
    base_overhead = base["on"] - base["off"]
    for name in names[1:]:
        overhead = columns[name]["on"] - columns[name]["off"]
        ratio = overhead / base_overhead
        print(f"{name}: journal overhead / {names[0]}'s = {ratio:.2f}x (target <= 3x)")


async def main() -> None:
    """SQLite, then Postgres as it comes, then Postgres with synchronous_commit=off."""
    columns: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        columns["SQLite"] = await measure(
            "SQLite",
            lambda label: SQLiteJournal(root / f"{label}.sqlite"),
            lambda label: fill_sqlite(root / f"{label}.sqlite"),
        )
    with running_postgres(durable=True) as server:
        columns["Postgres"] = await measure_postgres("Postgres", server.dsn, "d", "")
        columns["Postgres, async commit"] = await measure_postgres(
            "Postgres, async commit", server.dsn, "a", " -csynchronous_commit=off"
        )
    report(columns)


# -- flat costs (issue 14): replay and per-turn journal cost, SQLite ----------------------

REPLAY_LENGTHS = (100, 1_000, 10_000) if not TINY else (10,)
REPLAY_REPEATS = size(5)
TURN_COUNTS = (10, 100, 1_000, 5_000) if not TINY else (2,)
TURN_REPEATS = size(5)
TURNS_PER_SAMPLE = size(2_000, 4)
REPLAY_TARGET = 50_000
FLATNESS_TARGET = 1.5
TURN_COST_TARGET = 50e-6
SESSION_RATIO_TARGET = 1.10
FLOOR_TARGET = 2.0
TURN_CLOCK = time.process_time
"""The per-turn rows count CPU time: the machine may be shared, and waiting for a core is not
the journal's cost. WAL with ``synchronous=NORMAL`` waits for no disk at a commit, so the
journal and its floor both spend CPU only (a checkpoint's sync is left out of both)."""
TURN_ON_OFF_TARGET = 1.25


def _spread(values: list[float], scale: float = 1.0, unit: str = "") -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{low * scale:,.1f} / {mid * scale:,.1f} / {high * scale:,.1f}{unit}"


class _ForgetfulScript(ScriptedModel):
    """A scripted model that keeps no requests: 5,000 kept requests would hold 25 million
    references to messages, and the collector scanning them would be billed to the journal."""

    commits: Callable[[], None] | None = None
    """Raw ``sqlite3`` commits to make at each call (the floor inside a run), or none."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        response = await super().respond(request)
        self.requests.clear()
        if self.commits is not None:
            self.commits()
        return response


def _tool_session(turns: int, commits: Callable[[], None] | None = None) -> Swarm:
    """One agent that calls a tool ``turns - 1`` times, then answers: ``turns`` model calls;
    ``commits``, if given, runs at each model call."""
    script = [tool_call("lookup", invoice_id=f"A-{i}") for i in range(turns - 1)]
    agent = Agent(name="clerk", instructions="Check every invoice.", tools=[lookup])
    model = _ForgetfulScript(*script, text("All paid."))
    model.commits = commits
    return Swarm([agent], "clerk", model=model, max_turns=turns + 1)


async def replay_rows(root: Path) -> dict[int, list[float]]:
    """Seconds per replayed step of strict replays from SQLite, by session length in steps."""
    journals: dict[int, Journal] = {}
    for steps in REPLAY_LENGTHS:
        journal = SQLiteJournal(root / f"replay-{steps}.sqlite")
        # A tool turn journals two steps (model call, tool call); four more frame the run.
        await _tool_session(max(1, (steps - 3) // 2)).run(
            "check all", session_id="long", journal=journal
        )
        journals[len(await journal.read("long"))] = journal
    replayer = Swarm(
        [Agent(name="clerk", instructions="Check every invoice.", tools=[lookup])],
        "clerk",
        model=ScriptedModel(),
        max_turns=max(REPLAY_LENGTHS),
    )
    per_step: dict[int, list[float]] = {steps: [] for steps in journals}
    for _ in range(REPLAY_REPEATS):
        for steps, recorded in journals.items():
            started = time.perf_counter()
            await replayer.replay("long", recorded)
            per_step[steps].append((time.perf_counter() - started) / steps)
    return per_step


class TurnRows:
    """Per turn length, one value per repeat: the journal's cost (on minus off), the raw
    ``sqlite3`` floor doing the same commits alone and inside the run, and on / off."""

    def __init__(self, counts: Sequence[int] = TURN_COUNTS) -> None:
        self.costs: dict[int, list[float]] = {turns: [] for turns in counts}
        self.floors: dict[int, list[float]] = {turns: [] for turns in counts}
        self.in_run: dict[int, list[float]] = {turns: [] for turns in counts}
        self.on_off: dict[int, list[float]] = {turns: [] for turns in counts}
        self.shapes: dict[int, Shape] = {}


class Shape:
    """What the journal writes for a session of some turns: commits, rows and their size."""

    def __init__(self, commits: int, rows: int, row_bytes: int) -> None:
        self.commits, self.rows, self.row_bytes = commits, rows, row_bytes


async def session_shape(root: Path, turns: int) -> Shape:
    """Count the SQLite commits (appends, lease take and release) and records of one session
    of ``turns`` model calls, and the records' mean size."""
    path = root / f"shape-{turns}.sqlite"
    journal = _CountingJournal(path)
    await _tool_session(turns).run("check all", journal=journal)
    conn = sqlite3.connect(path)
    rows, size_ = conn.execute("SELECT count(*), avg(length(data)) FROM records").fetchone()
    conn.close()
    return Shape(journal.writes, rows, round(size_))


class RawFloor:
    """Raw ``sqlite3`` on a file with the journal's pragmas (WAL, ``synchronous=NORMAL``,
    autocommit with explicit ``BEGIN IMMEDIATE``) and its records table."""

    def __init__(self, path: Path) -> None:
        self.per_turn = raw_floor(path)
        """CPU seconds per turn of a session's commits, alone in a loop (see raw_floor)."""
        self._conn = sqlite3.connect(path, isolation_level=None)
        self._conn.execute("PRAGMA synchronous=NORMAL")  # per connection; WAL is the file's
        self._sessions = iter(range(sys.maxsize))

    def in_run(self, shape: Shape, turns: int) -> Callable[[], None]:
        """What a model call of a session of ``turns`` runs to make the session's commits,
        its rows spread over them, between the run's own work (a new session each time)."""
        commits_per_call = max(1, round(shape.commits / turns))
        rows = max(1, round(shape.rows / shape.commits))
        data = "x" * shape.row_bytes
        session_id, seq = f"r-{next(self._sessions)}", 0

        def commit() -> None:
            nonlocal seq
            for _ in range(commits_per_call):
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany(
                    "INSERT INTO records (session_id, seq, kind, data, written_at)"
                    " VALUES (?, ?, 'model_call', ?, ?)",
                    [(session_id, seq + i, data, time.time()) for i in range(rows)],
                )
                self._conn.execute("COMMIT")
                seq += rows

        return commit


def raw_floor(path: Path) -> Callable[[Shape, int, int], float]:
    """Raw ``sqlite3`` on a file with the journal's pragmas (WAL, ``synchronous=NORMAL``,
    autocommit with explicit ``BEGIN IMMEDIATE``) and its records table: CPU seconds per turn
    of the same commits, the same rows spread over them, rows of the same size."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(
        "CREATE TABLE records (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,"
        " seq INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL, written_at REAL NOT NULL,"
        " UNIQUE (session_id, seq))"
    )
    counter = iter(range(sys.maxsize))

    def per_turn(shape: Shape, sessions: int, turns: int) -> float:
        data = "x" * shape.row_bytes
        started = TURN_CLOCK()
        for _ in range(sessions):
            session_id, seq = f"s-{next(counter)}", 0
            for commit in range(shape.commits):
                rows = shape.rows * (commit + 1) // shape.commits - seq
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(
                    "INSERT INTO records (session_id, seq, kind, data, written_at)"
                    " VALUES (?, ?, 'model_call', ?, ?)",
                    [(session_id, seq + i, data, time.time()) for i in range(rows)],
                )
                conn.execute("COMMIT")
                seq += rows
        return (TURN_CLOCK() - started) / (sessions * turns)

    return per_turn


async def turn_cost_rows(
    root: Path, counts: Sequence[int] = TURN_COUNTS, repeats: int = TURN_REPEATS
) -> TurnRows:
    """Journal cost per turn (CPU seconds, on minus off) by session length in model calls,
    with the raw ``sqlite3`` floor for the same commits measured between them: alone in a
    loop, and inside the run (the run with the journal off making the raw commits at its
    model calls, minus the run alone)."""
    rows = TurnRows(counts)
    journal = SQLiteJournal(root / "turns.sqlite")
    floor = RawFloor(root / "floor.sqlite")
    for turns in counts:
        rows.shapes[turns] = await session_shape(root, turns)

    async def per_turn(turns: int, on: bool, raw: bool = False) -> float:
        sessions = max(1, TURNS_PER_SAMPLE // turns)
        shape = rows.shapes[turns]
        swarms = [
            _tool_session(turns, floor.in_run(shape, turns) if raw else None)
            for _ in range(sessions)
        ]
        started = TURN_CLOCK()
        for swarm in swarms:
            await swarm.run("check all", journal=journal if on else None)
        return (TURN_CLOCK() - started) / (sessions * turns)

    await per_turn(counts[0], True)  # warm-up: tables, caches
    await per_turn(counts[0], False, raw=True)
    for _ in range(repeats):
        for turns in counts:
            off = await per_turn(turns, False)
            alone = floor.per_turn(rows.shapes[turns], max(1, TURNS_PER_SAMPLE // turns), turns)
            in_run = await per_turn(turns, False, raw=True) - off
            on = await per_turn(turns, True)
            rows.costs[turns].append(on - off)
            rows.floors[turns].append(alone)
            rows.in_run[turns].append(in_run)
            rows.on_off[turns].append(on / off)
    return rows


async def session_ratios(journal: Journal) -> list[float]:
    """The two-call session (real client) with the journal on / off, one ratio per round."""
    return [on / off for off, on in await session_rounds(journal)]


class _CountingJournal(SQLiteJournal):
    """A SQLite journal that counts its write transactions (appends, lease takes, releases)."""

    writes = 0

    async def append(self, records: Sequence[JournalRecord]) -> None:
        self.writes += 1
        await super().append(records)

    async def acquire_lease(self, session_id: str, *, owner: str, ttl: float) -> None:
        self.writes += 1
        await super().acquire_lease(session_id, owner=owner, ttl=ttl)

    async def release_lease(self, session_id: str, *, owner: str) -> None:
        self.writes += 1
        await super().release_lease(session_id, owner=owner)


async def writes_per_session(root: Path) -> tuple[int, int]:
    """SQLite write transactions of one two-call session and of one 10-turn tool session."""
    journal = _CountingJournal(root / "counted.sqlite")
    await _chat_swarm(_client(), journal).run(PROMPT)
    chat, journal.writes = journal.writes, 0
    await _tool_session(10).run("check all", journal=journal)
    return chat, journal.writes


def print_turn_rows(turns: TurnRows) -> None:
    """The journal's cost per turn beside the raw ``sqlite3`` floor, min / median / max."""
    print("journal cost per turn, on minus off (scripted model, CPU time, min / median / max)")
    print("  beside raw sqlite3 doing the same commits with the same pragmas, in the same run:")
    print("  alone in a loop (floor), and made at the run's model calls (floor in the run)")
    for count in TURN_COUNTS:
        costs, floors, in_run = turns.costs[count], turns.floors[count], turns.in_run[count]
        shape = turns.shapes[count]
        ratios = [c / f for c, f in zip(costs, floors, strict=True)]
        run_ratios = [c / f for c, f in zip(costs, in_run, strict=True)]
        print(
            f"  {count:>6,} turns: {_spread(costs, 1e6, ' µs')}; floor "
            f"{_spread(floors, 1e6, ' µs')} ({shape.commits / count:.2f} commits, "
            f"{shape.rows / count:.2f} rows of {shape.row_bytes} B a turn), in the run "
            f"{_spread(in_run, 1e6, ' µs')}; journal / floor {_spread(ratios, 1, 'x')}, "
            f"/ floor in the run {_spread(run_ratios, 1, 'x')}; on / off "
            f"{_spread(turns.on_off[count], 1, 'x')}"
        )


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


async def flat_main() -> None:
    """Print the flat-cost rows and one summary line per target."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        replays = await replay_rows(root)
        turns = await turn_cost_rows(root)
        ratios = await session_ratios(SQLiteJournal(root / "two-call.sqlite"))
        chat_writes, tool_writes = await writes_per_session(root)
    print(f"swarmkit from {Path(swarmkit.__file__).parent}")
    print("strict replay from SQLite (min / median / max over repeats)")
    for steps, values in replays.items():
        rates = [1 / v for v in values]
        print(
            f"  {steps:>6,} steps: {_spread(rates, 1e-3, 'k steps/s')}; per step "
            f"{_spread(values, 1e6, ' µs')}"
        )
    print_turn_rows(turns)
    print(f"two-call session, real client, journal on / off: {_spread(ratios, 1, 'x')}")
    print(
        f"SQLite write transactions: {chat_writes} per two-call session, "
        f"{tool_writes} per 10-turn tool session (lease take and release included)"
    )
    medians = {steps: statistics.median(values) for steps, values in replays.items()}
    slowest = max(medians.values())
    flatness = medians[max(medians)] / medians[min(medians)]
    print(
        f"summary: replay >= {REPLAY_TARGET:,} steps/s at every length: "
        f"slowest {1 / slowest:,.0f} steps/s, {_verdict(1 / slowest >= REPLAY_TARGET)}"
    )
    print(
        f"summary: per-step replay cost flat (10,000 / 100 steps <= {FLATNESS_TARGET}x): "
        f"{flatness:.2f}x, {_verdict(flatness <= FLATNESS_TARGET)}"
    )
    worst = max(statistics.median(values) for values in turns.costs.values())
    print(
        f"summary: journal cost per turn <= {TURN_COST_TARGET * 1e6:.0f} µs: worst median "
        f"{worst * 1e6:.0f} µs, {_verdict(worst <= TURN_COST_TARGET)}"
    )
    floor_ratio = max(
        statistics.median(c / f for c, f in zip(turns.costs[n], turns.floors[n], strict=True))
        for n in TURN_COUNTS
    )
    print(
        f"summary: journal per turn within {FLOOR_TARGET:.0f}x of raw sqlite3 doing the same "
        f"commits: worst median {floor_ratio:.2f}x, {_verdict(floor_ratio <= FLOOR_TARGET)}"
    )
    in_run_ratio = max(
        statistics.median(c / f for c, f in zip(turns.costs[n], turns.in_run[n], strict=True))
        for n in TURN_COUNTS
    )
    print(
        f"summary: the same, the floor's commits made inside the run: worst median "
        f"{in_run_ratio:.2f}x, {_verdict(in_run_ratio <= FLOOR_TARGET)}"
    )
    on_off = max(statistics.median(values) for values in turns.on_off.values())
    print(
        f"summary: tool turns journal on / off <= {TURN_ON_OFF_TARGET}x: worst median "
        f"{on_off:.2f}x, {_verdict(on_off <= TURN_ON_OFF_TARGET)}"
    )
    ratio = statistics.median(ratios)
    print(
        f"summary: two-call session journal on / off <= {SESSION_RATIO_TARGET}x: "
        f"{ratio:.2f}x, {_verdict(ratio <= SESSION_RATIO_TARGET)}"
    )


if __name__ == "__main__":
    asyncio.run(flat_main())
    if "--flat" not in sys.argv:
        asyncio.run(main())
