"""Provider reasoning state through a DBOS session: signed thinking (Anthropic), thought
signatures (Gemini) and reasoning items (Responses) survive the recorded model steps (JSON in
the system database) and the mirrored journal's replay."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from swarmkit.dbos import DurableSwarms
from swarmkit.journal import SQLiteJournal
from swarmkit.testing import NeverCalledModel
from tests.models.state_server import call, say, state_server
from tests.temporal.test_provider_state import PROVIDERS, desk_swarm


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_reasoning_state_survives_a_dbos_session_and_its_replay(
    provider: str, sqlite_url: str, tmp_path: Path
) -> None:
    """No follow-up is refused across four model steps, a handoff and two tools; the mirrored
    journal replays with no model call."""
    turns = (call("lookup", order="A1"), call("transfer_to_desk"), call("lookup", order="B2"))
    mirror = SQLiteJournal(tmp_path / "journal.sqlite")
    async with state_server(*turns, say("desk done")) as server:
        app = DurableSwarms(
            {"desk": desk_swarm(PROVIDERS[provider](server))},
            database_url=sqlite_url,
            journal=mirror,
            polling_interval=0.05,
        )
        async with app:
            handle = await app.start_session("desk", "Where?", session_id="s-state")
            result = await asyncio.wait_for(handle.result(), 60)
    assert server.refusals == [] and len(server.requests) == 4
    assert (result.trail, result.final_output) == (("front", "desk"), "desk done")
    replayed = await desk_swarm(NeverCalledModel()).replay("s-state", mirror)
    assert replayed.final_output == "desk done"
