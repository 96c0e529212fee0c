"""Task rows in a SQLite file, read and written with sqlite3 on the event loop's thread.

A task store's hot path (a new task's lookup, its working and final writes) is one short
statement each. Through the async engine each would hop to aiosqlite's thread and back and pass
the ORM; here it runs where the journal's own SQLite work runs, on the loop's thread, as an
autocommit statement that takes well under a millisecond. The rows are the ones the a2a-sdk's
database task store reads and lists: each value goes through the column type's own SQLite
conversion (JSON text, the datetime's text form).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from a2a.types.a2a_pb2 import Task
from google.protobuf.json_format import MessageToDict
from sqlalchemy import inspect
from sqlalchemy.engine import Dialect

_T = TypeVar("_T")

_BUSY = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


class TaskRows:
    """The rows of the ORM ``model``'s table in the SQLite file at ``path``, through one
    connection; values by the model's attribute names."""

    def __init__(self, path: Path, model: type[Any], dialect: Dialect, *, timeout: float = 30.0):
        """``dialect`` converts the values as the async engine would; ``timeout`` is how many
        seconds a statement waits (on the loop's timer) while another writer holds the file."""
        self._path = path
        self._timeout = timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        mapper = inspect(model)
        columns = [(prop.key, prop.columns[0]) for prop in mapper.column_attrs]
        self._keys = [key for key, _ in columns]
        self._writes = [
            _converter(column.type.dialect_impl(dialect).bind_processor(dialect))
            for _, column in columns
        ]
        self._reads = [
            _converter(column.type.dialect_impl(dialect).result_processor(dialect, None))
            for _, column in columns
        ]
        names = ", ".join(f'"{column.name}"' for _, column in columns)
        updates = ", ".join(
            f'"{c.name}" = excluded."{c.name}"' for _, c in columns if c.key != "id"
        )
        marks = ", ".join("?" * len(columns))
        table = mapper.local_table.name
        self._upsert = (
            f'INSERT INTO "{table}" ({names}) VALUES ({marks}) '
            f"ON CONFLICT (id) DO UPDATE SET {updates}"
        )
        self._select = f'SELECT {names} FROM "{table}" WHERE id = ? AND owner = ?'

    async def write(self, task: Task, owner: str) -> None:
        """Insert or replace the task's row, owned by ``owner``."""
        values = _row(task, owner)
        params = [
            convert(values[key]) for key, convert in zip(self._keys, self._writes, strict=True)
        ]
        await self._retrying(lambda conn: conn.execute(self._upsert, params))

    async def read(self, task_id: str, owner: str) -> dict[str, Any] | None:
        """The row of ``owner``'s task ``task_id`` as column values by key, or None."""
        found = await self._retrying(
            lambda conn: conn.execute(self._select, (task_id, owner)).fetchone()
        )
        if found is None:
            return None
        return {
            key: convert(value)
            for key, convert, value in zip(self._keys, self._reads, found, strict=True)
        }

    def close(self) -> None:
        """Close the connection (a later statement opens it again)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    async def _retrying(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """``work`` on the connection; while another writer holds the file, tried again on
        the loop's timer (never in a blocking busy handler) until ``timeout`` has passed."""
        deadline: float | None = None
        pause = 0.001
        while True:
            try:
                with self._lock:
                    return work(self._connection())
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode not in _BUSY:
                    raise
                now = time.monotonic()
                deadline = deadline if deadline is not None else now + self._timeout
                if now >= deadline:
                    raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(
                self._path, timeout=0, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA synchronous=NORMAL")
            self._conn = conn
        return self._conn


def _converter(process: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    return process if process is not None else _same


def _same(value: Any) -> Any:
    return value


def _row(task: Task, owner: str) -> dict[str, Any]:
    """The task's column values, as the a2a-sdk's database task store writes them."""
    status = task.status
    return {
        "id": task.id,
        "context_id": task.context_id,
        "kind": "task",
        "owner": owner,
        "last_updated": status.timestamp.ToDatetime() if status.HasField("timestamp") else None,
        "status": MessageToDict(status),
        "artifacts": [MessageToDict(artifact) for artifact in task.artifacts],
        "history": [MessageToDict(message) for message in task.history],
        "task_metadata": MessageToDict(task.metadata) if task.metadata.fields else None,
        "protocol_version": "1.0",
    }
