"""The replay cursor: walks a run's journaled records in step with the run, and reports where
the current code departs from them."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from swarmkit.exceptions import ReplayDivergenceError
from swarmkit.journal._codec import UNCOMPARED_KEYS
from swarmkit.journal._records import PERSON_NOTES, JournalRecord
from swarmkit.journal._stored import kinds_of, records_at
from swarmkit.journal._writer import NOTHING_HELD, Held
from swarmkit.models import ModelRequest

STATE_EDITED = "state_edited"
"""A fork's edit of the state (a time-travel update), applied where the journal holds it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TimeTravel:
    """How a replay is watched, and how journaled state edits reach the run's state."""

    apply: Callable[[Mapping[str, Any]], None]
    """Merges a context update into the run's state."""
    replayed: Callable[[JournalRecord], None] | None = None
    """Called with each replayed record, in order (for ``Swarm.history``); None: unwatched."""
    requested: Callable[[int, str, int, ModelRequest], None] | None = None
    """Called with each replayed model call's seq, agent, turn and whole request as sent
    (for ``Swarm.requests``); None spares a replay building whole requests."""


class ReplayCursor:
    """The position of a run in the records it replays.

    Every step the run takes while records remain must match the next one, or the cursor
    raises ReplayDivergenceError with a diff of what the current code produced.
    """

    __slots__ = (
        "_at",
        "_end",
        "_kinds",
        "_records",
        "_session_id",
        "done",
        "empty",
        "next",
        "travel",
    )

    def __init__(
        self, session_id: str, records: Sequence[JournalRecord], travel: TimeTravel
    ) -> None:
        self._session_id = session_id
        # People's notes (a claim, a reply) come between runs; no run writes or replays them.
        kinds = kinds_of(records) if records else ()  # none to replay: no list made
        self._kinds = kinds
        if not PERSON_NOTES.isdisjoint(kinds):
            self._kinds = [kind for kind in kinds if kind not in PERSON_NOTES]
            records = records_at(records, [i for i, k in enumerate(kinds) if k not in PERSON_NOTES])
        self._records = records
        self._end = len(records)
        self._at = 0
        self.travel = travel
        """Watches the replay and applies journaled state edits."""
        self.empty = not self._end
        """Whether there were no records to replay."""
        self.done = self.empty
        """Whether every record has been replayed (at once, for a run with none)."""
        # Stored records are decoded one at a time, here, as the run reaches each.
        self.next: JournalRecord | None = records[0] if self._end else None
        """The record the run's next step must match (None once done)."""

    def at_last(self) -> bool:
        """Whether the cursor stands just past the last record (a resume's pause point)."""
        return bool(self._end) and self._at == self._end

    def peek(self, ahead: int = 0) -> JournalRecord | None:
        """The record ``ahead`` steps after the next one, if there is one."""
        at = self._at + ahead
        return self._records[at] if at < self._end else None

    def held(self, kind: str) -> Held | None:
        """What the journal holds for a step of ``kind`` here (see ``StepWriter.held``)."""
        record = self.next
        if record is None:
            return None
        return Held(data=record.data) if record.kind == kind else NOTHING_HELD

    def at_resumed_stop(self) -> bool:
        """Whether a limit's stop (``limit_reached``, ``run_finished``) comes next and the
        records go on after it: a resume went on from it."""
        kinds = self._kinds[self._at : self._at + 3]
        return len(kinds) == 3 and kinds[0] == "limit_reached" and kinds[1] == "run_finished"

    def expect(self, kind: str, data: Mapping[str, Any]) -> None:
        """The next record must be of ``kind`` and hold ``data`` (the caller steps past it)."""
        record = self.next
        assert record is not None  # the caller checked the records are not used up
        if record.kind != kind or comparable(record.data) != comparable(data):
            self.diverge(record, kind, data)

    def advance(self, steps: int = 1) -> None:
        """Step past ``steps`` records, then past any journaled state edits that follow,
        applying them as they come."""
        to = self._at + steps
        travel = self.travel
        while True:
            if travel.replayed is not None:
                self._show(to)
            self._at = to
            if to >= self._end:
                self.done, self.next = True, None
                return
            edit = self.next = self._records[to]
            if edit.kind != STATE_EDITED:
                return
            travel.apply(edit.data["context_update"])
            to += 1

    def _show(self, to: int) -> None:
        """The records from the next one up to ``to`` to the replay's watcher."""
        assert self.travel.replayed is not None
        current = self.next
        for at in range(self._at, to):
            # The next record is decoded already; any further one is decoded to be seen.
            self.travel.replayed(current if at == self._at and current else self._records[at])

    def diverge(
        self, record: JournalRecord, kind: str, actual: Mapping[str, Any], *, why: str = ""
    ) -> NoReturn:
        """Stop the replay at ``record``: the current code asked for ``kind`` with ``actual``."""
        if not why:
            why = (
                f"the journal holds {record.kind!r}, the current code asks for {kind!r}"
                if record.kind != kind
                else f"the current code's {kind!r} differs from the journaled one"
            )
        # Only what the current code produced is compared; the journaled answer is not shown.
        expected = {k: v for k, v in comparable(record.data).items() if k in actual}
        raise ReplayDivergenceError(
            f"replay of session {self._session_id!r} diverged at step {record.seq}: {why}",
            session_id=self._session_id,
            step=record.seq,
            diff=diff(expected, comparable(actual)),
        )

    def past_the_end(self, kind: str, data: Mapping[str, Any]) -> NoReturn:
        """Stop a replay that may not go live: the code asks for a step never recorded."""
        step = self._records[-1].seq + 1
        raise ReplayDivergenceError(
            f"replay of session {self._session_id!r} reached step {step}, past the end of the "
            f"journal: the current code asks for {kind!r}, which was never recorded",
            session_id=self._session_id,
            step=step,
            diff=diff({}, comparable(data)),
        )

    def check_used_up(self) -> None:
        """At the run's end: every record must have been replayed."""
        record = self.next
        if record is not None:
            raise ReplayDivergenceError(
                f"replay of session {self._session_id!r} ended at step {record.seq}, but the "
                f"journal goes on with {record.kind!r}: the current code stops earlier",
                session_id=self._session_id,
                step=record.seq,
                diff=diff(record.data, {}),
            )


def comparable(data: Mapping[str, Any]) -> dict[str, Any]:
    """A record's data without what replay does not compare (answers, times)."""
    return {k: v for k, v in data.items() if k not in UNCOMPARED_KEYS}


def diff(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> str:
    """A unified diff of the journal's data against the current code's."""

    def lines(value: Mapping[str, Any]) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, default=str).splitlines()

    return "\n".join(
        difflib.unified_diff(
            lines(expected),
            lines(actual),
            "journal (expected)",
            "current code (actual)",
            lineterm="",
        )
    )
