"""The journal: append-only session logs in SQLite or memory, and JSONL export for people."""

from __future__ import annotations

from swarmkit.journal._jsonl import export_jsonl, import_jsonl
from swarmkit.journal._memory import InMemoryJournal
from swarmkit.journal._records import JOURNAL_SCHEMA_VERSION, Journal, JournalRecord, SessionInfo
from swarmkit.journal._sqlite import SQLiteJournal

__all__ = [
    "InMemoryJournal",
    "JOURNAL_SCHEMA_VERSION",
    "Journal",
    "JournalRecord",
    "SQLiteJournal",
    "SessionInfo",
    "export_jsonl",
    "import_jsonl",
]
