"""The DBOS chaos run, at any size: N courier sessions on one Postgres, W worker processes,
K SIGKILLs at seeded points (each killed worker restarts under its own id and recovers its
sessions). Used by the marked test at a small size and by ``bench/durable_chaos.py`` at
200 sessions and 10 kills.

What it checks, for every session: it finished exactly once with the in-process result; its
journal holds each model call once (no journaled model call repeated); and every tool call
that ran twice (in flight at a kill) ran again with the idempotency key of its first run."""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter, defaultdict
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from swarmkit.dbos import SessionClient
from swarmkit.journal import PostgresJournal
from swarmkit.result import RunResult
from tests.dbos.harness import lines, worker_process
from tests.dbos.worker_app import COURIER_ROUNDS, courier, swarms
from tests.temporal.harness import kill
from tests.temporal.swarms import STATE_DIR

LIMIT = 120.0
"""Seconds one wait for a session may take before the run fails."""


@dataclass(frozen=True)
class ChaosReport:
    """What a chaos run saw."""

    sessions: int
    kills: int
    seconds: float
    model_calls: int
    model_repeats: int
    """Model calls made twice (in flight at a kill; never journaled twice)."""
    tool_calls: int
    tool_repeats: int
    """Tool calls made twice, each with its first run's idempotency key."""


async def chaos_run(
    database_url: str,
    journal_dsn: str,
    state: Path,
    *,
    sessions: int,
    kills: int,
    seed: int = 30,
    workers: int = 3,
) -> ChaosReport:
    """Run the chaos; AssertionError names the first session that broke a promise."""
    rng = random.Random(seed)
    ids = [f"c-{n}" for n in range(sessions)]
    env = {"SWARMKIT_TEST_STATE": str(state)}
    client = SessionClient(swarms(), database_url=database_url)
    began = time.perf_counter()
    try:
        for session_id in ids:
            await client.start_session("courier", f"parcel-{session_id}", session_id=session_id)
        with ExitStack() as stack:

            def start(name: str) -> int:
                return stack.enter_context(
                    worker_process(database_url, name, state, env, journal=journal_dsn)
                )

            pids = {name: start(name) for name in (f"w{n}" for n in range(workers))}
            running = list(ids)
            for _ in range(kills):
                for _ in range(rng.randint(1, max(1, sessions // (kills + 2)))):
                    done = await asyncio.wait_for(client.first_finished(running), LIMIT)
                    running.remove(done)
                victim = rng.choice(sorted(pids))
                kill(pids[victim])
                pids[victim] = start(victim)  # it recovers its own sessions as it launches
            results = [
                await asyncio.wait_for(client.session_handle(i).result(), LIMIT) for i in ids
            ]
        seconds = time.perf_counter() - began
    finally:
        client.close()
    for session_id, result in zip(ids, results, strict=True):
        expected = await in_process(f"parcel-{session_id}", state / "local")
        assert result.final_output == expected.final_output, session_id
        assert (result.trail, dict(result.usage)) == (expected.trail, dict(expected.usage))
    await _check_journals(journal_dsn, ids)
    return _report(state, sessions, kills, seconds)


async def in_process(prompt: str, state: Path) -> RunResult:
    """The courier's result run in this process (its notes kept apart, in ``state``)."""
    state.mkdir(exist_ok=True)
    before = os.environ.get(STATE_DIR)
    os.environ[STATE_DIR] = str(state)
    try:
        return await courier.run(prompt)
    finally:
        if before is None:
            del os.environ[STATE_DIR]
        else:
            os.environ[STATE_DIR] = before


async def _check_journals(journal_dsn: str, ids: list[str]) -> None:
    journal = PostgresJournal(journal_dsn)
    try:
        for session_id in ids:
            kinds = [r.kind for r in await journal.read(session_id)]
            assert kinds.count("model_call") == COURIER_ROUNDS + 1, session_id
            assert kinds.count("run_finished") == 1 and kinds[-1] == "run_finished", session_id
    finally:
        journal.close()


def _report(state: Path, sessions: int, kills: int, seconds: float) -> ChaosReport:
    calls = Counter(lines(state / "courier.txt"))
    assert len(calls) >= sessions * (COURIER_ROUNDS + 1)
    assert max(calls.values()) <= 2, "a model call ran more than twice"
    keys: dict[str, list[str]] = defaultdict(list)
    for line in lines(state / "tracked.txt"):
        parcel, _, key = line.partition("|")
        keys[parcel].append(key)
    tool_calls = tool_repeats = 0
    for parcel, seen in keys.items():
        distinct = set(seen)
        # one key per tool round; a round run again (in flight at a kill) repeats its key
        assert len(distinct) == COURIER_ROUNDS, f"{parcel}: {len(distinct)} keys"
        tool_calls += len(distinct)
        tool_repeats += len(seen) - len(distinct)
    return ChaosReport(
        sessions=sessions,
        kills=kills,
        seconds=seconds,
        model_calls=sum(calls.values()),
        model_repeats=sum(count - 1 for count in calls.values()),
        tool_calls=tool_calls,
        tool_repeats=tool_repeats,
    )
