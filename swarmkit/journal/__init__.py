"""The journal: append-only session logs in SQLite, Postgres or memory, and JSONL export."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swarmkit.journal._cipher import AESGCMCipher, JournalCipher, env_cipher, generate_key
from swarmkit.journal._jsonl import export_jsonl, import_jsonl
from swarmkit.journal._memory import InMemoryJournal
from swarmkit.journal._open import open_journal, postgres_journal_class
from swarmkit.journal._records import JOURNAL_SCHEMA_VERSION, Journal, JournalRecord, SessionInfo
from swarmkit.journal._sqlite import SQLiteJournal

if TYPE_CHECKING:
    from swarmkit.journal._postgres import PostgresJournal

__all__ = [
    "AESGCMCipher",
    "InMemoryJournal",
    "JOURNAL_SCHEMA_VERSION",
    "Journal",
    "JournalCipher",
    "JournalRecord",
    "PostgresJournal",
    "SQLiteJournal",
    "SessionInfo",
    "env_cipher",
    "export_jsonl",
    "generate_key",
    "import_jsonl",
    "open_journal",
]


def __getattr__(name: str) -> Any:
    # PostgresJournal needs psycopg (the postgres extra); load it only when asked for.
    if name != "PostgresJournal":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return postgres_journal_class()
