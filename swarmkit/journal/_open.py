"""open_journal: the journal a location names, an SQLite path or a ``postgresql://`` URL, with
the keys of ``$SWARMKIT_JOURNAL_KEYS``: how every command, worker and the demo open journals."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit, urlunsplit

from swarmkit.exceptions import ConfigurationError
from swarmkit.journal._cipher import JournalCipher, env_cipher
from swarmkit.journal._sqlite import SQLiteJournal

if TYPE_CHECKING:
    from swarmkit.journal._postgres import PostgresJournal

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
"""The URL prefixes that name a Postgres journal; anything else is an SQLite file path."""


def is_postgres_location(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` is a Postgres URL rather than a file path."""
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


def journal_label(location: str | os.PathLike[str]) -> str:
    """``location`` as it may be shown: a Postgres URL loses its password, whether it is
    given as ``user:password@`` or as a ``?password=`` (or ``sslpassword=``) parameter."""
    if not is_postgres_location(location):
        return str(location)
    parts = urlsplit(str(location))
    query = _SECRET_PARAMETER.sub(r"\1***", parts.query)
    try:
        password = parts.password
    except ValueError:  # a netloc urlsplit cannot read: hide all that could be a secret
        password = ""
    if password is None:
        return urlunsplit(parts._replace(query=query))
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{parts.username}:***@{host}" if parts.username else f":***@{host}"
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def mask_locations(text: str) -> str:
    """``text`` with the password of every Postgres URL or ``password=`` setting in it hidden,
    for anything a command prints."""
    text = _POSTGRES_URL.sub(lambda found: _label_in_text(found.group()), text)
    return _SECRET_SETTING.sub(r"\1***", text)


def _label_in_text(url: str) -> str:
    # Punctuation that ends a sentence ("...db?password=x: ...") is not part of the URL.
    bare = url.rstrip(":,.;)")
    return journal_label(bare) + url[len(bare) :]


_SECRET_PARAMETER = re.compile(r"((?:^|&)(?:ssl)?password=)[^&]*", re.IGNORECASE)
_POSTGRES_URL = re.compile(r"postgres(?:ql)?://[^\s'\"]+")
# A libpq key=value connection string: password=secret (possibly quoted).
_SECRET_SETTING = re.compile(
    r"((?:^|[\s'\"])(?:ssl)?password\s*=\s*)(?!\*\*\*)('[^']*'|[^\s'\"]+)", re.I
)


def open_journal(
    location: str | os.PathLike[str],
    *,
    cipher: JournalCipher | Literal["env"] | None = "env",
    read_only: bool = False,
) -> SQLiteJournal | PostgresJournal:
    """``PostgresJournal`` for a ``postgresql://`` URL, else the ``SQLiteJournal`` at the path.

    ``cipher`` seals record bodies at rest; by default (``"env"``) it is the cipher of the
    keys in ``$SWARMKIT_JOURNAL_KEYS`` when that is set, so a journal opened here is never
    written in clear by mistake. Pass ``None`` for no cipher. ``read_only=True`` opens an
    SQLite file for reading only (what a Postgres user may do is up to its grants).

    Postgres needs the extra: ``pip install 'swarmkit-agents[postgres]'``.
    """
    chosen = _cipher_of(cipher)
    if is_postgres_location(location):
        return postgres_journal_class()(str(location), cipher=chosen)
    return SQLiteJournal(Path(location), cipher=chosen, read_only=read_only)


def _cipher_of(cipher: JournalCipher | Literal["env"] | None) -> JournalCipher | None:
    if not isinstance(cipher, str):
        return cipher
    if cipher != "env":
        raise ConfigurationError(
            f"cipher= takes a JournalCipher, None or 'env' (the keys in $SWARMKIT_JOURNAL_KEYS), "
            f"got {cipher[:10]!r}"
        )
    return env_cipher()


def postgres_journal_class() -> type[PostgresJournal]:
    """``PostgresJournal``, importing psycopg on first use; a clear error without the extra."""
    try:
        from swarmkit.journal._postgres import PostgresJournal  # noqa: PLC0415 (an extra)
    except ImportError as exc:
        raise ConfigurationError(
            f"a Postgres journal needs psycopg ({exc}); pip install 'swarmkit-agents[postgres]'"
        ) from exc
    return PostgresJournal
