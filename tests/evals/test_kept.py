"""A live eval's trials are graded and learned from in memory: the records the journal holds,
without reading them back, up to a limit past which they are read back."""

from __future__ import annotations

from swarmkit import InMemoryJournal
from swarmkit.evals._approvals import ApprovingSwarms
from swarmkit.evals._kept import KeepingJournal
from swarmkit.evals.support_desk import build_swarm, tasks
from swarmkit.journal import JournalRecord


def _step(session_id: str, seq: int, text: str) -> list[JournalRecord]:
    return [JournalRecord(session_id=session_id, seq=seq, kind="note", data={"text": text})]


def _shown(records: tuple[JournalRecord, ...]) -> list[tuple[int, str, object]]:
    return [(r.seq, r.kind, r.data) for r in records]


async def test_kept_records_are_the_ones_the_journal_holds() -> None:
    """A session written through it is answered from memory with what a read returns."""
    journal = InMemoryJournal()
    kept = KeepingJournal(journal)
    await kept.append(_step("s", 0, "one"))
    await kept.append(_step("s", 1, "two"))

    assert _shown(await kept.kept("s")) == _shown(await journal.read("s"))
    assert _shown(await kept.reading_kept().read("s")) == _shown(await journal.read("s"))


async def test_past_its_limit_or_begun_elsewhere_a_session_is_read_back() -> None:
    """Memory stops at ``limit`` records, and a session it did not see begin is not kept."""
    journal = InMemoryJournal()
    await journal.append(_step("old", 0, "written before"))
    kept = KeepingJournal(journal, limit=2)
    await kept.append(_step("old", 1, "then through the eval"))
    await kept.append([*_step("a", 0, "x"), *_step("a", 1, "y")])
    await kept.append(_step("b", 0, "past the limit"))

    for session in ("old", "a", "b"):
        assert _shown(await kept.kept(session)) == _shown(await journal.read(session))
    await kept.delete("a")
    await kept.append(_step("c", 0, "room again"))
    assert _shown(await kept.kept("c")) == _shown(await journal.read("c"))


def test_one_approving_swarm_per_answer_serves_every_trial() -> None:
    """The approving swarm is derived once per answer, not once per trial."""
    desk = tasks()
    rejecting = next(t for t in desk.tasks if t.approvals == "reject")
    approving = [t for t in desk.tasks if t.approvals == "approve"][:2]
    swarms = ApprovingSwarms(build_swarm())

    first = swarms.for_trial(approving[0], 1)
    assert swarms.for_trial(approving[1], 2) is first
    assert swarms.for_trial(rejecting, 1) is not first
    assert swarms.for_trial(rejecting, 2) is swarms.for_trial(rejecting, 1)
