"""Sealed sessions as a chain: forged, removed or reordered records and keyless writers refused.

How a record's data is stored (one JSON text, in either store):

- in clear: the record's data itself;
- ``{"chained":"<sealed text>"}``: sealed, its associated data binding the session id, the
  seq, the kind and the *link* of the record before it (the SHA-256 of that record's stored
  text; empty before record 0), so a record moved, removed or put in another order no longer
  opens where it is found;
- ``{"sealed":"<sealed text>"}``: sealed before chains (bound to session, seq and kind only);
  still read, never written.

A chain alone cannot show records cut from its end, so each sealed session also has a
*seal*: its record count and last link, sealed and bound to the session id, rewritten in the
transaction of every step. It lives beside the session's summary row, where the count it
vouches for already is, rather than in a record of the session: records are only ever
appended, and a seal sealed into the last record would go with the records cut after it.
On Postgres it is a ``seal`` column of ``swarmkit_sessions``; on SQLite a ``seals`` table
that the first sealed write creates (as leases are), so the file layout stays the same and
reading a journal never changes it. A record in clear inside a sealed session, a seal that
counts other records than there are, or chained records without a seal are errors naming
the session and the record.

The first sealed write also *marks* the journal (a ``seal`` row of ``meta``, or of
``swarmkit_meta`` on Postgres): the sealed list of the sessions it already held, written in
clear or sealed before chains. From
then on a writer without the key is refused, and a session outside that list whose records
are not chained is refused when read, so a session forged in clear is not shown as genuine,
while sessions from before the journal was encrypted read as they always did.

What this cannot show: a whole session removed with its seal (``delete`` does that), and a
journal rolled back as a whole to an earlier copy of itself; keep copies of a journal whose
history must be proven elsewhere.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from swarmkit.exceptions import JournalError
from swarmkit.journal._cipher import KEYS_VARIABLE, JournalCipher
from swarmkit.journal._records import JournalRecord, check_continues

Row = tuple[int, str, object, object]
"""A stored record as a store reads it: seq, kind, data text and time."""

Form = Literal["clear", "sealed", "chained"]

_MARK_CONTEXT = "swarmkit journal\x1fsessions before chains"
_OPEN_HINT = (
    f"open the journal with cipher=AESGCMCipher(...) (the commands read keys from ${KEYS_VARIABLE})"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Tip:
    """What a session's seal vouches for."""

    records: int
    """How many records the session holds."""
    last: str
    """The link of its last record."""


def link_of(stored: str) -> str:
    """A stored record's link: what the record after it is bound to."""
    return hashlib.sha256(stored.encode("utf-8", "surrogatepass")).hexdigest()


def form_of(stored: object) -> Form:
    """Whether stored data is in clear, sealed before chains, or chained."""
    if not isinstance(stored, str):
        return "clear"
    if stored.startswith('{"chained":"') and _body(stored, "chained") is not None:
        return "chained"
    if stored.startswith('{"sealed":"') and _body(stored, "sealed") is not None:
        return "sealed"
    return "clear"


# -- writing ---------------------------------------------------------------------------------


def seal_step(
    cipher: JournalCipher, records: Sequence[JournalRecord], texts: Sequence[str], prev: str
) -> tuple[list[str], Tip]:
    """The step's data texts sealed, each chained to the one before (``prev`` before the
    first), and the session's tip after the step."""
    stored: list[str] = []
    for record, text in zip(records, texts, strict=True):
        context = _context(record.session_id, record.seq, record.kind, prev)
        body = f'{{"chained":{json.dumps(cipher.seal(text, context=context))}}}'
        stored.append(body)
        prev = link_of(body)
    return stored, Tip(records=records[-1].seq + 1, last=prev)


def seal_tip(cipher: JournalCipher, session_id: str, tip: Tip) -> str:
    """A session's seal as its store keeps it."""
    text = json.dumps({"records": tip.records, "last": tip.last})
    return cipher.seal(text, context=f"{session_id}\x1fseal")


def open_tip(cipher: JournalCipher | None, session_id: str, sealed: str) -> Tip:
    """What a session's stored seal vouches for; ``JournalError`` if it cannot be opened."""
    if cipher is None:
        raise JournalError(f"session {session_id!r} is encrypted: {_OPEN_HINT}")
    try:
        data = json.loads(cipher.open(sealed, context=f"{session_id}\x1fseal"))
        return Tip(records=int(data["records"]), last=str(data["last"]))
    except JournalError as exc:
        raise JournalError(f"the seal of session {session_id!r} cannot be read: {exc}") from None
    except (ValueError, TypeError, KeyError):
        raise JournalError(f"the seal of session {session_id!r} is garbled") from None


def continuing_link(
    cipher: JournalCipher,
    session_id: str,
    first_seq: int,
    *,
    seal: str | None,
    previous: object,
    mark: Mark | None,
) -> str:
    """The link a step that starts at ``first_seq`` chains to: the session's seal names it,
    or, for a session begun before the journal's chains, the record before the step."""
    if first_seq == 0:
        return ""
    if seal is not None:
        tip = open_tip(cipher, session_id, seal)
        check_continues(session_id, tip.records, first_seq)
        return tip.last
    if previous is None:
        return ""  # no record before the step: the store's seq check refuses it
    begun_before = mark is None or session_id in mark.sessions(cipher)
    if form_of(previous) == "chained" or not begun_before:
        raise JournalError(
            f"session {session_id!r} has lost its seal (the record count kept beside it): "
            "records may have been removed; it cannot be continued (restore the journal from "
            "a copy, or delete the session)"
        )
    return link_of(previous) if isinstance(previous, str) else ""


def seal_mark(cipher: JournalCipher, sessions: Iterable[str]) -> str:
    """A journal's mark: the sealed list of the sessions it held before its first chain."""
    return cipher.seal(json.dumps(sorted(sessions)), context=_MARK_CONTEXT)


def open_mark(cipher: JournalCipher | None, mark: str) -> frozenset[str]:
    """The sessions a journal held before its first chain; ``JournalError`` without the key."""
    if cipher is None:
        raise JournalError(f"the journal is encrypted: {_OPEN_HINT}")
    try:
        sessions = json.loads(cipher.open(mark, context=_MARK_CONTEXT))
    except JournalError as exc:
        raise JournalError(f"the journal's mark of encryption cannot be read: {exc}") from None
    except ValueError:
        raise JournalError("the journal's mark of encryption is garbled") from None
    return frozenset(str(session) for session in sessions)


class Mark:
    """A journal's mark as a store read it, its list opened on first use. A mark, once
    written, never changes, so a store keeps the first one it reads."""

    def __init__(self, text: str) -> None:
        self.text = text
        """The mark as stored."""
        self._sessions: frozenset[str] | None = None

    def sessions(self, cipher: JournalCipher | None) -> frozenset[str]:
        """The sessions the journal held before its first chain (``open_mark``)."""
        if self._sessions is None:
            self._sessions = open_mark(cipher, self.text)
        return self._sessions


def refused_in_clear(session_id: str, *, journal: bool) -> JournalError:
    """The error for a writer without the key at an encrypted journal or session."""
    what = "the journal holds encrypted sessions" if journal else "the session is encrypted"
    return JournalError(
        f"session {session_id!r} cannot be written in clear: {what}, and records are "
        f"written to it only sealed; set ${KEYS_VARIABLE} (the commands read it) or open the "
        "journal with cipher=AESGCMCipher(...)"
    )


# -- reading ---------------------------------------------------------------------------------


def needs_mark(rows: Sequence[Row]) -> bool:
    """Whether reading these rows depends on the journal's mark: the session does not begin
    with a chained record, so it is genuine only if it predates the journal's chains."""
    return bool(rows) and form_of(rows[0][2]) != "chained"


def open_session(
    cipher: JournalCipher | None,
    session_id: str,
    rows: Sequence[Row],
    *,
    seal: str | None,
    mark: Mark | None,
) -> list[Row]:
    """A session's rows with their data opened, after checking they are all there, in order,
    as sealed; ``JournalError`` naming the first record that is not. ``mark`` is the
    journal's mark, needed only when ``needs_mark`` (None: the journal was never chained)."""
    if seal is None and mark is None and all(form_of(row[2]) == "clear" for row in rows):
        return list(rows)  # a journal never encrypted: nothing to open or check
    legacy = _legacy_check(cipher, session_id, rows, mark)
    opened: list[Row] = []
    previous: object = None
    chained = sealed = False
    for seq, kind, data, at in rows:
        form = form_of(data)
        where = f"record {seq} ({kind!r}) of session {session_id!r}"
        if chained and form != "chained":
            raise JournalError(f"{where} is not chained to the sealed records before it: {_FORGED}")
        if form == "clear":
            if sealed or not legacy:
                raise JournalError(f"{where} is in clear in an encrypted session: {_FORGED}")
            opened.append((seq, kind, data, at))
        else:
            # A link hashes the record before: computed only where a chain needs it.
            prev = _link(previous) if form == "chained" else ""
            text = _open_record(
                cipher, where, form, data, (session_id, seq, kind, prev), after_chained=chained
            )
            opened.append((seq, kind, text, at))
        chained = chained or form == "chained"
        sealed = sealed or form != "clear"
        previous = data
    if seal is not None or chained:
        _check_tip(cipher, session_id, rows, seal, last=_link(previous))
    return opened


_FORGED = (
    "it was written without the key, or forged, and is not read as genuine (restore the "
    "journal from a copy, or delete the session)"
)


def _legacy_check(
    cipher: JournalCipher | None,
    session_id: str,
    rows: Sequence[Row],
    mark: Mark | None,
) -> bool:
    """Whether the session may hold records that are not chained: only one the journal held
    before its first chain (any session of a journal never chained)."""
    if not needs_mark(rows) or mark is None:
        return True
    if cipher is None:
        raise JournalError(
            f"session {session_id!r} is in an encrypted journal, and only the key tells whether "
            f"its records in clear are genuine: {_OPEN_HINT}"
        )
    if session_id in mark.sessions(cipher):
        return True
    seq, kind = rows[0][0], rows[0][1]
    raise JournalError(
        f"record {seq} ({kind!r}) of session {session_id!r} is not chained, in a session begun "
        f"after the journal was encrypted: {_FORGED}"
    )


def _open_record(
    cipher: JournalCipher | None,
    where: str,
    form: Form,
    data: object,
    place: tuple[str, int, str, str],
    *,
    after_chained: bool,
) -> str:
    if cipher is None:
        raise JournalError(f"{where} is encrypted: {_OPEN_HINT}")
    session_id, seq, kind, prev = place
    body = _body(data, form) or ""
    if form == "sealed":
        context = f"{session_id}\x1f{seq}\x1f{kind}"
    else:
        context = _context(session_id, seq, kind, prev)
    try:
        return cipher.open(body, context=context)
    except JournalError as exc:
        if after_chained and "does not open" in str(exc):
            raise JournalError(
                f"{where} does not follow record {seq - 1}: a record was removed, reordered or "
                f"altered ({exc})"
            ) from None
        raise JournalError(f"{where} cannot be read: {exc}") from None


def _check_tip(
    cipher: JournalCipher | None,
    session_id: str,
    rows: Sequence[Row],
    seal: str | None,
    *,
    last: str,
) -> None:
    """Check the session's seal vouches for exactly these records."""
    if seal is None:
        raise JournalError(
            f"session {session_id!r} holds chained records but has lost its seal (the record "
            "count kept beside it): records may have been removed from its end"
        )
    tip = open_tip(cipher, session_id, seal)
    count = int(rows[-1][0]) + 1 if rows else 0
    if tip.records != count or len(rows) != count:
        raise JournalError(
            f"session {session_id!r} holds {len(rows)} records but its seal counts "
            f"{tip.records}: records were removed from it"
        )
    if tip.last != last:
        raise JournalError(
            f"the last record ({count - 1}) of session {session_id!r} is not the one its seal "
            "names: records were removed or replaced"
        )


def _link(stored: object) -> str:
    return link_of(stored) if isinstance(stored, str) else ""


def _context(session_id: str, seq: int, kind: str, prev: str) -> str:
    return f"{session_id}\x1f{seq}\x1f{kind}\x1f{prev}"


def _body(stored: object, key: str) -> str | None:
    """The sealed text inside stored data of the form ``{key: text}``, else None."""
    prefix = f'{{"{key}":"'
    if not isinstance(stored, str) or not stored.startswith(prefix):
        return None
    inner = stored[len(prefix) : -2]
    if stored.endswith('"}') and '"' not in inner and "\\" not in inner:
        return inner  # what the ciphers write: printable text with nothing to unescape
    try:
        value = json.loads(stored)
    except ValueError:
        return None
    if not isinstance(value, dict) or len(value) != 1:
        return None
    found = value.get(key)
    return found if isinstance(found, str) else None
