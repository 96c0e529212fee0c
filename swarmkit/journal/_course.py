"""Session courses: how one run of a session goes, as a value each session verb builds.

A verb (a fresh run, a strict replay, a fork, a resume, an engine's mirror, a delegated sub-run,
a what-if) reads its records and says in one frozen value where the run writes, what it
replays first and whether it may go live. The tape matches on the value; nothing else carries
mode flags.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from swarmkit.interrupts import Decision
from swarmkit.journal._records import PERSON_NOTES, Journal, JournalRecord, RecordSink
from swarmkit.journal._stored import kinds_of, records_at


@dataclass(frozen=True, kw_only=True, slots=True)
class Fresh:
    """A new session, journaled step by step (or not at all)."""

    journal: Journal | None
    """Where its records go; None runs it unjournaled."""
    kind: Literal["fresh"] = "fresh"


@dataclass(frozen=True, kw_only=True, slots=True)
class Mirrored:
    """A new session whose records go to an engine's sink when the run ends or pauses; the
    engine keeps the durable history, so no lease is taken and no step is flushed early."""

    sink: RecordSink
    """Receives the records."""
    kind: Literal["mirror"] = "mirror"


@dataclass(frozen=True, kw_only=True, slots=True)
class Replay:
    """A strict replay: the records are all the run has; it writes nothing and never goes live
    (a step past them is a divergence, not a network call)."""

    records: Sequence[JournalRecord]
    """The session's records as one run (see ``replayable``); a store's undecoded records
    (``StoredRecords``) are decoded as the run reaches them."""
    journal: Journal | None = None
    """The journal they were read from, where delegated sub-runs' records are read too
    (never written)."""
    execute_tools: bool = False
    """Whether tools run for real instead of returning their journaled outcomes."""
    kind: Literal["replay"] = "replay"


@dataclass(frozen=True, kw_only=True, slots=True)
class Fork:
    """A new session that starts with another's records (renumbered under its own id) and goes
    live where they end."""

    journal: Journal
    """Where the fork's records go, the copied prefix first."""
    prefix: tuple[JournalRecord, ...]
    """The records it replays, already under the fork's session id."""
    edit: Mapping[str, Any] | None = None
    """A time-travel edit (``context_update``, ``forked_from``, ``at``), journaled and applied
    to the state the moment the prefix is used up."""
    execute_tools: bool = False
    """Whether tools run for real while the prefix replays."""
    kind: Literal["fork"] = "fork"


@dataclass(frozen=True, kw_only=True, slots=True)
class Resume:
    """The same session going on live after the steps it completed."""

    journal: Journal
    """The session's journal."""
    prefix: tuple[JournalRecord, ...]
    """The records it replays (see ``resumable_prefix``)."""
    next_seq: int
    """The number its first new record takes (the journal is append-only: every record it
    holds keeps its number, including those the prefix leaves out)."""
    decision: Decision | None = None
    """A person's decision for the pause the session is waiting at."""
    kind: Literal["resume"] = "resume"


Course = Fresh | Mirrored | Replay | Fork | Resume
"""How one run of a session goes."""


def prefix_of(course: Course) -> Sequence[JournalRecord]:
    """The records a course replays before it goes live."""
    match course:
        case Fresh() | Mirrored():
            return ()
        case Replay(records=records):
            return records
        case Fork(prefix=prefix) | Resume(prefix=prefix):
            return prefix


def sink_of(course: Course) -> RecordSink | None:
    """Where a course's new records go (None: nowhere)."""
    match course:
        case Fresh(journal=journal):
            return journal
        case Mirrored(sink=sink):
            return sink
        case Replay():
            return None
        case Fork(journal=journal) | Resume(journal=journal):
            return journal


def leased(course: Course) -> Journal | None:
    """The journal whose lease a course holds while it writes (a mirror's engine and a replay
    hold none)."""
    match course:
        case Fresh(journal=journal):
            return journal
        case Fork(journal=journal) | Resume(journal=journal):
            return journal
        case Mirrored() | Replay():
            return None


def first_seq(course: Course) -> int:
    """The number of a course's first new record."""
    match course:
        case Resume(next_seq=next_seq):
            return next_seq
        case Fork(prefix=prefix):
            return len(prefix)
        case Fresh() | Mirrored() | Replay():
            return 0


def resumable_prefix(records: Sequence[JournalRecord]) -> tuple[JournalRecord, ...]:
    """The records a resumed run replays: a run that ended in an error retries its last step,
    one stopped by Ctrl-C (``cancelled``) goes on from where it stopped, and one a limit
    stopped goes on with a fresh allowance.

    Those ends (a failed run's ``run_finished`` and the failed model call before it, a limit's
    ``limit_reached`` and ``run_finished``) stay in the append-only journal but are left out
    of the prefix, every one of them that the session ends with: a session stopped again
    before it took a step resumes from the same place.
    """
    kept = _resumable(records, kinds_of(records), list(range(len(records))))
    return tuple(records[index] for index in kept)


def _resumable(
    records: Sequence[JournalRecord], kinds: Sequence[str], kept: list[int]
) -> list[int]:
    """``kept`` (indices into ``records``) without the stopped ends it finishes with (see
    ``resumable_prefix``); only those ends are read."""
    while kept and kinds[kept[-1]] == "run_finished":
        end = records[kept[-1]].data
        if end.get("limit"):
            before = "limit_reached"
        elif end.get("stop_reason") == "error" or end.get("cancelled"):
            before = "model_call"
        else:
            break
        kept.pop()
        if kept and kinds[kept[-1]] == before and _stopped(records[kept[-1]]):
            kept.pop()
    return kept


def _stopped(record: JournalRecord) -> bool:
    """Whether a record is the step that stopped the run (a limit's, or a failed call)."""
    return record.kind == "limit_reached" or "error" in record.data


def replayable(records: Sequence[JournalRecord]) -> Sequence[JournalRecord]:
    """A whole session as one run for replay: an attempt that failed or was stopped by Ctrl-C
    and then resumed leaves its end (and its failed model call) out, as resume did. Only the
    runs' ends are read: stored records stay undecoded."""
    kinds = kinds_of(records)
    runs = [index for index, kind in enumerate(kinds) if kind not in PERSON_NOTES]
    kept: list[int] = []
    for index in runs:
        kept.append(index)
        if kinds[index] != "run_finished" or index == runs[-1]:
            continue
        end = records[index].data
        if end.get("stop_reason") == "error" or end.get("cancelled"):
            kept = _resumable(records, kinds, kept)
    return records_at(records, kept)
