"""Working a queue of people: list the conversations waiting for a person, claim one, reply
in it, hand it back to an agent or close it, and escalate those nobody claimed in time.

Each claim, reply and escalation is a record of the session (``queue_claimed``,
``queue_replied``, ``queue_escalated``) written under the session's lease after reading it
afresh, so of two people (or processes) claiming at once exactly one wins; the other gets a
``PeopleQueueError``. A hand-back or close resumes the run with the replies, in this
process; a session a durable engine runs (its mirror says which, ``queue_engine``) is handed
back with the engine's decide and ``hand_back_decision`` instead.

What a durable engine reads and writes of a parked conversation (``person_pending``,
``people_notes``, ``engine_notes``, ``check_in_process``) is defined here for the engines and
servers, which import it from ``swarmkit.lowlevel``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swarmkit.exceptions import PeopleQueueError, SessionBusyError
from swarmkit.interrupts import PendingDecision
from swarmkit.journal import Journal, JournalRecord, session_status
from swarmkit.journal._records import ENGINE_NOTE, PERSON_NOTES, last_run_record
from swarmkit.people import PersonReply, TakeOver, replies_of, take_over_decision

if TYPE_CHECKING:
    from swarmkit.interrupts import Decision
    from swarmkit.result import RunResult
    from swarmkit.swarm import Swarm

__all__ = [
    "WaitingConversation",
    "claim",
    "close",
    "engine_of",
    "escalate",
    "hand_back",
    "hand_back_decision",
    "reply",
    "waiting",
]

_NOTE_LEASE = 30.0
"""Seconds a claim, reply or escalation holds the session's lease (released at once)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class WaitingConversation:
    """A conversation parked for a person, as a queue lists it."""

    session_id: str
    """The session it is."""
    queue: str
    """The queue of people it waits in."""
    priority: int
    """The queue's priority (higher first)."""
    parked_at: float | None
    """When it was handed to the queue (Unix seconds, the run's clock)."""
    age: float
    """Seconds it has waited, on the clock it was listed with."""
    deadline: float | None
    """Seconds it may wait unclaimed before it is escalated; None never."""
    overdue: bool
    """Unclaimed past its deadline."""
    escalated_at: float | None
    """When its escalation was journaled; None when it has not been."""
    claimed_by: str | None
    """Who claimed it; None when nobody has."""
    claimed_at: float | None
    """When it was claimed."""
    replies: tuple[PersonReply, ...]
    """The person's replies so far, in order."""
    source: str | None
    """The agent that handed it over."""
    payload: Mapping[str, Any] | None
    """The handoff's typed payload, as JSON."""
    message: str | None
    """The handoff's note, for an untyped handoff."""
    prompt: str | None
    """The user's message the run answered."""
    engine: str | None = None
    """The durable engine that resumes it (``"temporal"``, ``"dbos"``); None in process."""

    def to_data(self) -> dict[str, Any]:
        """As JSON-safe data (the command's ``--json`` and the viewer's API)."""
        return {
            "session_id": self.session_id,
            "queue": self.queue,
            "priority": self.priority,
            "parked_at": self.parked_at,
            "age": self.age,
            "deadline": self.deadline,
            "overdue": self.overdue,
            "escalated_at": self.escalated_at,
            "claimed_by": self.claimed_by,
            "claimed_at": self.claimed_at,
            "replies": [r.to_data() for r in self.replies],
            "source": self.source,
            "payload": None if self.payload is None else dict(self.payload),
            "message": self.message,
            "prompt": self.prompt,
            "engine": self.engine,
        }


async def waiting(
    journal: Journal,
    *,
    queue: str | None = None,
    now: float | None = None,
    escalate_overdue: bool = True,
) -> tuple[WaitingConversation, ...]:
    """The conversations waiting for a person (in ``queue``, or in any), highest priority and
    longest waiting first. With ``escalate_overdue``, those newly past their deadline are
    escalated first (a journaled record each); ``now`` is the clock's time (the real one by
    default)."""
    at = time.time() if now is None else now
    if escalate_overdue:
        await escalate(journal, now=at)
    found = [c for c in await _all_waiting(journal, at) if queue is None or c.queue == queue]
    return tuple(sorted(found, key=lambda c: (-c.priority, -c.age, c.session_id)))


async def escalate(
    journal: Journal, *, now: float | None = None
) -> tuple[WaitingConversation, ...]:
    """Journal an escalation for each conversation nobody claimed within its queue's deadline
    (once each); returns those escalated now. Run it as a sweep (``swarmkit queue escalate``)
    or let ``waiting`` do it: nothing sleeps in the background."""
    at = time.time() if now is None else now
    done: list[WaitingConversation] = []
    for found in await _all_waiting(journal, at):
        if not found.overdue or found.escalated_at is not None:
            continue
        data = {"queue": found.queue, "waited": found.age, "deadline": found.deadline}
        try:
            done.append(
                await _add_note(
                    journal, found.session_id, "queue_escalated", data, at=at, check=_overdue
                )
            )
        except PeopleQueueError:
            continue  # claimed or escalated by someone else meanwhile
    return tuple(done)


async def claim(
    journal: Journal, session_id: str, *, by: str, now: float | None = None
) -> WaitingConversation:
    """``by`` claims a waiting conversation; a ``PeopleQueueError`` when it is not waiting for
    a person or someone claimed it first (or is claiming it this very moment)."""
    person = _person(by)
    data = {"by": person}
    return await _add_note(
        journal, session_id, "queue_claimed", data, at=_now(now), check=_unclaimed
    )


async def reply(
    journal: Journal, session_id: str, *, by: str, text: str, now: float | None = None
) -> WaitingConversation:
    """``by`` replies in a conversation they claimed (journaled with who and when); the agents
    see the reply once the conversation is handed back."""
    person = _person(by)
    if not isinstance(text, str) or not text.strip():
        raise PeopleQueueError("a reply needs some text", session_id=session_id)
    data = {"by": person, "text": text}
    return await _add_note(
        journal, session_id, "queue_replied", data, at=_now(now), check=_claimed_by(person)
    )


async def hand_back(
    swarm: Swarm, session_id: str, *, to: str, by: str, journal: Journal | None = None
) -> RunResult:
    """``by`` hands a conversation they claimed back to the agent ``to``: the run goes on with
    it, and it sees the person's replies. An unknown agent is refused before anything is
    written; the conversation keeps waiting."""
    return await _finish(swarm, session_id, by=by, to=to, journal=journal)


async def close(
    swarm: Swarm, session_id: str, *, by: str, journal: Journal | None = None
) -> RunResult:
    """``by`` closes a conversation they claimed: the run ends, its answer the last reply."""
    return await _finish(swarm, session_id, by=by, to=None, journal=journal)


async def hand_back_decision(
    journal: Journal, session_id: str, *, to: str | None, by: str
) -> Decision:
    """The decision that hands a conversation ``by`` claimed back to the agent ``to`` (or
    closes it, with ``to=None``), carrying their replies. ``hand_back`` and ``close`` resume
    with it in this process; send it yourself where something else resumes the session (a
    durable engine's decide). Refused when the conversation waits for nobody or ``by`` has not
    claimed it; the agent's name is checked by the resume."""
    person = _person(by)
    if to is not None and not isinstance(to, str):
        raise PeopleQueueError(f"hand back to an agent's name, got {to!r}", session_id=session_id)
    found = _claimed_by(person)(
        _waiting_of(await journal.read(session_id), time.time()), session_id
    )
    take_over = TakeOver(
        action="close" if to is None else "hand_back",
        replies=found.replies,
        agent=to,
        by=person,
    )
    return take_over_decision(take_over)


async def _finish(
    swarm: Swarm, session_id: str, *, by: str, to: str | None, journal: Journal | None
) -> RunResult:
    store = journal or swarm.config.journal
    if store is None:
        raise PeopleQueueError(
            "no journal to find the conversation in: pass journal= or Swarm(journal=)",
            session_id=session_id,
        )
    await check_in_process(store, session_id, to=to, by=by)
    decision = await hand_back_decision(store, session_id, to=to, by=by)
    return await swarm.resume(session_id, store, decision=decision)


_DECIDE = {
    "temporal": "`await swarmkit.temporal.decide(session_handle(client, {session!r}), decision)`"
    " (or the command: `swarmkit queue {verb} {session} --by {by}{to} --temporal-address "
    "HOST:PORT`)",
    "dbos": "`await durable_swarms.session_handle({session!r}).decide(decision)`",
}


async def check_in_process(journal: Journal, session_id: str, *, to: str | None, by: str) -> None:
    """Refuse a hand-back (or close, ``to=None``) in this process of a conversation a durable
    engine runs: its workflow resumes it, and a second run beside it would be lost. The
    ``PeopleQueueError`` says how to send it to the engine instead; nothing is written."""
    engine = engine_of(await journal.read(session_id))
    if engine is None:
        return
    verb, option = ("close", "") if to is None else ("hand-back", f" --to {to}")
    send = _DECIDE.get(engine, "the engine's decide").format(
        session=session_id, verb=verb, by=by, to=option
    )
    raise PeopleQueueError(
        f"session {session_id!r} runs on {engine}, which resumes it: hand it back there, not "
        f"in this process. Build the decision with `decision = await swarmkit.queues."
        f"hand_back_decision(journal, {session_id!r}, to={to!r}, by={by!r})` and send it with "
        f"{send}; nothing was written",
        session_id=session_id,
    )


def engine_notes(records: Sequence[JournalRecord], *, engine: str) -> tuple[JournalRecord, ...]:
    """The notes a durable engine's mirror adds after ``records``: one for each session whose
    records end parked for a person, saying that ``engine`` resumes it. Write them with the
    records, in one append, so no person sees the session waiting without them."""
    last: dict[str, JournalRecord] = {}
    for record in records:
        last[record.session_id] = record
    return tuple(
        JournalRecord(
            session_id=end.session_id,
            seq=end.seq + 1,
            kind=ENGINE_NOTE,
            data={"engine": engine},
            at=end.at,
        )
        for end in last.values()
        if person_pending([end]) is not None
    )


def person_pending(records: Sequence[JournalRecord]) -> PendingDecision | None:
    """What a session's records leave it waiting for when that is a person (its queue, the
    handoff's payload), else None. A durable engine asks it of the records it mirrored."""
    end = last_run_record(records)
    if end is None or session_status(records) != "waiting":
        return None
    pending = end.data.get("pending")
    if not isinstance(pending, Mapping) or pending.get("kind") != "person":
        return None
    return PendingDecision(**pending)


def people_notes(records: Sequence[JournalRecord]) -> tuple[JournalRecord, ...]:
    """The people's notes among ``records`` (claims, replies, escalations), in order: what a
    durable engine copies from its mirror into its own journal before a hand-back resumes."""
    return tuple(r for r in records if r.kind in PERSON_NOTES)


# -- reading and writing a parked conversation --------------------------------------------

Check = Callable[["WaitingConversation | None", str], "WaitingConversation"]


async def _add_note(
    journal: Journal,
    session_id: str,
    kind: str,
    data: Mapping[str, Any],
    *,
    at: float,
    check: Check,
) -> WaitingConversation:
    """Read the session afresh under its lease, check, then append one note: a second writer
    waits for no one, it gets a clear error."""
    owner = f"person-{uuid.uuid4().hex}"
    try:
        await journal.acquire_lease(session_id, owner=owner, ttl=_NOTE_LEASE)
    except SessionBusyError as exc:
        raise PeopleQueueError(
            f"session {session_id!r} is being changed right now (another person's claim or "
            "reply, or its run); list the queue again and retry",
            session_id=session_id,
        ) from exc
    try:
        records = await journal.read(session_id)
        check(_waiting_of(records, at), session_id)
        record = JournalRecord(
            session_id=session_id, seq=len(records), kind=kind, data=dict(data), at=at
        )
        await journal.append([record])
        after = _waiting_of([*records, record], at)
        assert after is not None
        return after
    finally:
        await journal.release_lease(session_id, owner=owner)


def _waiting(found: WaitingConversation | None, session_id: str) -> WaitingConversation:
    if found is None:
        raise PeopleQueueError(
            f"session {session_id!r} is not waiting for a person", session_id=session_id
        )
    return found


def _unclaimed(found: WaitingConversation | None, session_id: str) -> WaitingConversation:
    found = _waiting(found, session_id)
    if found.claimed_by is not None:
        raise PeopleQueueError(
            f"session {session_id!r} is already claimed by {found.claimed_by!r}",
            session_id=session_id,
            claimed_by=found.claimed_by,
        )
    return found


def _overdue(found: WaitingConversation | None, session_id: str) -> WaitingConversation:
    found = _unclaimed(found, session_id)
    if not found.overdue or found.escalated_at is not None:
        raise PeopleQueueError(f"session {session_id!r} needs no escalation", session_id=session_id)
    return found


def _claimed_by(person: str) -> Check:
    def check(found: WaitingConversation | None, session_id: str) -> WaitingConversation:
        found = _waiting(found, session_id)
        if found.claimed_by is None:
            raise PeopleQueueError(
                f"nobody has claimed session {session_id!r}: claim it first "
                f"(swarmkit queue claim {session_id} --by {person})",
                session_id=session_id,
            )
        if found.claimed_by != person:
            raise PeopleQueueError(
                f"session {session_id!r} is claimed by {found.claimed_by!r}, not {person!r}",
                session_id=session_id,
                claimed_by=found.claimed_by,
            )
        return found

    return check


async def _all_waiting(journal: Journal, at: float) -> list[WaitingConversation]:
    found: list[WaitingConversation] = []
    for info in await journal.sessions():
        if info.state != "waiting":
            continue
        conversation = _waiting_of(await journal.read(info.session_id), at)
        if conversation is not None:
            found.append(conversation)
    return found


def _waiting_of(records: Sequence[JournalRecord], at: float) -> WaitingConversation | None:
    """The parked conversation the records leave, or None when it waits for no person."""
    pending = person_pending(records)
    end = last_run_record(records)
    if pending is None or end is None:
        return None
    parked = dict(pending.payload or {})
    notes = [r for r in records[_index(records, end) + 1 :] if r.kind in PERSON_NOTES]
    claims = [r for r in notes if r.kind == "queue_claimed"]
    escalations = [r for r in notes if r.kind == "queue_escalated"]
    replies = [{**r.data, "at": r.at} for r in notes if r.kind == "queue_replied"]
    parked_at = _parked_at(records, end)
    age = 0.0 if parked_at is None else max(0.0, at - parked_at)
    deadline = parked.get("deadline")
    return WaitingConversation(
        session_id=end.session_id,
        queue=str(parked.get("queue")),
        priority=int(parked.get("priority") or 0),
        parked_at=parked_at,
        age=age,
        deadline=deadline,
        overdue=not claims and deadline is not None and age > float(deadline),
        escalated_at=escalations[0].at if escalations else None,
        claimed_by=str(claims[0].data.get("by")) if claims else None,
        claimed_at=claims[0].at if claims else None,
        replies=replies_of(replies),
        source=parked.get("source"),
        payload=parked.get("payload"),
        message=parked.get("message"),
        prompt=_prompt(records),
        engine=_engine_in(notes),
    )


def engine_of(records: Sequence[JournalRecord]) -> str | None:
    """The durable engine (``"temporal"``, ``"dbos"``) whose workflow resumes the person's
    pause a session's records end in, as its mirror noted; None when nothing but this
    process resumes it (or it waits for no person)."""
    end = last_run_record(records)
    if end is None or person_pending(records) is None:
        return None
    return _engine_in(records[_index(records, end) + 1 :])


def _engine_in(notes: Sequence[JournalRecord]) -> str | None:
    marks = [r for r in notes if r.kind == ENGINE_NOTE]
    return str(marks[-1].data.get("engine")) if marks else None


def _parked_at(records: Sequence[JournalRecord], end: JournalRecord) -> float | None:
    for record in reversed(records[: _index(records, end)]):
        if record.kind == "interrupt":
            return record.at
    return end.at


def _index(records: Sequence[JournalRecord], record: JournalRecord) -> int:
    return next(i for i, r in enumerate(records) if r is record)


def _prompt(records: Sequence[JournalRecord]) -> str | None:
    starts = [r for r in records if r.kind == "run_started"]
    prompt = starts[-1].data.get("prompt") if starts else None
    return prompt if isinstance(prompt, str) else None


def _person(by: object) -> str:
    if not isinstance(by, str) or not by.strip():
        raise PeopleQueueError(f"say who you are: by= must be a non-empty name, got {by!r}")
    return by.strip()


def _now(now: float | None) -> float:
    return time.time() if now is None else now
