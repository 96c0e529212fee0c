"""SQLiteJournal's group commit: concurrent sessions of one loop share transactions, safely."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from swarmkit import Agent, Swarm
from swarmkit.exceptions import JournalError, SessionBusyError
from swarmkit.journal import SQLiteJournal
from swarmkit.messages import AssistantMessage, ToolCall
from swarmkit.models import ModelRequest, ModelResponse, Usage
from tests.journal.test_journal_contract import step
from tests.journal.test_sqlite_journal import execute_elsewhere

USAGE = Usage(prompt_tokens=5, completion_tokens=5, total_tokens=10)


class HandoffModel:
    """Triage transfers to billing, billing answers; each call yields to the loop once."""

    name = "handoff"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(0)
        if request.agent == "triage":
            call = ToolCall(id="call_1", name="transfer_to_billing", arguments="{}")
            message = AssistantMessage(content=None, tool_calls=(call,))
            return ModelResponse(message=message, usage=USAGE, finish_reason="tool_calls")
        message = AssistantMessage(content="Refunded.", tool_calls=())
        return ModelResponse(message=message, usage=USAGE, finish_reason="stop")


def _swarm() -> Swarm:
    billing = Agent(name="billing", instructions="You handle billing.")
    triage = Agent(name="triage", instructions="You route tickets.", handoffs=[billing])
    return Swarm([triage, billing], "triage", model=HandoffModel())


async def test_many_concurrent_sessions_lose_and_repeat_no_record_and_all_replay(
    tmp_path: Path,
) -> None:
    """200 sessions gathered on one loop and one journal: each is whole, in order, replayable."""
    swarm = _swarm()
    with SQLiteJournal(tmp_path / "j.sqlite3") as journal:
        results = await asyncio.gather(*(swarm.run("refund", journal=journal) for _ in range(200)))
        ids = {result.session_id for result in results}
        assert len(ids) == 200
        for session_id in ids:
            records = await journal.read(session_id)
            assert [r.seq for r in records] == list(range(len(records)))
            assert [r.kind for r in records].count("model_call") == 2
            assert records[-1].kind == "run_finished"
        replays = await asyncio.gather(*(swarm.replay(s, journal) for s in ids))
        assert all(replay.final_output == "Refunded." for replay in replays)
        listed = {info.session_id: info for info in await journal.sessions()}
        assert all(listed[s].status == "finished" for s in ids)


async def test_a_failed_commit_fails_every_writer_of_its_group_and_writes_none_of_them(
    tmp_path: Path,
) -> None:
    """The first write of a loop pass commits alone; the writes that join it in that pass share
    one transaction, so an SQLite failure in one of them leaves none of them behind."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path) as journal:
        execute_elsewhere(
            path,
            "CREATE TRIGGER fail BEFORE INSERT ON records WHEN NEW.session_id = 'poison'"
            " BEGIN SELECT RAISE(ABORT, 'disk on fire'); END",
        )
        names = ["alone", "b1", "b2", "poison", "b3"]
        outcomes = await asyncio.gather(
            *(journal.append(step(name, 0, "run_started")) for name in names),
            return_exceptions=True,
        )
        assert outcomes[0] is None
        for outcome in outcomes[1:]:
            assert isinstance(outcome, JournalError)
            assert "disk on fire" in str(outcome)
        assert await journal.next_seq("alone") == 1
        for name in names[1:]:
            assert await journal.next_seq(name) == 0
        assert [info.session_id for info in await journal.sessions()] == ["alone"]


async def test_a_writer_refused_in_a_group_does_not_undo_the_others(tmp_path: Path) -> None:
    """A seq gap is that writer's own error: the rest of its group is committed."""
    with SQLiteJournal(tmp_path / "j.sqlite3") as journal:
        steps = [step("a", 0, "run_started"), step("b", 0, "run_started"), step("c", 5, "x")]
        steps.append(step("d", 0, "run_started"))
        outcomes = await asyncio.gather(*map(journal.append, steps), return_exceptions=True)
        assert outcomes[0] is None and outcomes[1] is None and outcomes[3] is None
        assert isinstance(outcomes[2], JournalError)
        assert [await journal.next_seq(s) for s in "abcd"] == [1, 1, 0, 1]


async def test_concurrent_owners_of_one_session_get_the_lease_once(tmp_path: Path) -> None:
    """Owners asking in the same pass: one holds the lease, the others are refused at once."""
    with SQLiteJournal(tmp_path / "j.sqlite3") as journal:
        outcomes = await asyncio.gather(
            *(journal.acquire_lease("s", owner=f"w{i}", ttl=60) for i in range(5)),
            return_exceptions=True,
        )
        assert outcomes.count(None) == 1
        assert all(isinstance(o, SessionBusyError) for o in outcomes if o is not None)


async def test_a_finishing_step_gives_up_the_lease_in_its_own_transaction(
    tmp_path: Path,
) -> None:
    """After a step holding run_finished another owner may write at once; the holder's
    release that follows changes nothing."""
    with SQLiteJournal(tmp_path / "j.sqlite3") as journal:
        await journal.acquire_lease("s", owner="first", ttl=60)
        await journal.append(step("s", 0, "run_started", "run_finished"))
        await journal.acquire_lease("s", owner="second", ttl=60)
        await journal.release_lease("s", owner="first")
        with pytest.raises(SessionBusyError):
            await journal.acquire_lease("s", owner="third", ttl=60)


async def test_a_holder_writing_after_its_finish_must_hold_the_lease_again(
    tmp_path: Path,
) -> None:
    """A step after the finishing one retakes the lease, so it fails if another owner (here
    another journal object on the file, as another process) took it."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path) as journal, SQLiteJournal(path) as other:
        await journal.acquire_lease("s", owner="first", ttl=60)
        await journal.append(step("s", 0, "run_started", "run_finished"))
        await journal.append(step("s", 2, "resumed"))  # nobody else: it holds the lease again
        with pytest.raises(SessionBusyError):
            await other.acquire_lease("s", owner="second", ttl=60)
        await journal.append(step("s", 3, "run_finished"))
        await other.acquire_lease("s", owner="second", ttl=60)
        with pytest.raises(SessionBusyError):
            await journal.append(step("s", 4, "resumed"))
        assert await journal.next_seq("s") == 4


async def test_close_commits_the_writes_still_queued(tmp_path: Path) -> None:
    """Writers waiting for their group when the journal closes get their write, committed."""
    path = tmp_path / "j.sqlite3"
    journal = SQLiteJournal(path)
    writers = [asyncio.ensure_future(journal.append(step(f"s{i}", 0, "a"))) for i in range(5)]
    await asyncio.sleep(0)  # each has queued its write (the first committed it already)
    journal.close()
    assert await asyncio.gather(*writers) == [None] * 5
    with SQLiteJournal(path) as reopened:
        assert len(await reopened.sessions()) == 5


async def test_a_write_after_close_is_refused(tmp_path: Path) -> None:
    """A closed journal refuses a write whether it would commit alone or in a group."""
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    journal.close()
    outcomes = await asyncio.gather(
        *(journal.append(step(f"s{i}", 0, "a")) for i in range(3)), return_exceptions=True
    )
    assert all(isinstance(o, JournalError) and "closed" in str(o) for o in outcomes)


def test_run_sync_twice_on_one_journal(tmp_path: Path) -> None:
    """Each run_sync has an event loop of its own; the journal serves both."""
    swarm = _swarm()
    with SQLiteJournal(tmp_path / "j.sqlite3") as journal:
        first = swarm.run_sync("refund", journal=journal)
        second = swarm.run_sync("refund again", journal=journal)
        listed = asyncio.run(journal.sessions())
    assert {info.session_id for info in listed} == {first.session_id, second.session_id}


def test_threads_with_their_own_loops_run_concurrent_sessions_on_one_journal(
    tmp_path: Path,
) -> None:
    """Four threads, each gathering sessions on its own loop, share the journal safely."""
    swarm = _swarm()
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    failures: list[BaseException] = []

    def work() -> None:
        async def many() -> None:
            await asyncio.gather(*(swarm.run("refund", journal=journal) for _ in range(20)))

        try:
            asyncio.run(many())
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    infos = asyncio.run(journal.sessions())
    journal.close()
    assert failures == []
    assert len(infos) == 80 and all(info.status == "finished" for info in infos)


async def test_a_write_waits_for_another_process_lock_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    """While another connection holds the write lock, the loop keeps running other tasks;
    the write lands once the lock is free."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path) as journal:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        writer = asyncio.ensure_future(journal.append(step("s", 0, "run_started")))
        for _ in range(3):
            await asyncio.sleep(0)  # the loop is free: this task keeps running
        assert not writer.done()
        other.execute("COMMIT")
        other.close()
        await writer
        assert await journal.next_seq("s") == 1


async def test_a_lock_held_past_the_timeout_fails_the_write_with_what_to_do(
    tmp_path: Path,
) -> None:
    """A write that waited ``timeout`` seconds for the lock fails, naming the timeout."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path, timeout=0.01) as journal:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(JournalError, match=r"write lock for over 0\.01 s"):
                await journal.append(step("s", 0, "run_started"))
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert await journal.next_seq("s") == 0
