"""The journal: append-only session logs in SQLite, Postgres or memory, and JSONL export."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swarmkit.journal._cipher import AESGCMCipher, JournalCipher, env_cipher, generate_key
from swarmkit.journal._jsonl import export_jsonl, import_jsonl, import_jsonl_sessions
from swarmkit.journal._memory import InMemoryJournal
from swarmkit.journal._mirror import MIRROR_LEASE_SECONDS, append_mirrored
from swarmkit.journal._open import (
    is_postgres_location,
    journal_label,
    mask_locations,
    open_journal,
    postgres_journal_class,
)
from swarmkit.journal._records import (
    JOURNAL_SCHEMA_VERSION,
    Journal,
    JournalRecord,
    RecordSink,
    SessionInfo,
    Status,
    session_status,
    status_of,
)
from swarmkit.journal._sqlite import SQLiteJournal
from swarmkit.journal._times import StepTime, step_times
from swarmkit.journal._turns import (
    TURN_MARK,
    Conversation,
    conversations,
    group_turns,
    turn_of,
    turn_session_id,
    turn_sessions,
)
from swarmkit.journal._writer import NOTHING_HELD, Held, RequestHistory, StepWriter

if TYPE_CHECKING:
    from swarmkit.journal._codec import response_from_data, response_to_data
    from swarmkit.journal._postgres import PostgresJournal

__all__ = [
    "AESGCMCipher",
    "Conversation",
    "Held",
    "InMemoryJournal",
    "JOURNAL_SCHEMA_VERSION",
    "Journal",
    "JournalCipher",
    "JournalRecord",
    "MIRROR_LEASE_SECONDS",
    "NOTHING_HELD",
    "PostgresJournal",
    "RecordSink",
    "RequestHistory",
    "SQLiteJournal",
    "SessionInfo",
    "Status",
    "StepTime",
    "StepWriter",
    "TURN_MARK",
    "append_mirrored",
    "conversations",
    "env_cipher",
    "export_jsonl",
    "generate_key",
    "group_turns",
    "import_jsonl",
    "import_jsonl_sessions",
    "is_postgres_location",
    "journal_label",
    "mask_locations",
    "open_journal",
    "response_from_data",
    "response_to_data",
    "session_status",
    "status_of",
    "step_times",
    "turn_of",
    "turn_session_id",
    "turn_sessions",
]


def __getattr__(name: str) -> Any:
    # PostgresJournal needs psycopg (the postgres extra), and the response codec the model
    # types: each loads only when asked for, so listing sessions stays light.
    if name in ("response_from_data", "response_to_data"):
        from swarmkit.journal import _codec  # noqa: PLC0415

        return getattr(_codec, name)
    if name != "PostgresJournal":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return postgres_journal_class()
