"""Journal files for the command: checked before SQLite opens them, so a mistake is one line.

Writing may create the journal's own folder, never a tree of folders. Reading never creates
or converts anything: a missing, empty or foreign file is refused before SQLite touches it.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from swarmkit.cli._usage import DEFAULT_JOURNAL, UsageError
from swarmkit.journal import SQLiteJournal, open_journal
from swarmkit.lowlevel import is_postgres_location

if TYPE_CHECKING:
    from swarmkit.journal import PostgresJournal
    from swarmkit.swarm import Swarm


_SQLITE_HEADER = b"SQLite format 3\x00"
_WHERE = "pass --journal PATH or set SWARMKIT_JOURNAL"


def journal_path(option: str | None) -> Path | str:
    """The journal the command uses: --journal, else $SWARMKIT_JOURNAL, else the default; a
    ``postgresql://`` URL stays a string."""
    location = option or os.environ.get("SWARMKIT_JOURNAL") or str(DEFAULT_JOURNAL)
    return location if is_postgres_location(location) else Path(location)


def swarm_journal_path(option: str | Path | None, swarm: Swarm) -> Path | str:
    """The journal a command that takes a swarm uses: --journal, else $SWARMKIT_JOURNAL, else
    the swarm's own SQLite journal (``Swarm(journal=SQLiteJournal(path))``), else the default."""
    if isinstance(option, Path):
        return option
    if option or os.environ.get("SWARMKIT_JOURNAL"):
        return journal_path(option)
    own = swarm.journal
    if isinstance(own, SQLiteJournal):
        return own.path
    if own is not None:
        print(
            f"swarmkit: the swarm's journal is a {type(own).__name__}, which the command cannot "
            f"open by itself; using {DEFAULT_JOURNAL} (pass --journal to choose)",
            file=sys.stderr,
        )
    return journal_path(None)


def open_for_writing(path: Path | str) -> SQLiteJournal | PostgresJournal:
    """Open (or create) the journal at ``path`` with the keys of $SWARMKIT_JOURNAL_KEYS;
    creates its own folder only."""
    if isinstance(path, str):
        return open_journal(path)
    _check_no_file_above(path)
    if path.is_dir():
        raise UsageError(f"the journal path {path} is a folder; name a file in it ({_WHERE})")
    if path.is_file() and path.stat().st_size > 0 and not _is_journal(path):
        raise UsageError(f"{path} is not a swarmkit journal (left untouched); {_WHERE}")
    folder = path.parent
    if not folder.exists():
        if not folder.parent.is_dir():
            raise UsageError(
                f"cannot write the journal at {path}: folder {folder.parent} does not exist; "
                f"create it first or {_WHERE}"
            )
        _make_folder(folder, path)
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"cannot write the journal at {path}: permission denied ({_WHERE})")
    return open_journal(path)


def open_for_reading(path: Path | str) -> SQLiteJournal | PostgresJournal:
    """Open an existing swarmkit journal with the keys of $SWARMKIT_JOURNAL_KEYS; anything
    else is refused untouched."""
    if isinstance(path, str):
        return open_journal(path)
    _check_no_file_above(path)
    if not path.exists():
        raise UsageError(f"no journal at {path}; {_WHERE} (runs write to it with `swarmkit run`)")
    if not path.is_file():
        raise UsageError(f"the journal path {path} is not a file; {_WHERE}")
    # Read-only, SQLite refuses a foreign or damaged file without changing it, saying which.
    return open_journal(path, read_only=True)


def _check_no_file_above(path: Path) -> None:
    for folder in path.parents:
        if folder.exists():
            if not folder.is_dir():
                raise UsageError(
                    f"cannot use the journal path {path}: {folder} is a file, not a folder"
                )
            return


def _make_folder(folder: Path, path: Path) -> None:
    try:
        folder.mkdir()
    except OSError as exc:
        raise UsageError(f"cannot create folder {folder} for the journal {path}: {exc}") from exc


def _is_journal(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            if file.read(len(_SQLITE_HEADER)) != _SQLITE_HEADER:
                return False
        # Read-only: looking must not switch the file to WAL or create tables in it.
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except (OSError, sqlite3.Error):
        return False
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        return {"meta", "records"} <= tables
    except sqlite3.Error:
        return False
    finally:
        conn.close()
