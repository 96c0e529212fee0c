"""``swarmkit temporal worker``: a real worker process on the dev server, stopped by pid."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.client import Client

from swarmkit.cli import main
from swarmkit.temporal import SwarmPlugin, follow, session_result, start_session
from tests.dbos.harness import SWARMKIT, command
from tests.temporal.harness import activity_counts, gate_server, new_queue


def test_the_command_explains_itself(capsys: pytest.CaptureFixture[str]) -> None:
    """--help names the server, the task queue, the models and the concurrency options."""
    assert main(["temporal", "worker", "--help"]) == 0
    text = capsys.readouterr().out
    for option in ("--address", "--task-queue", "--models", "--max-concurrent-activities"):
        assert option in text


@pytest.mark.slow
async def test_the_worker_command_serves_a_swarm_with_its_own_models(
    temporal_address: str, tmp_path: Path
) -> None:
    """A session on the command's task queue runs to its end with the swarm's own model;
    its events are followed; SIGTERM stops the worker with exit code 0."""
    queue = new_queue()
    client = await Client.connect(temporal_address, plugins=[SwarmPlugin()])
    arguments = [*SWARMKIT, "temporal", "worker", "tests.temporal.swarms:clerk"]
    arguments += ["--address", temporal_address, "--task-queue", queue]
    async with gate_server() as (gates, gate_env):
        gates.open("tool")
        env = {**gate_env, "SWARMKIT_TEST_STATE": str(tmp_path)}
        with command(arguments, env, tmp_path / "worker.log"):
            handle = await start_session(client, "clerk", "where is A-1?", task_queue=queue)
            kinds = [type(e).__name__ async for e in follow(handle)]
            result = await asyncio.wait_for(session_result(handle), 60)
            counts = activity_counts(await handle.fetch_history())
    assert result.final_output == "A-1 was delivered."
    assert kinds[0] == "RunStarted" and kinds[-1] == "RunFinished"
    assert counts["swarmkit.model"] == {"scheduled": 2, "completed": 2}
    log = (tmp_path / "worker.log").read_text()
    assert f"serving clerk on task queue {queue}" in log


def test_a_model_without_a_name_needs_models(capsys: pytest.CaptureFixture[str]) -> None:
    """--models that is not a mapping is a usage error (exit 2) that says what it is."""
    code = main(["temporal", "worker", "tests.temporal.swarms:clerk", "--models", "os:sep"])
    assert code == 2
    assert "--models os:sep is str, not a mapping" in capsys.readouterr().err
