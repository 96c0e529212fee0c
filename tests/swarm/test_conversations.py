"""Conversations that go on: history=, continue_session=True, to_input(), and their journal."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmkit import Agent, ConfigurationError, Swarm
from swarmkit.cli import main
from swarmkit.journal import InMemoryJournal, SQLiteJournal
from swarmkit.messages import AssistantMessage, UserMessage
from swarmkit.testing import ScriptedModel, text, transfer


def desk(model: ScriptedModel, journal: InMemoryJournal | SQLiteJournal | None = None) -> Swarm:
    """Triage hands billing questions to billing."""
    return Swarm(
        [Agent(name="triage", handoffs=["billing"]), Agent(name="billing", handoffs=[])],
        "triage",
        model=model,
        journal=journal,
    )


async def test_history_continues_with_the_active_agent_its_messages_and_context() -> None:
    """The second turn starts at billing, which sees the first turn and the new question."""
    model = ScriptedModel(transfer("billing"), text("Refunded."), text("Within 3 days."))
    swarm = desk(model)
    first = await swarm.run("Refund me", context={"customer": "c-1"})

    second = await swarm.run("When will it arrive?", history=first)

    assert second.trail == ("billing",)
    assert second.context == {"customer": "c-1"}
    sent = model.requests[-1].messages[1:]
    assert sent[0] == UserMessage(content="Refund me")
    assert sent[-2:] == (
        AssistantMessage(content="Refunded.", agent="billing"),
        UserMessage(content="When will it arrive?"),
    )
    assert second.messages[: len(first.messages)] == first.messages
    assert second.session_id != first.session_id
    model.assert_exhausted()


async def test_to_input_round_trips_as_history() -> None:
    """to_input() gives JSON messages; passed back, the last speaker stays active."""
    model = ScriptedModel(transfer("billing"), text("Refunded."), text("Yes."))
    swarm = desk(model)
    first = await swarm.run("Refund me")

    stored = first.to_input()
    second = await swarm.run("Sure?", history=stored)

    assert stored[0] == {"kind": "user", "content": "Refund me"}
    assert second.trail == ("billing",)
    assert second.final_output == "Yes."


async def test_continue_session_chains_journaled_turns_that_each_replay() -> None:
    """Turns are linked sessions: chat, chat__turn_2, chat__turn_3; each replays alone."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("billing"), text("Refunded."), text("3 days."), text("Bye."))
    swarm = desk(model, journal)

    first = await swarm.run("Refund me", session_id="chat", continue_session=True)
    second = await swarm.run("When?", session_id="chat", continue_session=True)
    third = await swarm.run("Thanks", session_id="chat", continue_session=True)

    assert [first.session_id, second.session_id, third.session_id] == [
        "chat",
        "chat__turn_2",
        "chat__turn_3",
    ]
    assert third.trail == ("billing",)
    started = (await journal.read("chat__turn_3"))[0].data
    assert started["continues"] == "chat__turn_2"
    assert started["entry_agent"] == "billing"
    replayed = await swarm.replay("chat__turn_2")
    assert replayed.final_output == "3 days."
    assert replayed.messages == second.messages
    model.assert_exhausted()


async def test_history_and_continue_session_together_are_a_configuration_error() -> None:
    """One way to say where a run starts."""
    swarm = desk(ScriptedModel())
    first_result = await desk(ScriptedModel(text("hi"))).run("x")

    with pytest.raises(ConfigurationError, match="not both"):
        await swarm.run("y", history=first_result, continue_session=True, session_id="s")
    with pytest.raises(ConfigurationError, match="needs the conversation's session_id"):
        await swarm.run("y", continue_session=True)


def test_swarmkit_show_prints_the_whole_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`swarmkit show` of a conversation prints each of its turns."""
    path = tmp_path / "chat.db"
    model = ScriptedModel(text("Hello."), text("Fine."))
    with SQLiteJournal(path) as journal:
        swarm = desk(model, journal)
        swarm.run_sync("Hi", session_id="chat", continue_session=True)
        swarm.run_sync("How are you?", session_id="chat", continue_session=True)

    assert main(["show", "chat", "--journal", str(path)]) == 0

    out = capsys.readouterr().out
    assert "== turn 2 (chat__turn_2)" in out
    assert "continues chat (2 earlier messages)" in out
    assert "How are you?" in out


async def test_a_continued_agent_keeps_the_conversation_without_full_history() -> None:
    """pass_full_history=False shapes handoffs only: a continued agent still sees the chat."""
    model = ScriptedModel(text("Hi Ann."), text("Ann."))
    swarm = Swarm([Agent(name="a")], "a", model=model, pass_full_history=False)
    first = await swarm.run("I am Ann.")

    await swarm.run("Who am I?", history=first)

    assert [m.content for m in model.requests[1].messages[1:]] == [
        "I am Ann.",
        "Hi Ann.",
        "Who am I?",
    ]
