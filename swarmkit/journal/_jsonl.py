"""JSONL export and import of one session: a header line, then one record per line, keys sorted."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from swarmkit.exceptions import JournalError
from swarmkit.journal._records import (
    JOURNAL_SCHEMA_VERSION,
    JournalRecord,
    check_step,
    escape_surrogates,
    json_default,
    not_json_safe,
)

_HEADER_KEY = "swarmkit_journal"
_RECORD_KEYS = frozenset({"session_id", "seq", "kind", "data"})
_OPTIONAL_KEYS = frozenset({"at"})  # the record's time, since the audit trail


# Sorted keys at every depth make the output a function of the data alone, so diffs are real.
_LINE_ENCODER = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, allow_nan=False, default=json_default
)


def export_jsonl(records: Sequence[JournalRecord]) -> str:
    """One session as JSONL: a header line, then each record in seq order, newline-terminated."""
    if not records:
        raise JournalError("nothing to export: pass the records of one session")
    session_id = check_step(records)
    if records[0].seq != 0:
        raise JournalError(f"export a whole session: its first seq is 0, got {records[0].seq}")
    header = {_HEADER_KEY: JOURNAL_SCHEMA_VERSION, "session_id": session_id}
    lines = [escape_surrogates(_LINE_ENCODER.encode(header))]
    lines.extend(_record_line(record) for record in records)
    return "\n".join(lines) + "\n"


def _record_line(record: JournalRecord) -> str:
    fields: dict[str, Any] = {
        "session_id": record.session_id,
        "seq": record.seq,
        "kind": record.kind,
    }
    if record.at is not None and math.isfinite(record.at):
        fields["at"] = record.at
    try:
        return escape_surrogates(_LINE_ENCODER.encode({**fields, "data": record.data}))
    except (TypeError, ValueError, RecursionError) as exc:
        raise not_json_safe(record, exc) from exc


def import_jsonl(text: str | bytes) -> tuple[JournalRecord, ...]:
    """The records of one session exported by ``export_jsonl``; ``JournalError`` names the line.

    ``text`` may be the file's bytes, which must be UTF-8.
    """
    if isinstance(text, bytes | bytearray):
        text = _utf8(bytes(text))
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not numbered:
        raise JournalError("line 1: empty input; expected a swarmkit journal header line")
    header_line, header_text = numbered[0]
    session_id = _parse_header(header_line, header_text)
    records = tuple(
        _parse_record(n, line, session_id=session_id, seq=seq)
        for seq, (n, line) in enumerate(numbered[1:])
    )
    if not records:
        raise JournalError(f"line {header_line + 1}: no records after the header")
    return records


def import_jsonl_sessions(text: str | bytes) -> tuple[tuple[JournalRecord, ...], ...]:
    """The sessions of several exports one after the other (a thread: each turn's export),
    each as ``import_jsonl`` reads it; ``JournalError`` names the line in the whole text."""
    if isinstance(text, bytes | bytearray):
        text = _utf8(bytes(text))
    lines = text.splitlines()
    # Keys are sorted: a header line opens with "session_id", a record's with "data".
    starts = [n for n, line in enumerate(lines) if line.lstrip().startswith('{"session_id"')]
    if not starts or any(line.strip() for line in lines[: starts[0]]):
        return (import_jsonl(text),)
    bounds = [*starts, len(lines)]
    # Blank lines in place of the earlier exports keep each error's line number true.
    return tuple(
        import_jsonl("\n" * start + "\n".join(lines[start:end])) for start, end in pairwise(bounds)
    )


def _parse_header(line: int, text: str) -> str:
    header = _parse_object(line, text)
    version = header.get(_HEADER_KEY)
    if type(version) is not int:
        raise JournalError(
            f"line {line}: not a swarmkit journal export; the first line must be "
            f'{{"{_HEADER_KEY}": {JOURNAL_SCHEMA_VERSION}, "session_id": ...}}'
        )
    if version != JOURNAL_SCHEMA_VERSION:
        raise JournalError(
            f"line {line}: journal format version {version}; this swarmkit reads version "
            f"{JOURNAL_SCHEMA_VERSION} (upgrade swarmkit for newer exports)"
        )
    session_id = header.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        raise JournalError(f"line {line}: the header needs a non-empty string session_id")
    return session_id


def _parse_record(line: int, text: str, *, session_id: str, seq: int) -> JournalRecord:
    obj = _parse_object(line, text)
    if not _RECORD_KEYS <= obj.keys() <= _RECORD_KEYS | _OPTIONAL_KEYS:
        raise JournalError(
            f"line {line}: a record has exactly the keys {sorted(_RECORD_KEYS)} (and "
            f"optionally 'at'), got {sorted(obj)}"
        )
    at = obj.get("at")
    if at is not None and (type(at) not in (int, float)):
        raise JournalError(f"line {line}: at must be Unix seconds (a number), got {at!r}")
    if obj["session_id"] != session_id:
        raise JournalError(
            f"line {line}: session {obj['session_id']!r} in an export of session {session_id!r}; "
            "a file holds one session"
        )
    if type(obj["seq"]) is not int or obj["seq"] != seq:
        raise JournalError(
            f"line {line}: expected seq {seq} (seqs run 0, 1, 2, ...), got {obj['seq']!r}"
        )
    if not isinstance(obj["kind"], str) or not obj["kind"]:
        raise JournalError(f"line {line}: kind must be a non-empty string, got {obj['kind']!r}")
    if not isinstance(obj["data"], dict):
        raise JournalError(f"line {line}: data must be a JSON object, got {obj['data']!r}")
    return JournalRecord(
        session_id=session_id,
        seq=seq,
        kind=obj["kind"],
        data=obj["data"],
        at=None if at is None else float(at),
    )


def _utf8(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise JournalError(
            f"line {line}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column {column}); "
            "a journal export is UTF-8 text"
        ) from None


def _parse_object(line: int, text: str) -> dict[str, Any]:
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise JournalError(
            f"line {line}: nested too deeply to read; a journal export never nests this deep"
        ) from None
    except ValueError as exc:
        raise JournalError(f"line {line}: not valid JSON ({exc})") from exc
    if not isinstance(obj, dict):
        raise JournalError(f"line {line}: expected a JSON object, got {type(obj).__name__}")
    return obj


def _reject_constant(name: str) -> object:
    # NaN and Infinity are not JSON; the journal never writes them, so they mean a hand edit.
    raise ValueError(f"{name} is not allowed")
