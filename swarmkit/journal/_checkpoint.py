"""WAL checkpoints for SQLiteJournal on a thread of their own, so no commit waits for an fsync.

SQLite's automatic checkpoint runs inside the commit that fills the log past 1,000 pages: it
copies the log into the database file and syncs it, holding the event loop for as long as the
disk takes (over 100 ms on a busy one). The journal's connection turns that off; every
``COMMITS`` commits it wakes this thread, which runs a PASSIVE checkpoint on a connection of
its own. A passive checkpoint never blocks writers, and durability is unchanged: a committed
step is in the log, whether or not it was copied yet.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

COMMITS = 64
"""Commits between checkpoints: a few hundred log pages, near SQLite's own 1,000."""


class Checkpointer:
    """Runs PASSIVE checkpoints of one journal file on a daemon thread, when asked."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._commits = 0
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None

    def committed(self) -> None:
        """Count a commit; every COMMITS of them, wake the thread (started on first use)."""
        self._commits += 1
        if self._commits < COMMITS:
            return
        self._commits = 0
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._work, name=f"swarmkit-checkpoint {self._path}", daemon=True
            )
            self._thread.start()
        self._wake.set()

    def close(self) -> None:
        """Stop the thread and wait for it; the journal's own close checkpoints the rest."""
        self._stop = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _work(self) -> None:
        try:
            conn = sqlite3.connect(self._path, timeout=0, isolation_level=None)
        except sqlite3.Error:
            return  # the journal's close still checkpoints; nothing is lost
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stop:
                    return
                with contextlib.suppress(sqlite3.Error):  # busy or failed: next time
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        finally:
            conn.close()
