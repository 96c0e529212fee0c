"""The sessions list's snapshot: served at once, refreshed in the background when old."""

from __future__ import annotations

from swarmkit.journal import InMemoryJournal, JournalRecord
from swarmkit.ui._sessions import SessionList, SessionQuery
from swarmkit.ui._timeline import session_view


async def _start(journal: InMemoryJournal, session_id: str) -> None:
    data = {"prompt": "hi", "entry_agent": "triage", "context": {}}
    await journal.append(
        [JournalRecord(session_id=session_id, seq=0, kind="run_started", data=data)]
    )


async def test_an_old_snapshot_is_served_while_a_fresh_one_is_read() -> None:
    """Past max_age one request still gets the old rows; the next gets the new session."""
    journal = InMemoryJournal()
    now = [0.0]
    sessions = SessionList(journal, max_age=2.0, clock=lambda: now[0])
    await _start(journal, "a")
    first = await sessions.page(SessionQuery())
    await _start(journal, "b")
    now[0] = 5.0

    stale = await sessions.page(SessionQuery())
    await sessions.settled()
    fresh = await sessions.page(SessionQuery())

    assert [r["session_id"] for r in first["rows"]] == ["a"]
    assert [r["session_id"] for r in stale["rows"]] == ["a"]
    assert sorted(r["session_id"] for r in fresh["rows"]) == ["a", "b"]
    # The stale page says a fresher one is being read; the others do not.
    assert (first["refreshing"], stale["refreshing"], fresh["refreshing"]) == (False, True, False)


async def test_a_young_snapshot_is_not_read_again() -> None:
    """Within max_age, a new session is not listed yet: sessions() is not called per request."""
    journal = InMemoryJournal()
    sessions = SessionList(journal, max_age=2.0, clock=lambda: 1.0)
    await _start(journal, "a")
    await sessions.page(SessionQuery())
    await _start(journal, "b")

    again = await sessions.page(SessionQuery())

    assert [r["session_id"] for r in again["rows"]] == ["a"]


async def test_an_open_session_without_records_of_agents_has_empty_figures() -> None:
    """A session that only started lists no agents, handoffs, calls or tokens."""
    journal = InMemoryJournal()
    await _start(journal, "a")

    row = (await SessionList(journal).page(SessionQuery()))["rows"][0]

    assert (row["status"], row["agents"], row["handoffs"], row["tokens"]) == ("open", [], 0, 0)


async def test_the_state_filter_tells_cancelled_from_waiting() -> None:
    """A paused and a Ctrl-C-stopped session: each state filter lists its own one."""
    journal = InMemoryJournal()
    for session_id, ctrl_c in (("paused", False), ("stopped", True)):
        await _start(journal, session_id)
        end = {"stop_reason": "interrupted", "cancelled": ctrl_c}
        await journal.append(
            [JournalRecord(session_id=session_id, seq=1, kind="run_finished", data=end)]
        )
    sessions = SessionList(journal)

    waiting = await sessions.page(SessionQuery(status="waiting"))
    cancelled = await sessions.page(SessionQuery(status="cancelled"))

    assert [(r["session_id"], r["state"]) for r in waiting["rows"]] == [("paused", "waiting")]
    assert [(r["session_id"], r["state"]) for r in cancelled["rows"]] == [("stopped", "cancelled")]


async def test_an_eval_runs_manifest_is_listed_as_an_eval_run() -> None:
    """A manifest session has no run_finished, yet the list and its page never say running."""
    journal = InMemoryJournal()
    data = {"run_id": "r1", "trials": 1, "tasks": ["t"], "domain": "desk"}
    await journal.append(
        [JournalRecord(session_id="evalrun__r1", seq=0, kind="eval_run_started", data=data)]
    )

    row = (await SessionList(journal).page(SessionQuery()))["rows"][0]
    page = session_view(await journal.read("evalrun__r1"), None)

    assert (row["state"], row["status"], page["state"]) == ("eval run", "eval run", "eval run")
