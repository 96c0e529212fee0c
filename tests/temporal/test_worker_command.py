"""``swarmkit temporal worker``: a real worker process on the dev server, stopped by pid."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from temporalio.client import Client

from swarmkit.cli import _parser, main
from swarmkit.temporal import SwarmPlugin, follow, session_result, start_session
from swarmkit.temporal._worker import worker_command
from tests.dbos.harness import SWARMKIT, command
from tests.temporal.harness import activity_counts, gate_server, new_queue
from tests.temporal.swarms import STATE_DIR


def test_the_command_explains_itself(capsys: pytest.CaptureFixture[str]) -> None:
    """--help names the server, the task queue, the models, the concurrency and local activities."""
    assert main(["temporal", "worker", "--help"]) == 0
    text = capsys.readouterr().out
    for option in (
        "--address",
        "--task-queue",
        "--models",
        "--max-concurrent-activities",
        "--local-activities",
    ):
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


async def test_local_activities_run_the_calls_in_the_sessions_own_worker(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --local-activities the model and tool calls are recorded as markers in the
    session's history, not scheduled as activities through the server's task queue."""
    queue = new_queue()
    arguments = ["temporal", "worker", "tests.temporal.swarms:clerk", "--local-activities"]
    args = _parser().parse_args([*arguments, "--address", temporal_address, "--task-queue", queue])
    client = await Client.connect(temporal_address, plugins=[SwarmPlugin()])
    async with gate_server() as (gates, gate_env):
        gates.open("tool")
        monkeypatch.setenv(STATE_DIR, str(tmp_path))
        for name, value in gate_env.items():
            monkeypatch.setenv(name, value)
        serving = asyncio.create_task(worker_command(args))
        try:
            handle = await start_session(client, "clerk", "where is A-1?", task_queue=queue)
            result = await asyncio.wait_for(session_result(handle), 60)
            history = await handle.fetch_history()
        finally:
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
    assert result.final_output == "A-1 was delivered."
    assert activity_counts(history) == {}
    markers = [e for e in history.events if e.HasField("marker_recorded_event_attributes")]
    assert len(markers) >= 3  # the fingerprint, two model calls and the tool call
