"""Group commit: the writes that concurrent sessions of one event loop ask for share a transaction.

Each write is a function of the connection (one step, a lease). The first write of a loop
pass commits at once, on its own: a lone session pays nothing for grouping. A further write
in the same pass means sessions run concurrently: it joins the loop's queue and awaits its own
future; one callback on the loop's next pass commits the queue, oldest first, in transactions
of at most ``MAX_BATCH`` writes, and only then settles the futures, so no writer goes on
before its write is durable. A thousand concurrent sessions' steps cost a few dozen commits
instead of a thousand.

While another process holds the file's write lock, the queue waits on the loop's timer
(``call_later``), never in a blocking busy handler, so the loop keeps serving other tasks.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from swarmkit.exceptions import JournalError
from swarmkit.journal._sqlite_file import is_busy, rollback

_T = TypeVar("_T")

MAX_BATCH = 32
"""Writes per transaction: bounds how long one commit holds the event loop (~1 ms)."""

Work = Callable[[sqlite3.Connection], Any]
"""One write: runs inside the group's transaction and returns the writer's result."""

Failure = Callable[[str, sqlite3.Error], JournalError]
"""The JournalError for an action ("append to") that failed with an SQLite error."""


class _Write(Generic[_T]):
    """One queued write and the future its writer awaits."""

    __slots__ = ("action", "future", "work")

    def __init__(
        self,
        action: str,
        work: Callable[[sqlite3.Connection], _T],
        future: asyncio.Future[_T],
    ) -> None:
        self.action = action
        self.work = work
        self.future = future


class _Queue:
    """The writes one event loop waits for, and since when the file's lock has been busy."""

    __slots__ = ("busy_since", "writes")

    def __init__(self) -> None:
        self.writes: list[_Write[Any]] = []
        self.busy_since: float | None = None


class GroupCommit:
    """Commits the writes of each event loop in shared transactions on one connection."""

    def __init__(
        self,
        *,
        connection: Callable[[], sqlite3.Connection | None],
        lock: threading.Lock,
        timeout: float,
        failure: Failure,
        closed: Callable[[str], JournalError],
    ) -> None:
        """``connection`` gives the open connection (None once closed); ``lock`` guards it."""
        self._connection = connection
        self._lock = lock
        self._timeout = timeout
        self._failure = failure
        self._closed = closed
        self._queues: dict[asyncio.AbstractEventLoop, _Queue] = {}
        # The task that wrote first in each loop's current pass.
        self._passes: dict[asyncio.AbstractEventLoop, asyncio.Task[Any] | None] = {}

    async def write(self, action: str, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Queue ``work`` for this loop's next commit; its result once committed."""
        loop = asyncio.get_running_loop()
        queue = self._queues.get(loop)
        if queue is None and self._alone(loop):
            # No other task wrote in this pass: commit now, unless another process holds the lock.
            done, result = self._commit_alone(action, work)
            if done:
                return cast(_T, result)
        future: asyncio.Future[_T] = loop.create_future()
        if queue is None:
            queue = self._queues[loop] = _Queue()
            # One pass later: the sessions the loop runs in this pass join the same commit.
            loop.call_soon(self._drain, loop)
        queue.writes.append(_Write(action, work, future))
        return await future

    def _alone(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether this task is the only one that wrote in the loop's current pass."""
        task = asyncio.current_task(loop)
        if loop not in self._passes:
            self._passes[loop] = task
            loop.call_soon(self._passes.pop, loop, None)
            return True
        return self._passes[loop] is task

    def _commit_alone(
        self, action: str, work: Callable[[sqlite3.Connection], _T]
    ) -> tuple[bool, _T | None]:
        """Run one write in its own transaction: (True, its result), or (False, None) if
        another process holds the write lock. Its error, if any, is raised."""
        with self._lock:
            conn = self._connection()
            if conn is None:
                raise self._closed(action)
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                if is_busy(exc):
                    return False, None
                raise self._failure(action, exc) from exc
            try:
                result = work(conn)
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                rollback(conn)
                raise self._failure(action, exc) from exc
            except BaseException:
                rollback(conn)
                raise
            return True, result

    def flush(self) -> None:
        """Commit every queued write now, on this thread (``close()`` with writes pending)."""
        for loop, queue in list(self._queues.items()):
            while queue.writes:
                batch = _take(queue)
                if not self._commit(batch, loop, give_up=True):
                    break
            self._queues.pop(loop, None)

    def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """Commit one batch of the loop's queue, then come back for the rest next pass."""
        queue = self._queues.get(loop)
        if queue is None:
            return  # flushed by close()
        batch = _take(queue, keep=True)
        now = time.monotonic()
        waited = 0.0 if queue.busy_since is None else now - queue.busy_since
        if batch and not self._commit(batch, loop, give_up=waited >= self._timeout):
            # Another process holds the write lock: try again soon, without blocking the loop.
            queue.busy_since = now - waited
            loop.call_later(min(0.001 + waited / 4, 0.05), self._drain, loop)
            return
        queue.busy_since = None
        del queue.writes[: len(batch)]
        if any(not write.future.done() for write in queue.writes):
            loop.call_soon(self._drain, loop)
        else:
            del self._queues[loop]

    def _commit(
        self, batch: list[_Write[Any]], loop: asyncio.AbstractEventLoop, *, give_up: bool
    ) -> bool:
        """Run the batch in one transaction and settle its futures; False if the lock is busy
        (and ``give_up`` is false): nothing is settled then, the batch is tried again."""
        with self._lock:
            conn = self._connection()
            if conn is None:
                _settle_all(loop, batch, lambda write: self._closed(write.action))
                return True
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                if is_busy(exc) and not give_up:
                    return False
                failed = exc
                _settle_all(loop, batch, lambda write: self._failure(write.action, failed))
                return True
            outcomes = _run_batch(conn, batch, self._failure)
        for write, (ok, value) in zip(batch, outcomes, strict=True):
            _settle(loop, write.future, ok, value)
        return True


def _run_batch(
    conn: sqlite3.Connection, batch: list[_Write[Any]], failure: Failure
) -> list[tuple[bool, Any]]:
    """Each write's (ok, result or error), committed; an SQLite error fails the whole batch,
    a write's own error (a seq gap, a busy lease) undoes that write alone."""
    alone = len(batch) == 1
    outcomes: list[tuple[bool, Any]] = []
    try:
        for write in batch:
            outcomes.append(_run_one(conn, write, alone=alone))
        if any(ok for ok, _ in outcomes):
            conn.execute("COMMIT")
        else:
            conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        rollback(conn)
        return [(False, failure(write.action, exc)) for write in batch]
    except BaseException:
        rollback(conn)
        raise
    return outcomes


def _run_one(conn: sqlite3.Connection, write: _Write[Any], *, alone: bool) -> tuple[bool, Any]:
    if alone:
        try:
            return True, write.work(conn)
        except sqlite3.Error:
            raise
        except Exception as exc:
            return False, exc
    conn.execute("SAVEPOINT write")
    try:
        result = write.work(conn)
    except sqlite3.Error:
        raise
    except Exception as exc:
        conn.execute("ROLLBACK TO write")
        conn.execute("RELEASE write")
        return False, exc
    conn.execute("RELEASE write")
    return True, result


def _take(queue: _Queue, *, keep: bool = False) -> list[_Write[Any]]:
    """The next batch: up to MAX_BATCH writes whose writers still wait (cancelled ones drop)."""
    queue.writes[:] = [write for write in queue.writes if not write.future.done()]
    batch = queue.writes[:MAX_BATCH]
    if not keep:
        del queue.writes[: len(batch)]
    return batch


def _settle_all(
    loop: asyncio.AbstractEventLoop,
    batch: list[_Write[Any]],
    error: Callable[[_Write[Any]], BaseException],
) -> None:
    for write in batch:
        _settle(loop, write.future, False, error(write))


def _settle(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], ok: bool, value: Any
) -> None:
    """Give a writer its outcome, from its loop's thread or (at close) from another."""

    def give() -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        give()
    elif not loop.is_closed():
        loop.call_soon_threadsafe(give)
