"""The Journal contract, run on every store: memory is a faithful stand-in for a file."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from swarmkit.exceptions import (
    ConfigurationError,
    JournalError,
    SessionBusyError,
    SessionNotFoundError,
)
from swarmkit.journal import InMemoryJournal, Journal, JournalRecord, PostgresJournal, SQLiteJournal
from swarmkit.shadow import RULES_LOG, log_rule_change, read_rules_log


class FakeClock:
    """A clock that moves one second per reading, or stands still."""

    def __init__(self, start: float = 1_000.0, tick: float = 1.0) -> None:
        self.now = start
        self.tick = tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def record(session_id: str, seq: int, kind: str = "model_call", **data: Any) -> JournalRecord:
    """A record with keyword data."""
    return JournalRecord(session_id=session_id, seq=seq, kind=kind, data=data)


def step(session_id: str, start: int, *kinds: str) -> list[JournalRecord]:
    """Records of the given kinds with consecutive seqs from ``start``."""
    return [record(session_id, start + i, kind, n=start + i) for i, kind in enumerate(kinds)]


def make_journal(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> InMemoryJournal | SQLiteJournal | PostgresJournal:
    """A fresh journal of the kind the test is parametrised with."""
    if request.param == "memory":
        return InMemoryJournal(clock=clock)
    if request.param == "postgres":
        return PostgresJournal(request.getfixturevalue("postgres_dsn"), clock=clock)
    return SQLiteJournal(tmp_path / "journal.sqlite3", clock=clock)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def clock_and_journal(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[FakeClock, Journal]]:
    clock = FakeClock()
    journal = make_journal(request, tmp_path, clock)
    yield clock, journal
    if not isinstance(journal, InMemoryJournal):
        journal.close()


@pytest.fixture
def journal(clock_and_journal: tuple[FakeClock, Journal]) -> Journal:
    return clock_and_journal[1]


def test_both_stores_satisfy_the_journal_protocol(journal: Journal) -> None:
    """Each store is a Journal as far as isinstance can tell."""
    assert isinstance(journal, Journal)


async def test_append_then_read_returns_the_records_in_seq_order(journal: Journal) -> None:
    """Steps appended one after another read back as one ordered log."""
    first = step("s1", 0, "run_started", "model_call")
    second = step("s1", 2, "tool_call")
    await journal.append(first)
    await journal.append(second)
    assert await journal.read("s1") == (*first, *second)


async def test_read_of_an_unknown_session_raises_session_not_found(journal: Journal) -> None:
    """A missing session is a SessionNotFoundError that carries the id."""
    with pytest.raises(SessionNotFoundError) as caught:
        await journal.read("nope")
    assert caught.value.session_id == "nope"


async def test_next_seq_is_zero_for_a_new_session_and_follows_each_step(journal: Journal) -> None:
    """next_seq tells a writer where its next step starts."""
    assert await journal.next_seq("s1") == 0
    await journal.append(step("s1", 0, "run_started", "model_call", "tool_call"))
    assert await journal.next_seq("s1") == 3
    assert await journal.next_seq("other") == 0


async def test_a_step_that_skips_a_seq_names_the_expected_seq(journal: Journal) -> None:
    """A gap is refused and the error says which seq the session expects."""
    await journal.append(step("s1", 0, "run_started"))
    with pytest.raises(JournalError, match="expects seq 1 next, got 2"):
        await journal.append(step("s1", 2, "model_call"))


async def test_a_second_writer_of_one_session_fails_instead_of_interleaving(
    journal: Journal,
) -> None:
    """Two writers that both computed seq 1 cannot both append it."""
    await journal.append(step("s1", 0, "run_started"))
    await journal.append(step("s1", 1, "model_call"))
    with pytest.raises(JournalError, match="expects seq 2 next, got 1"):
        await journal.append(step("s1", 1, "model_call"))
    assert len(await journal.read("s1")) == 2


async def test_two_writers_that_both_start_a_session_cannot_both_write_it(
    journal: Journal,
) -> None:
    """The second first step of one session is refused, naming the seq the session expects,
    and the session keeps the first writer's records and summary."""
    await journal.append(step("s1", 0, "run_started"))
    with pytest.raises(JournalError, match="expects seq 1 next, got 0"):
        await journal.append(step("s1", 0, "model_call"))
    assert [r.kind for r in await journal.read("s1")] == ["run_started"]
    assert [info.records for info in await journal.sessions()] == [1]


async def test_a_new_session_must_start_at_seq_zero(journal: Journal) -> None:
    """The first step of a session starts at 0."""
    with pytest.raises(JournalError, match="expects seq 0 next, got 3"):
        await journal.append(step("s1", 3, "run_started"))


async def test_a_step_mixing_sessions_is_refused(journal: Journal) -> None:
    """One step belongs to one session."""
    with pytest.raises(JournalError, match="one session"):
        await journal.append([record("a", 0), record("b", 1)])


async def test_a_step_with_non_consecutive_seqs_is_refused(journal: Journal) -> None:
    """Seqs inside a step run without gaps."""
    with pytest.raises(JournalError, match="consecutive"):
        await journal.append([record("a", 0), record("a", 2)])


async def test_a_record_without_kind_or_session_is_refused(journal: Journal) -> None:
    """Empty session ids and kinds cannot address or describe a step."""
    with pytest.raises(JournalError, match="session_id"):
        await journal.append([record("", 0)])
    with pytest.raises(JournalError, match="kind"):
        await journal.append([record("a", 0, kind="")])


async def test_non_json_data_is_refused_naming_the_record_kind(journal: Journal) -> None:
    """Data JSON cannot hold fails loudly, and the whole step is left out."""
    bad = [*step("s1", 0, "run_started"), record("s1", 1, "tool_call", result={1, 2})]
    with pytest.raises(JournalError, match=r"record 1 \('tool_call'\).*not JSON-safe"):
        await journal.append(bad)
    assert await journal.next_seq("s1") == 0


async def test_nan_is_refused_because_json_has_no_nan(journal: Journal) -> None:
    """A float JSON cannot represent is refused rather than written as invalid JSON."""
    with pytest.raises(JournalError, match="not JSON-safe"):
        await journal.append([record("s1", 0, score=math.nan)])


async def test_data_that_contains_itself_is_refused_and_the_next_step_is_kept(
    journal: Journal,
) -> None:
    """A value holding itself cannot be JSON: refused naming the record, and the journal's
    encoder is left able to write the next step (it keeps no state between records)."""
    loop: dict[str, object] = {"name": "loop"}
    loop["self"] = loop
    with pytest.raises(JournalError, match=r"record 0 \('note'\).*not JSON-safe"):
        await journal.append([record("s1", 0, kind="note", data=loop)])
    await journal.append([record("s1", 0, kind="note", data={"name": "loop"})])
    assert [r.data for r in await journal.read("s1")] == [{"data": {"name": "loop"}}]


async def test_read_only_mappings_are_stored_as_objects(journal: Journal) -> None:
    """Any Mapping is accepted as data, at the top level or nested."""
    data = MappingProxyType({"inner": MappingProxyType({"a": 1})})
    await journal.append([JournalRecord(session_id="s1", seq=0, kind="k", data=data)])
    assert (await journal.read("s1"))[0].data == {"inner": {"a": 1}}


async def test_data_reads_back_as_json_holds_it(journal: Journal) -> None:
    """Tuples return as lists, unicode survives, and later mutation of the input is not seen."""
    data: dict[str, Any] = {"args": (1, "é"), "text": "日本 ✓", "nested": {"none": None}}
    await journal.append([JournalRecord(session_id="s1", seq=0, kind="k", data=data)])
    data["text"] = "changed"
    stored = (await journal.read("s1"))[0].data
    assert stored == {"args": [1, "é"], "text": "日本 ✓", "nested": {"none": None}}


async def test_odd_characters_in_data_and_kinds_read_back_exactly(journal: Journal) -> None:
    """NUL, lone surrogates, control characters and quotes survive, in data and in kinds."""
    data = {"nul": "a\x00b", "lone": "\ud800 \udfff", "controls": "\x1e\x1f\n\t", "q": 'q"\\'}
    kinds = ["odd\x1ekind ✓", 'quote"kind']
    await journal.append([JournalRecord(session_id="s1", seq=0, kind=kinds[0], data=data)])
    await journal.append([JournalRecord(session_id="s1", seq=1, kind=kinds[1], data={"d": data})])
    stored = await journal.read("s1")
    assert [(r.kind, r.data) for r in stored] == [(kinds[0], data), (kinds[1], {"d": data})]


async def test_sessions_are_listed_newest_first_with_their_summary(
    clock_and_journal: tuple[FakeClock, Journal],
) -> None:
    """Each summary gives counts, times from the clock, status, prompt and stop reason."""
    _, journal = clock_and_journal
    await journal.append([record("a", 0, "run_started", prompt="hello")])  # clock 1001
    await journal.append([record("b", 0, "run_started", prompt=["not", "text"])])  # 1002
    await journal.append(  # 1003
        [record("a", 1, "model_call"), record("a", 2, "run_finished", stop_reason="final_output")]
    )
    b, a = await journal.sessions()
    assert (a.session_id, a.records, a.started_at, a.updated_at) == ("a", 3, 1001.0, 1003.0)
    assert (a.status, a.stop_reason, a.prompt) == ("finished", "final_output", "hello")
    assert (b.session_id, b.records, b.started_at, b.updated_at) == ("b", 1, 1002.0, 1002.0)
    assert (b.status, b.stop_reason, b.prompt) == ("open", None, None)


async def test_sessions_started_at_the_same_time_list_the_latest_created_first(
    clock_and_journal: tuple[FakeClock, Journal],
) -> None:
    """Ties on the clock fall back to creation order, so listing stays deterministic."""
    clock, journal = clock_and_journal
    clock.tick = 0.0
    for session_id in ("x", "y", "z"):
        await journal.append(step(session_id, 0, "run_started"))
    assert [info.session_id for info in await journal.sessions()] == ["z", "y", "x"]


async def test_a_session_started_when_its_first_record_was(journal: Journal) -> None:
    """Records that carry their time (an imported session's) give the session its start; the
    last append is still when it was updated."""
    old = [
        JournalRecord(session_id="s", seq=0, kind="run_started", data={"prompt": "p"}, at=5.0),
        JournalRecord(session_id="s", seq=1, kind="run_finished", data={}, at=9.0),
    ]
    await journal.append(old)  # clock 1001

    (info,) = await journal.sessions()

    assert (info.started_at, info.updated_at) == (5.0, 1001.0)


async def test_stop_reason_follows_the_latest_run_finished(journal: Journal) -> None:
    """A session resumed after an interrupt reports how its latest run ended."""
    await journal.append([record("s", 0, "run_started", prompt="p")])
    await journal.append([record("s", 1, "run_finished", stop_reason="interrupted")])
    await journal.append([record("s", 2, "run_started", prompt="later")])
    await journal.append([record("s", 3, "run_finished", stop_reason="final_output")])
    (info,) = await journal.sessions()
    assert (info.status, info.stop_reason, info.prompt) == ("finished", "final_output", "p")


async def test_delete_removes_the_session_and_only_it(journal: Journal) -> None:
    """Deleting one session leaves the others untouched."""
    await journal.append(step("a", 0, "run_started"))
    await journal.append(step("b", 0, "run_started"))
    await journal.delete("a")
    with pytest.raises(SessionNotFoundError):
        await journal.read("a")
    assert [info.session_id for info in await journal.sessions()] == ["b"]
    assert await journal.next_seq("a") == 0


async def test_a_deleted_session_can_be_recorded_again_from_seq_zero(journal: Journal) -> None:
    """After delete the id is free: a new run starts its log afresh."""
    await journal.append(step("a", 0, "run_started", "model_call"))
    await journal.delete("a")
    await journal.append(step("a", 0, "run_started"))
    assert len(await journal.read("a")) == 1


async def test_delete_of_an_unknown_session_raises_session_not_found(journal: Journal) -> None:
    """Deleting what is not there is reported, not silently ignored."""
    with pytest.raises(SessionNotFoundError):
        await journal.delete("nope")


async def test_an_empty_step_writes_nothing(journal: Journal) -> None:
    """Appending no records is a no-op."""
    await journal.append([])
    assert await journal.sessions() == ()


async def test_a_second_owner_is_refused_a_held_lease_naming_the_holder(journal: Journal) -> None:
    """One writer per session: another owner gets SessionBusyError with the holder's name."""
    await journal.acquire_lease("s", owner="worker-a", ttl=60)
    with pytest.raises(SessionBusyError, match="worker-a") as caught:
        await journal.acquire_lease("s", owner="worker-b", ttl=60)
    assert caught.value.owner == "worker-a"
    assert caught.value.session_id == "s"


async def test_the_holder_renews_its_lease_and_other_sessions_stay_free(
    clock_and_journal: tuple[FakeClock, Journal],
) -> None:
    """Asking again as the holder starts a new term: past the first term's end another writer
    is still refused, and let in once the new term ends; other sessions stay free."""
    clock, journal = clock_and_journal
    clock.tick = 0.0
    await journal.acquire_lease("s", owner="worker-a", ttl=10)
    clock.now += 8
    await journal.acquire_lease("s", owner="worker-a", ttl=10)
    await journal.acquire_lease("t", owner="worker-b", ttl=10)
    clock.now += 8  # the first term ended 2 seconds ago; the renewed one has 2 to go
    with pytest.raises(SessionBusyError, match="worker-a"):
        await journal.acquire_lease("s", owner="worker-b", ttl=10)
    clock.now += 8
    await journal.acquire_lease("s", owner="worker-b", ttl=10)


async def test_an_expired_lease_is_taken_over(
    clock_and_journal: tuple[FakeClock, Journal],
) -> None:
    """A holder that died stops renewing; after the ttl another writer takes the session."""
    clock, journal = clock_and_journal
    await journal.acquire_lease("s", owner="dead", ttl=5)
    clock.now += 10
    await journal.acquire_lease("s", owner="alive", ttl=5)
    with pytest.raises(SessionBusyError, match="alive"):
        await journal.acquire_lease("s", owner="dead", ttl=5)


async def test_a_released_lease_frees_the_session_at_once(journal: Journal) -> None:
    """Releasing lets the next writer in; a release by a non-holder changes nothing."""
    await journal.acquire_lease("s", owner="worker-a", ttl=60)
    await journal.release_lease("s", owner="worker-b")
    with pytest.raises(SessionBusyError):
        await journal.acquire_lease("s", owner="worker-b", ttl=60)
    await journal.release_lease("s", owner="worker-a")
    await journal.acquire_lease("s", owner="worker-b", ttl=60)


@pytest.mark.parametrize(("owner", "ttl"), [("", 5), (None, 5), ("w", 0), ("w", -1), ("w", True)])
async def test_a_bad_owner_or_ttl_is_a_configuration_error(
    journal: Journal, owner: Any, ttl: Any
) -> None:
    """Lease arguments are checked before anything is written."""
    with pytest.raises(ConfigurationError, match="lease"):
        await journal.acquire_lease("s", owner=owner, ttl=ttl)


async def test_sessions_list_each_agent_that_started_once_in_order(journal: Journal) -> None:
    """Agents come from agent_started records, first start first, repeats folded."""
    await journal.append([record("s", 0, "run_started", prompt="p")])
    await journal.append([record("s", 1, "agent_started", agent="triage")])
    await journal.append(
        [
            record("s", 2, "agent_started", agent="billing"),
            record("s", 3, "agent_started", agent="triage"),
        ]
    )
    await journal.append(
        [record("s", 4, "agent_started", agent=7), record("s", 5, "agent_started")]
    )
    (info,) = await journal.sessions()
    assert info.agents == ("triage", "billing")


async def test_the_rules_log_holds_promotions_and_demotions_in_order(journal: Journal) -> None:
    """Journal-level rule records: appended with their time, read back in order, and its
    length is the version a worker checks at each turn."""
    assert await read_rules_log(journal) == ()
    first = await log_rule_change(journal, "rule_promoted", {"rule": "a -> b"}, at=10.0)
    await log_rule_change(journal, "rule_demoted", {"rule": "a -> b"}, at=20.0)
    log = await read_rules_log(journal)
    assert [(r.seq, r.kind, r.at) for r in log] == [
        (0, "rule_promoted", 10.0),
        (1, "rule_demoted", 20.0),
    ]
    assert log[0] == first and await journal.next_seq(RULES_LOG) == 2


async def test_read_many_reads_a_kind_for_its_leading_members_alone(journal: Journal) -> None:
    """``leading``: records of the kind that start with the first member named hold just the
    members named that follow in order (values as written, whatever they hold), those that
    start otherwise are left out, the other kinds come whole; with no bulk read (a store of
    one's own) the same."""
    from swarmkit.journal import read_many  # noqa: PLC0415

    member = {"set": "ab", "fired": [0, 2], "agrees": [], "text": 'a "} b', "none": None}
    calls: list[dict[str, Any]] = [
        {"shadow": member, "agent": "x", "turn": 1, "digest": "d"},
        {"agent": "x", "shadow": 1},
        {"shadow": 2, "digest": "d", "agent": "y"},
        {},
    ]
    steps = [("run_started", {"n": 0}), *(("model_call", call) for call in calls), ("rule", {})]
    await journal.append(
        [
            JournalRecord(session_id="a", seq=seq, kind=kind, data=data)
            for seq, (kind, data) in enumerate(steps)
        ]
    )
    leading = {"model_call": ("shadow", "agent", "turn")}
    got = await read_many(journal, ["a"], kinds=["rule"], leading=leading)
    assert [(r.seq, r.kind, r.data) for r in got["a"]] == [
        (1, "model_call", {"shadow": member, "agent": "x", "turn": 1}),
        (3, "model_call", {"shadow": 2}),
        (5, "rule", {}),
    ]
    plain = await read_many(_Plain(journal), ["a"], kinds=["rule"], leading=leading)  # type: ignore[arg-type]
    assert plain == got
    every = await read_many(journal, ["a"], leading=leading)
    assert [r.kind for r in every["a"]] == ["run_started", "model_call", "model_call", "rule"]


class _Plain:
    """A store with no bulk read: only ``read``."""

    def __init__(self, journal: Journal) -> None:
        self._journal = journal

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        return await self._journal.read(session_id)


async def test_read_many_returns_only_the_kinds_asked_for_in_seq_order(journal: Journal) -> None:
    """Several sessions in one read: only the kinds asked for, each session's in seq order,
    an absent session left out, the records equal to what ``read`` gives."""
    from swarmkit.journal import read_many  # noqa: PLC0415

    await journal.append(step("b", 0, "run_started", "model_call", "shadow", "run_finished"))
    await journal.append(step("a", 0, "run_started", "shadow"))
    await journal.append(step("a", 2, "model_call", "shadow"))
    got = await read_many(journal, ["a", "b", "missing"], kinds=["shadow", "model_call"])
    assert sorted(got) == ["a", "b"]
    assert [(r.seq, r.kind) for r in got["a"]] == [(1, "shadow"), (2, "model_call"), (3, "shadow")]
    assert [r.data for r in got["b"]] == [{"n": 1}, {"n": 2}]
    whole = await read_many(journal, ["b"])
    assert whole["b"] == await journal.read("b")
    assert await read_many(journal, ["a"], kinds=[]) == {}
