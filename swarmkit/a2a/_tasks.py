"""Where a served swarm keeps its A2A tasks: in memory, or in a database that outlives the server.

A durable store is the a2a-sdk's own database task store (SQLAlchemy) on one table,
``a2a_tasks``, with a row per task and the principal that owns it; beside a SQLite journal it
lives in the journal's own file, so a restarted server finds the tasks that wait for a
decision and resumes their runs.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.models import TaskMixin
from a2a.server.tasks import DatabaseTaskStore, InMemoryTaskStore, TaskStore
from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task, TaskState
from sqlalchemy import String, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from swarmkit.a2a._principals import owner_of
from swarmkit.a2a._task_rows import TaskRows
from swarmkit.exceptions import ConfigurationError
from swarmkit.journal import InMemoryJournal, Journal, SQLiteJournal

TASKS_TABLE = "a2a_tasks"
"""The table a durable task store keeps its tasks in."""

TASK_STORES = ("journal", "memory")
"""The named task stores: ``journal`` (durable beside a durable journal) and ``memory``."""

_DRIVERS = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+psycopg"}
_ALIASES = {"postgres": "postgresql"}


class _Tables(DeclarativeBase):
    """The tables of swarmkit's A2A task store (apart from the a2a-sdk's own defaults)."""


class _TaskRow(TaskMixin, _Tables):
    """A task as a row; ids as long as the context ids a served swarm accepts."""

    __tablename__ = TASKS_TABLE
    id: Mapped[str] = mapped_column(String(255), primary_key=True, index=True)
    context_id: Mapped[str] = mapped_column(String(255), nullable=False)


class DatabaseTasks(DatabaseTaskStore):
    """The a2a-sdk's database task store on the ``a2a_tasks`` table of ``url`` (SQLite via
    aiosqlite, PostgreSQL via psycopg), each task owned by the principal that created it.

    ``before`` runs once before the table is made (a SQLite journal creates its file first,
    so the file is a journal with one more table). ``aclose()`` closes its connections.

    A task is written when it starts working, and again when it waits or finishes. Its
    updates in between (submitted, progress notes, answer chunks) stay in memory, where this
    server reads them: what a restart needs is always written, and a streamed answer costs no
    write per chunk. In a SQLite file a task's lookup and writes run as single statements on
    the loop's thread (see ``TaskRows``); the async engine makes the table and lists tasks.
    """

    def __init__(self, url: str, *, before: Callable[[], Awaitable[Any]] | None = None) -> None:
        engine = create_async_engine(_async_url(url))
        if engine.dialect.name == "sqlite":
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        super().__init__(engine, owner_resolver=owner_of)
        # The SDK's default row shape on a table of our own (its own class would be the
        # table "tasks", with ids of 36 characters at most).
        self.task_model = _TaskRow  # type: ignore[assignment]
        self._before = before
        self._live: dict[tuple[str, str], Task] = {}
        """The latest update of each task this server runs (submitted or working), by owner
        and task id; a working task was written when it started working."""
        self._new: dict[tuple[str, str], None] = {}
        """The ids this server made for tasks not yet saved, by owner (oldest first)."""
        self._rows = _sqlite_rows(engine)

    async def initialize(self) -> None:
        """Make the table if it is not there yet (once)."""
        if not self._initialized and self._before is not None:
            await self._before()
        await super().initialize()

    def expect_new(self, task_id: str, context: ServerCallContext) -> None:
        """Note a task id the server has just made: until the task is saved, looking it up
        finds nothing without asking the database (no writer can have a new id)."""
        self._new[(self.owner_resolver(context), task_id)] = None
        if len(self._new) > MAX_EXPECTED:
            del self._new[next(iter(self._new))]

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Write the task when it starts working, waits or finishes; keep the latest update
        of a task that has not yet waited or finished."""
        owner, state = self.owner_resolver(context), task.status.state
        key = (owner, task.id)
        self._new.pop(key, None)
        if state not in _LIVE:
            self._live.pop(key, None)
        elif state == TaskState.TASK_STATE_SUBMITTED or _state(self._live.get(key)) == state:
            self._live[key] = _copy(task)
            return
        await self._write(task, owner, context)
        if state in _LIVE:
            self._live[key] = _copy(task)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """The task's latest update (kept or written), if the caller owns it."""
        owner = self.owner_resolver(context)
        kept = self._live.get((owner, task_id))
        if kept is not None:
            return _copy(kept)
        if (owner, task_id) in self._new:
            return None
        if self._rows is None:
            return await super().get(task_id, context)
        await self._ensure_initialized()
        row = await self._rows.read(task_id, owner)
        return self._from_orm(self.task_model(**row)) if row is not None else None

    async def _write(self, task: Task, owner: str, context: ServerCallContext) -> None:
        if self._rows is None:
            await super().save(task, context)
            return
        await self._ensure_initialized()
        await self._rows.write(task, owner)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The caller's tasks as written, each with its latest update."""
        page = await super().list(params, context)
        owner = self.owner_resolver(context)
        for task in page.tasks:
            kept = self._live.get((owner, task.id))
            if kept is not None:
                task.CopyFrom(kept)
        return page

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Forget the task."""
        self._live.pop((self.owner_resolver(context), task_id), None)
        await super().delete(task_id, context)

    async def aclose(self) -> None:
        """Close the store's database connections."""
        if self._rows is not None:
            self._rows.close()
        await self.engine.dispose()


MAX_EXPECTED = 4096
"""How many new task ids a store remembers as not yet saved (a request that fails before its
task is saved leaves one behind; the oldest are forgotten first)."""

_LIVE = frozenset({TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING})
"""The states of a task a server is running: their updates are served from memory."""


def _state(task: Task | None) -> int | None:
    return task.status.state if task is not None else None


def _copy(task: Task) -> Task:
    copied = Task()
    copied.CopyFrom(task)
    return copied


def _sqlite_rows(engine: AsyncEngine) -> TaskRows | None:
    """Straight sqlite3 access to the table when the engine's database is a SQLite file."""
    url = engine.url
    if engine.dialect.name != "sqlite" or url.query or url.database in (None, "", ":memory:"):
        return None
    return TaskRows(Path(url.database), _TaskRow, engine.dialect)


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    """Commit as the journal does (WAL, synced at checkpoints): a killed process loses
    nothing committed, and a task's many small updates cost no fsync each."""
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def task_store(journal: Journal, tasks: str | os.PathLike[str] | TaskStore) -> TaskStore:
    """The task store ``tasks`` names for a server on ``journal``: ``"journal"`` (a durable
    store in a SQLite journal's file; in memory beside an in-memory journal), ``"memory"``,
    a database URL (``sqlite:///tasks.sqlite``, ``postgresql://...``), a SQLite file's
    path, or a TaskStore of your own."""
    if isinstance(tasks, TaskStore):
        return tasks
    if tasks == "memory":
        return InMemoryTaskStore(owner_resolver=owner_of)
    if tasks == "journal":
        return _beside(journal)
    if not isinstance(tasks, str | os.PathLike) or not str(tasks):
        raise ConfigurationError(
            f"task_store must be {' or '.join(map(repr, TASK_STORES))}, a database URL, a "
            f"SQLite file's path or a TaskStore, got {type(tasks).__name__}"
        )
    return DatabaseTasks(_url(tasks))


def _beside(journal: Journal) -> TaskStore:
    """The durable store a journal implies (in memory beside an in-memory journal)."""
    if isinstance(journal, InMemoryJournal):
        return InMemoryTaskStore(owner_resolver=owner_of)
    if isinstance(journal, SQLiteJournal):
        return DatabaseTasks(f"sqlite:///{journal.path.resolve()}", before=journal.sessions)
    raise ConfigurationError(
        f"task_store='journal' keeps tasks beside a SQLite journal; for a "
        f"{type(journal).__name__} name the database: task_store='postgresql://...' (the "
        "journal's URL does), or task_store='memory' for tasks a restart forgets"
    )


def _url(tasks: str | os.PathLike[str]) -> str:
    """A database URL: ``tasks`` itself, or a SQLite file's path as a URL."""
    text = os.fspath(tasks)
    if "://" in text:
        return text
    path = Path(text).expanduser().resolve()
    if not path.parent.is_dir():
        raise ConfigurationError(
            f"the task store's directory {path.parent} does not exist; create it first"
        )
    return f"sqlite:///{path}"


def _async_url(url: str) -> Any:
    """``url`` with the async driver swarmkit uses for its database."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        # Not the URL itself: it may hold a password.
        raise ConfigurationError(
            "the task store's URL cannot be read: write it as sqlite:///path or "
            "postgresql://user:password@host/database"
        ) from None
    backend = _ALIASES.get(parsed.get_backend_name(), parsed.get_backend_name())
    if backend not in _DRIVERS:
        raise ConfigurationError(
            f"a task store URL starts with sqlite:// or postgresql://, got {backend}://"
        )
    if "+" in parsed.drivername:
        return parsed
    return parsed.set(drivername=_DRIVERS[backend])
