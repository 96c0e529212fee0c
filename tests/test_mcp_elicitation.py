"""An MCP tool that asks for input pauses the run; the person's answer goes back to the server."""

from __future__ import annotations

import sys
from pathlib import Path

from swarmkit import Agent, Swarm
from swarmkit.interrupts import edit, reject
from swarmkit.journal import InMemoryJournal
from swarmkit.mcp import MCPToolSource
from swarmkit.testing import ScriptedModel, text, tool_call

ROOT = Path(__file__).resolve().parent.parent


def _source(log: Path) -> MCPToolSource:
    return MCPToolSource.stdio(
        sys.executable,
        ["-m", "tests.mcp_elicit_server"],
        cwd=ROOT,
        env={"MCP_TEST_CALL_LOG": str(log)},
        name="shop",
    )


def _swarm(source_tools: object, journal: InMemoryJournal) -> Swarm:
    model = ScriptedModel(tool_call("order", item="shirt"), text("Done."))
    agent = Agent(name="clerk", tools=[*source_tools])  # type: ignore[misc]
    return Swarm([agent], "clerk", model=model, journal=journal)


async def test_an_elicitation_pauses_the_run_and_the_answer_completes_the_call(
    tmp_path: Path,
) -> None:
    """The server's request for input is the pause's question, with its schema; the answer is
    sent as the elicitation's response, the tool's result is the server's, replay calls none."""
    log, journal = tmp_path / "calls.log", InMemoryJournal()
    async with _source(log) as shop:
        tools = await shop.tools()
        swarm = _swarm(tools, journal)
        paused = await swarm.run("order a shirt", session_id="s")

        assert paused.stop_reason == "interrupted"
        pending = paused.pending
        assert pending is not None
        assert (pending.kind, pending.tool_name) == ("question", "order")
        assert pending.payload is not None
        assert pending.payload["question"] == "Which size of shirt?"
        assert pending.payload["schema"]["required"] == ["size"]

        resumed = await swarm.resume("s", decision=edit(payload={"size": "M"}))

    assert (resumed.stop_reason, resumed.final_output) == ("final_output", "Done.")
    (result,) = [m for m in resumed.messages if getattr(m, "name", None) == "order"]
    assert result.content == "ordered shirt in size M"
    assert log.read_text().splitlines() == ["order accept"]

    replayed = await _swarm(tools, journal).replay("s")  # the server is gone
    assert replayed.final_output == "Done."
    assert log.read_text().splitlines() == ["order accept"]


async def test_a_rejected_question_declines_the_elicitation(tmp_path: Path) -> None:
    """Rejecting the pause answers the server with a decline; the tool's own answer stands."""
    log = tmp_path / "calls.log"
    async with _source(log) as shop:
        swarm = _swarm(await shop.tools(), InMemoryJournal())
        await swarm.run("order a shirt", session_id="s")
        resumed = await swarm.resume("s", decision=reject("no size given"))

    (result,) = [m for m in resumed.messages if getattr(m, "name", None) == "order"]
    assert result.content == "no order: the person chose to decline"
    assert log.read_text().splitlines() == ["order decline"]
