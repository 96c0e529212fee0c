"""The journal: append-only session logs in SQLite, Postgres or memory, and JSONL export.

What engines, stores and commands build on (the step writer, record sinks, mirrored
appends, the response codec, display helpers) lives in ``swarmkit.lowlevel``.
"""

import sys as _sys
import typing as _typing
import warnings as _warnings

from swarmkit.journal._cipher import AESGCMCipher, JournalCipher, env_cipher, generate_key
from swarmkit.journal._jsonl import export_jsonl, import_jsonl, import_jsonl_sessions
from swarmkit.journal._many import read_many
from swarmkit.journal._memory import InMemoryJournal
from swarmkit.journal._open import open_journal
from swarmkit.journal._records import (
    JOURNAL_SCHEMA_VERSION,
    Journal,
    JournalRecord,
    SessionInfo,
    Status,
    session_status,
    status_of,
)
from swarmkit.journal._sqlite import SQLiteJournal
from swarmkit.journal._turns import (
    Conversation,
    conversations,
    group_turns,
    turn_of,
    turn_session_id,
    turn_sessions,
)

if _typing.TYPE_CHECKING:
    from swarmkit.journal._postgres import PostgresJournal

__all__ = [
    "AESGCMCipher",
    "Conversation",
    "InMemoryJournal",
    "JOURNAL_SCHEMA_VERSION",
    "Journal",
    "JournalCipher",
    "JournalRecord",
    "PostgresJournal",
    "SQLiteJournal",
    "SessionInfo",
    "Status",
    "conversations",
    "env_cipher",
    "export_jsonl",
    "generate_key",
    "group_turns",
    "import_jsonl",
    "import_jsonl_sessions",
    "open_journal",
    "read_many",
    "session_status",
    "status_of",
    "turn_of",
    "turn_session_id",
    "turn_sessions",
]

_MOVED_TO_LOWLEVEL = frozenset(
    {
        "Held",
        "MIRROR_LEASE_SECONDS",
        "NOTHING_HELD",
        "RecordSink",
        "RequestHistory",
        "StepTime",
        "StepWriter",
        "TURN_MARK",
        "append_mirrored",
        "is_postgres_location",
        "journal_label",
        "mask_locations",
        "response_from_data",
        "response_to_data",
        "step_times",
    }
)
"""Names this module offered before ``swarmkit.lowlevel``; they still work, with a warning."""


def __getattr__(name: str) -> _typing.Any:
    # PostgresJournal needs psycopg (the postgres extra): it loads only when asked for, so
    # listing sessions stays light.
    if name == "PostgresJournal":
        from swarmkit.journal._open import postgres_journal_class  # noqa: PLC0415

        return postgres_journal_class()
    if name not in _MOVED_TO_LOWLEVEL:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _moved(name)


def _moved(name: str) -> _typing.Any:
    """``swarmkit.lowlevel``'s ``name``, with a warning that points at the caller's line."""
    from swarmkit import lowlevel  # noqa: PLC0415 (lowlevel reads this package's modules)
    from swarmkit._deprecated import DEPRECATION  # noqa: PLC0415 (only a moved name needs it)

    # ``from swarmkit.journal import X`` asks twice: the import system's fromlist check
    # (hasattr), then the importing line itself. Only the second is the user's, so only it warns.
    if not _sys._getframe(2).f_code.co_filename.startswith("<frozen importlib"):
        _warnings.warn(
            DEPRECATION.format(
                what=f"{__name__}.{name}", instead="import it from swarmkit.lowlevel"
            ),
            DeprecationWarning,
            stacklevel=3,
        )
    return getattr(lowlevel, name)
