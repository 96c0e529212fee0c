"""A served swarm's tasks outlive its server: a durable task store in the journal's SQLite file
or in PostgreSQL, scoped per principal (a2a-sdk client, loopback)."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from a2a.helpers import get_text_parts
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.errors import TaskNotFoundError

from swarmkit import Agent, ConfigurationError, Swarm
from swarmkit.a2a import A2AServer, DatabaseTasks, Principal, task_store
from swarmkit.journal import InMemoryJournal, Journal, PostgresJournal, SQLiteJournal
from swarmkit.testing import ScriptedModel, text, transfer
from tests.interop.a2a_helpers import a2a_client, decision, responses, user_message
from tests.interop.test_a2a_server import _GatedModel
from tests.interop.test_a2a_trust import _refunds
from tests.journal.conftest import fresh_schema
from tests.journal.postgres_server import PostgresServer

TOKEN = "run-token-0123456789abcdef"
DECISION_TOKEN = "decision-token-0123456789abcdef"
OTHER_TOKEN = "other-team-token-0123456789abcdef"


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """An empty schema of the shared PostgreSQL server."""
    return fresh_schema(postgres_server)


async def _pause(model: ScriptedModel, journal: Journal, tasks: str) -> Task:
    """Serve the refund swarm, send a refund that pauses, and stop the server."""
    swarm = _refunds(model, journal)
    async with (
        A2AServer(swarm, journal, token=TOKEN, task_store=tasks) as server,
        a2a_client(server.url, TOKEN, streaming=False) as caller,
    ):
        (first,) = await responses(caller, user_message("refund 50"))
    return first.task


async def _decide_after_restart(
    model: ScriptedModel, journal: Journal, tasks: str, waiting: Task
) -> tuple[Task, Task]:
    """A new server on the same journal and store: the caller still finds the task, and the
    decider's approval resumes it. The task as found, and as decided."""
    swarm = _refunds(model, journal)
    async with (
        A2AServer(
            swarm, journal, token=TOKEN, decision_token=DECISION_TOKEN, task_store=tasks
        ) as server,
        a2a_client(server.url, TOKEN, streaming=False) as caller,
        a2a_client(server.url, DECISION_TOKEN, streaming=False) as decider,
    ):
        found = await caller.get_task(GetTaskRequest(id=waiting.id))
        (done,) = await responses(decider, decision(found, "approve"))
    return found, done.task


async def _check_restart(journal: Journal, restarted: Journal, tasks: str) -> None:
    model = ScriptedModel(transfer("billing", amount=50), text("Refunded 50."))
    waiting = await _pause(model, journal, tasks)
    found, done = await _decide_after_restart(model, restarted, tasks, waiting)

    assert found.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_text_parts(done.artifacts[0].parts) == ["Refunded 50."]
    records = await restarted.read(f"a2a-{waiting.context_id}")
    (resumed,) = [r.data for r in records if r.kind == "resumed"]
    assert resumed["decided_by"] == "a2a:decider"


async def test_a_restarted_server_resumes_a_waiting_task_from_the_sqlite_journal(
    tmp_path: Path,
) -> None:
    """Tasks live in the journal's SQLite file by default: a waiting task survives a restart
    and completes on the decider's approval, which the journal records."""
    path = tmp_path / "runs.sqlite"
    with SQLiteJournal(path) as journal, SQLiteJournal(path) as restarted:
        await _check_restart(journal, restarted, "journal")

    with closing(sqlite3.connect(path)) as kept:
        tables = kept.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    assert "a2a_tasks" in {name for (name,) in tables}


async def test_a_restarted_server_resumes_a_waiting_task_from_postgres(
    postgres_dsn: str,
) -> None:
    """The same with the journal and the tasks in PostgreSQL (the task store named by URL)."""
    async with PostgresJournal(postgres_dsn) as journal, PostgresJournal(postgres_dsn) as again:
        await _check_restart(journal, again, postgres_dsn)


async def test_finished_tasks_stay_scoped_to_their_principal_after_a_restart(
    tmp_path: Path,
) -> None:
    """A completed task is still there after a restart, for its owner only."""
    path = tmp_path / "runs.sqlite"
    other = Principal(name="other-team", token=OTHER_TOKEN)
    with SQLiteJournal(path) as journal:
        swarm = _refunds(ScriptedModel(text("Hello.")), journal)
        async with (
            A2AServer(swarm, journal, token=TOKEN) as server,
            a2a_client(server.url, TOKEN, streaming=False) as caller,
        ):
            (sent,) = await responses(caller, user_message("hello"))
        async with (
            A2AServer(swarm, journal, token=TOKEN, principals=[other]) as server,
            a2a_client(server.url, TOKEN, streaming=False) as caller,
            a2a_client(server.url, OTHER_TOKEN, streaming=False) as stranger,
        ):
            mine = await caller.list_tasks(ListTasksRequest())
            with pytest.raises(TaskNotFoundError):
                await stranger.get_task(GetTaskRequest(id=sent.task.id))
            theirs = await stranger.list_tasks(ListTasksRequest())

    assert [(t.id, t.status.state) for t in mine.tasks] == [
        (sent.task.id, TaskState.TASK_STATE_COMPLETED)
    ]
    assert list(theirs.tasks) == []


async def test_a_streamed_answer_is_kept_whole_for_the_next_server(tmp_path: Path) -> None:
    """A streaming client reads the answer in chunks while the task works; the stored task,
    read by a restarted server, holds the whole answer once."""
    answer = "Your order ships today from the north warehouse."
    path = tmp_path / "runs.sqlite"
    with SQLiteJournal(path) as journal:
        swarm = Swarm([Agent(name="support")], "support", model=ScriptedModel(text(answer)))
        async with (
            A2AServer(swarm, journal, token=TOKEN) as server,
            a2a_client(server.url, TOKEN, streaming=True) as client,
        ):
            stream = await responses(client, user_message("where is my order?"))
        async with (
            A2AServer(swarm, journal, token=TOKEN) as server,
            a2a_client(server.url, TOKEN, streaming=False) as client,
        ):
            kept = await client.get_task(GetTaskRequest(id=stream[0].task.id))

    chunks = [r for r in stream if r.HasField("artifact_update")]
    assert len(chunks) > 2
    assert kept.status.state == TaskState.TASK_STATE_COMPLETED
    assert [get_text_parts(a.parts) for a in kept.artifacts] == [[answer]]


async def test_a_task_cancelled_while_working_stays_cancelled_after_a_restart(
    tmp_path: Path,
) -> None:
    """A working task is cancelled; the cancel is written, so the next server reports it
    cancelled."""
    model = _GatedModel()
    path = tmp_path / "runs.sqlite"
    with SQLiteJournal(path) as journal:
        swarm = Swarm([Agent(name="support")], "support", model=model)
        async with (
            A2AServer(swarm, journal, token=TOKEN) as server,
            a2a_client(server.url, TOKEN, streaming=True) as client,
        ):
            stream = client.send_message(user_message("slow please"))
            first = await anext(stream)
            await model.called.wait()
            await client.cancel_task(CancelTaskRequest(id=first.task.id))
            _ = [r async for r in stream]
        async with (
            A2AServer(swarm, journal, token=TOKEN) as server,
            a2a_client(server.url, TOKEN, streaming=False) as client,
        ):
            kept = await client.get_task(GetTaskRequest(id=first.task.id))

    assert kept.status.state == TaskState.TASK_STATE_CANCELED


def _task(state: TaskState) -> Task:
    return Task(id="task-1", context_id="ctx-1", status=TaskStatus(state=state))


async def test_a_task_is_written_when_it_starts_working_not_when_submitted(
    tmp_path: Path,
) -> None:
    """A task id the server has just made is found nowhere; its submitted task is kept in
    the server's memory only; its first working update is written, so another server on the
    file finds it."""
    url, calls = f"sqlite:///{tmp_path / 'tasks.sqlite'}", ServerCallContext()
    store, other = DatabaseTasks(url), DatabaseTasks(url)
    try:
        store.expect_new("task-1", calls)
        assert await store.get("task-1", calls) is None
        await store.save(_task(TaskState.TASK_STATE_SUBMITTED), calls)
        submitted = await store.get("task-1", calls)
        assert submitted is not None and submitted.status.state == TaskState.TASK_STATE_SUBMITTED
        assert await other.get("task-1", calls) is None
        await store.save(_task(TaskState.TASK_STATE_WORKING), calls)
        found = await other.get("task-1", calls)
    finally:
        await store.aclose()
        await other.aclose()

    assert found is not None and found.status.state == TaskState.TASK_STATE_WORKING


async def test_a_write_waits_on_the_loop_while_another_connection_holds_the_file(
    tmp_path: Path,
) -> None:
    """While another connection holds the file's write lock, a task's write waits without
    blocking the event loop, and lands once the lock is released."""
    path, calls = tmp_path / "tasks.sqlite", ServerCallContext()
    store = DatabaseTasks(f"sqlite:///{path}")
    await store.initialize()
    with closing(sqlite3.connect(path, isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")
        saving = asyncio.create_task(store.save(_task(TaskState.TASK_STATE_WORKING), calls))
        for _ in range(3):
            await asyncio.sleep(0)  # the loop still runs other work: the write tried, waits
        waited = not saving.done()
        holder.execute("ROLLBACK")
        await saving
    reread = DatabaseTasks(f"sqlite:///{path}")
    found = await reread.get("task-1", calls)
    await store.aclose()
    await reread.aclose()

    assert waited
    assert found is not None and found.status.state == TaskState.TASK_STATE_WORKING


def test_the_task_store_follows_the_journal_unless_named(tmp_path: Path) -> None:
    """Durable beside a SQLite journal, in memory beside an in-memory one; a Postgres journal
    needs the store's URL; a bad name or URL is refused at once."""
    memory = InMemoryJournal()
    assert isinstance(task_store(memory, "journal"), InMemoryTaskStore)
    assert isinstance(task_store(SQLiteJournal(tmp_path / "j.sqlite"), "memory"), InMemoryTaskStore)
    with pytest.raises(ConfigurationError, match="task_store='postgresql://"):
        task_store(PostgresJournal("postgresql://u:hunter2@127.0.0.1/db"), "journal")
    with pytest.raises(ConfigurationError, match="sqlite:// or postgresql://") as refused:
        task_store(memory, "mysql://u:hunter2@127.0.0.1/db")
    assert "hunter2" not in str(refused.value)
    with pytest.raises(ConfigurationError, match="does not exist"):
        task_store(memory, str(tmp_path / "missing" / "tasks.sqlite"))
