"""open_journal: the journal a location names, an SQLite path or a ``postgresql://`` URL."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from swarmkit.exceptions import ConfigurationError
from swarmkit.journal._sqlite import SQLiteJournal

if TYPE_CHECKING:
    from swarmkit.journal._postgres import PostgresJournal

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
"""The URL prefixes that name a Postgres journal; anything else is an SQLite file path."""


def is_postgres_location(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` is a Postgres URL rather than a file path."""
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


def journal_label(location: str | os.PathLike[str]) -> str:
    """``location`` as it may be shown: a Postgres URL loses its password."""
    if not is_postgres_location(location):
        return str(location)
    parts = urlsplit(str(location))
    if parts.password is None:
        return str(location)
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{parts.username}:***@{host}" if parts.username else f":***@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


def open_journal(location: str | os.PathLike[str]) -> SQLiteJournal | PostgresJournal:
    """``PostgresJournal`` for a ``postgresql://`` URL, else the ``SQLiteJournal`` at the path.

    Postgres needs the extra: ``pip install 'swarmkit-agents[postgres]'``.
    """
    if is_postgres_location(location):
        return postgres_journal_class()(str(location))
    return SQLiteJournal(Path(location))


def postgres_journal_class() -> type[PostgresJournal]:
    """``PostgresJournal``, importing psycopg on first use; a clear error without the extra."""
    try:
        from swarmkit.journal._postgres import PostgresJournal  # noqa: PLC0415 (an extra)
    except ImportError as exc:
        raise ConfigurationError(
            f"a Postgres journal needs psycopg ({exc}); pip install 'swarmkit-agents[postgres]'"
        ) from exc
    return PostgresJournal
