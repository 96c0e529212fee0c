"""A long run keeps its session: each write past half the lease's ttl renews the lease."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmkit import Agent, RunContext, Swarm, tool
from swarmkit.exceptions import SessionBusyError
from swarmkit.journal import InMemoryJournal, Journal, SQLiteJournal
from swarmkit.testing import FixedRuntime, ScriptedModel, text, tool_call

TTL = 10.0
"""The run's lease ttl; each tool call below takes more than half of it."""


@pytest.fixture
def fixed() -> FixedRuntime:
    """One clock for the run and for the journal's lease expiry."""
    return FixedRuntime()


@pytest.fixture(params=["memory", "sqlite"])
def journal(
    request: pytest.FixtureRequest, tmp_path: Path, fixed: FixedRuntime
) -> Iterator[Journal]:
    """A journal whose leases expire on the run's clock."""
    if request.param == "memory":
        yield InMemoryJournal(clock=fixed.clock)
        return
    with SQLiteJournal(tmp_path / "j.sqlite", clock=fixed.clock) as store:
        yield store


async def test_a_run_longer_than_its_lease_ttl_keeps_other_writers_out(
    fixed: FixedRuntime, journal: Journal
) -> None:
    """Two 6-second tools outlast a 10-second lease; renewed at the write between them, it
    still refuses another writer at second 12, when its first term had run out."""
    started = fixed.now
    asked: list[tuple[float, str]] = []

    @tool
    async def work(context: RunContext) -> str:
        """Six seconds of work, at the end of which another process asks for the session."""
        fixed.now += 6
        try:
            await journal.acquire_lease(context.session_id, owner="intruder", ttl=TTL)
        except SessionBusyError:
            asked.append((fixed.now - started, "refused"))
            return "kept the session"
        asked.append((fixed.now - started, "taken over"))
        return "lost the session"

    model = ScriptedModel(tool_call("work"), tool_call("work"), text("done"))
    swarm = Swarm([Agent(name="a", tools=[work])], "a", model=model, lease_ttl=TTL)

    result = await swarm.with_seams(runtime=fixed.runtime()).run("go", journal=journal)

    assert asked == [(6.0, "refused"), (12.0, "refused")]
    assert result.final_output == "done"
    model.assert_exhausted()
