"""The conformance kit run against the project's own stores, in process."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from swarmkit import JournalError, Swarm, approve
from swarmkit.interrupts import Decision, Edit
from swarmkit.journal import Journal, JournalRecord, PostgresJournal, SQLiteJournal
from swarmkit.testing.conformance import (
    Check,
    Ended,
    Engine,
    InProcess,
    Target,
    check_a_parked_conversation_resumes_once_per_reply,
    check_a_rejected_tool_never_executes,
    check_an_edited_approval_executes_the_edited_arguments,
    check_replay_makes_zero_calls,
    conformance_tests,
)
from tests.journal.conftest import fresh_schema
from tests.testing.engines import DBOSEngine, TemporalEngine

if TYPE_CHECKING:
    from tests.journal.postgres_server import PostgresServer


@pytest.fixture(params=["sqlite", "postgres", "dbos", "temporal"])
def conformance_target(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    """Every check on SQLite and on Postgres, run by ``Swarm`` in this process, and as DBOS
    workflows and Temporal workflows (their records mirrored to an SQLite journal)."""
    engines: dict[str, Engine] = {"sqlite": InProcess()}
    if request.param == "temporal":
        engines["temporal"] = TemporalEngine(request.getfixturevalue("temporal_address"))
    if request.param == "dbos":
        engines["dbos"] = DBOSEngine(f"sqlite:///{tmp_path / 'dbos.sqlite'}")
    if request.param in engines:
        journal = tmp_path / "journal.sqlite"
        return Target(journal=lambda: SQLiteJournal(journal), engine=engines[request.param])
    server: PostgresServer = request.getfixturevalue("postgres_server")
    dsn = fresh_schema(server)
    return Target(journal=lambda: PostgresJournal(dsn))


test_conformance = conformance_tests()


class _Careless(InProcess):
    """A broken engine: it approves whatever a person decided, and replays by running again."""

    async def resume(
        self, swarm: Swarm, session_id: str, *, journal: Journal, decision: Decision | None = None
    ) -> Ended:
        return await super().resume(swarm, session_id, journal=journal, decision=approve())

    async def replay(self, swarm: Swarm, session_id: str, *, journal: Journal) -> Ended:
        raise AssertionError("replay ran live") from None


class _Forgetful(InProcess):
    """A broken engine: it hands a conversation back without the person's replies."""

    async def resume(
        self, swarm: Swarm, session_id: str, *, journal: Journal, decision: Decision | None = None
    ) -> Ended:
        if isinstance(decision, Edit):
            decision = replace(decision, payload={**decision.payload, "replies": []})
        return await super().resume(swarm, session_id, journal=journal, decision=decision)


class _Twice(InProcess):
    """A broken engine: a hand-back sent again resumes the conversation from a stale copy
    of its parked records, so the agent runs a second time."""

    async def resume(
        self, swarm: Swarm, session_id: str, *, journal: Journal, decision: Decision | None = None
    ) -> Ended:
        try:
            return await super().resume(swarm, session_id, journal=journal, decision=decision)
        except JournalError:
            records = await journal.read(session_id)
            parked = records[: records.index(_resumed(records))]
            stale = f"{session_id}-stale"
            await journal.append([replace(r, session_id=stale) for r in parked])
            return await super().resume(swarm, stale, journal=journal, decision=decision)


def _resumed(records: Sequence[JournalRecord]) -> JournalRecord:
    return next(r for r in records if r.kind == "resumed")


@pytest.mark.parametrize("engine", [_Forgetful(), _Twice()], ids=["forgetful", "twice"])
async def test_the_kit_fails_an_engine_that_loses_or_repeats_a_hand_back(
    tmp_path: Path, engine: Engine
) -> None:
    """The parked-conversation check fails an engine that drops the person's reply, and one
    that resumes a finished conversation again."""
    target = Target(journal=lambda: SQLiteJournal(tmp_path / "j.sqlite"), engine=engine)
    with pytest.raises(AssertionError, match=r"reply 0 times|again"):
        await check_a_parked_conversation_resumes_once_per_reply(target)


@pytest.mark.parametrize(
    ("check", "broken"),
    [
        (check_a_rejected_tool_never_executes, "a rejected tool executed"),
        (check_an_edited_approval_executes_the_edited_arguments, "edited arguments"),
        (check_replay_makes_zero_calls, "replay ran live"),
    ],
)
async def test_the_kit_fails_an_engine_that_breaks_a_promise(
    tmp_path: Path, check: Check, broken: str
) -> None:
    """The checks are not vacuous: an engine that ignores decisions or replays live fails."""
    target = Target(journal=lambda: SQLiteJournal(tmp_path / "j.sqlite"), engine=_Careless())
    with pytest.raises(AssertionError, match=broken):
        await check(target)
