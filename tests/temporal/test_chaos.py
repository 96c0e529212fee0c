"""The chaos run's shape on Temporal, smaller: courier sessions on two worker processes,
SIGKILLs at seeded points, each killed worker replaced. Every session finishes once with its
in-process result; no model activity completes twice; a tool call run again (in flight at a
kill) carries its first run's idempotency key."""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import pytest
from temporalio.client import Client

from swarmkit.temporal import SwarmPlugin, session_result, start_session
from tests.dbos.chaos import in_process
from tests.dbos.harness import lines
from tests.dbos.worker_app import COURIER_ROUNDS
from tests.temporal.harness import activity_counts, kill, new_queue, worker_process

pytestmark = [pytest.mark.kill, pytest.mark.slow]

SESSIONS = 16
KILLS = 3


async def test_chaos_on_temporal_finishes_every_session_exactly_once(
    temporal_address: str, tmp_path: Path
) -> None:
    """16 sessions, 2 workers, 3 seeded SIGKILLs."""
    rng = random.Random(45)
    queue = new_queue()
    client = await Client.connect(temporal_address, plugins=[SwarmPlugin()])
    prompts = [f"parcel-t{n}" for n in range(SESSIONS)]
    with ExitStack() as stack:

        def start() -> int:
            return stack.enter_context(worker_process(temporal_address, queue, tmp_path, {}))

        pids = [start(), start()]
        handles = [await start_session(client, "courier", p, task_queue=queue) for p in prompts]
        waiting = {asyncio.ensure_future(session_result(h)) for h in handles}
        for _ in range(KILLS):
            for _ in range(rng.randint(1, SESSIONS // (KILLS + 2))):
                _, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            victim = rng.randrange(len(pids))
            kill(pids[victim])
            pids[victim] = start()
        results = [await asyncio.wait_for(session_result(h), 120) for h in handles]
        histories = [await h.fetch_history() for h in handles]
    for prompt, result in zip(prompts, results, strict=True):
        expected = await in_process(prompt, tmp_path / "local")
        assert (result.final_output, result.trail) == (expected.final_output, expected.trail)
    for history in histories:
        counts = activity_counts(history)
        assert counts["swarmkit.model"]["completed"] == COURIER_ROUNDS + 1
        assert counts["swarmkit.tool"]["completed"] == COURIER_ROUNDS
    keys: dict[str, set[str]] = defaultdict(set)
    for line in lines(tmp_path / "tracked.txt"):
        parcel, _, key = line.partition("|")
        keys[parcel].add(key)
    assert all(len(keys[p]) == COURIER_ROUNDS for p in prompts)
