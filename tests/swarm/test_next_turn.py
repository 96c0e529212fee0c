"""Who answers a conversation's next message (next_turn=, start_agent=), and own memory."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from swarmkit import (
    Agent,
    ConditionSyntaxError,
    ConfigurationError,
    NextTurn,
    NextTurnDecision,
    Swarm,
    approve,
    tool,
)
from swarmkit.cli import main
from swarmkit.conversation import NextTurnSetting
from swarmkit.journal import InMemoryJournal, SQLiteJournal, conversations, turn_of
from swarmkit.messages import AssistantMessage, ToolMessage
from swarmkit.testing import ScriptedModel, text, tool_call, transfer

BACK_TO_TRIAGE = NextTurn(
    rules=[("swarm.agent == 'billing' and 'invoice' not in swarm.message", "triage")]
)


def desk(
    model: ScriptedModel,
    next_turn: NextTurnSetting = "last",
    journal: InMemoryJournal | None = None,
    **options: object,
) -> Swarm:
    """Triage hands billing questions to billing; billing may hand back."""
    return Swarm(
        [Agent(name="triage", handoffs=["billing"]), Agent(name="billing", handoffs=["triage"])],
        "triage",
        model=model,
        next_turn=next_turn,
        journal=journal or InMemoryJournal(),
        **options,  # type: ignore[arg-type]
    )


async def chat(swarm: Swarm, *messages: str) -> list[tuple[str, ...]]:
    """Each message a turn of one journaled conversation; the trail of each turn."""
    trails = []
    for message in messages:
        result = await swarm.run(message, session_id="chat", continue_session=True)
        trails.append(result.trail)
    return trails


FIVE = ("Refund me", "And the invoice?", "Thanks", "New address?", "Bye")


async def test_last_keeps_the_agent_that_answered_for_five_turns() -> None:
    """The default: billing, once it answered, answers every later message."""
    model = ScriptedModel(transfer("billing"), *(text(f"billing {n}") for n in range(5)))
    trails = await chat(desk(model), *FIVE)

    assert trails == [("triage", "billing"), *[("billing",)] * 4]
    model.assert_exhausted()


async def test_entry_starts_every_turn_at_the_entry_agent() -> None:
    """next_turn="entry": triage re-routes each of five messages."""
    script = [transfer("billing"), text("refunded"), text("hello"), transfer("billing")]
    model = ScriptedModel(*script, text("invoice"), text("thanks"), text("bye"))
    trails = await chat(desk(model, "entry"), *FIVE)

    assert trails == [
        ("triage", "billing"),
        ("triage",),
        ("triage", "billing"),
        ("triage",),
        ("triage",),
    ]
    model.assert_exhausted()


async def test_a_rule_decides_per_message_and_context() -> None:
    """Billing keeps invoice questions; anything else goes back to triage; context counts."""
    rules = NextTurn(
        rules=[
            ("vip == true", "billing"),
            ("swarm.agent == 'billing' and 'invoice' not in swarm.message", "triage"),
        ]
    )
    model = ScriptedModel(
        transfer("billing"), text("refunded"), text("INV-7"), text("hi"), text("vip billing")
    )
    swarm = desk(model, rules)

    first = await swarm.run("Refund me", session_id="chat", continue_session=True)
    second = await swarm.run("Where is the invoice?", session_id="chat", continue_session=True)
    third = await swarm.run("New address", session_id="chat", continue_session=True)
    fourth = await swarm.run(
        "Hello", session_id="chat", continue_session=True, context={"vip": True}
    )

    assert [first.trail, second.trail, third.trail, fourth.trail] == [
        ("triage", "billing"),
        ("billing",),
        ("triage",),
        ("billing",),
    ]
    assert second.next_turn == NextTurnDecision(
        policy="last", agent="billing", last_agent="billing"
    )
    assert third.next_turn == NextTurnDecision(
        policy="rule",
        agent="triage",
        last_agent="billing",
        condition="swarm.agent == 'billing' and 'invoice' not in swarm.message",
    )
    assert fourth.next_turn is not None and fourth.next_turn.condition == "vip == true"
    assert first.next_turn is None
    model.assert_exhausted()


async def test_the_decision_is_journaled_and_replayed_with_zero_calls() -> None:
    """run_started holds the decision; a replay by a swarm with another policy keeps it."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("billing"), text("refunded"), text("hi"))
    await chat(desk(model, BACK_TO_TRIAGE, journal), "Refund me", "New address")

    started = (await journal.read("chat__turn_2"))[0].data
    assert started["entry_agent"] == "triage"
    assert started["next_turn"] == {
        "policy": "rule",
        "agent": "triage",
        "last_agent": "billing",
        "condition": BACK_TO_TRIAGE.rules[0][0],
    }
    silent = ScriptedModel()
    replayed = await desk(silent, "last", journal).replay("chat__turn_2")

    assert replayed.trail == ("triage",)
    assert replayed.final_output == "hi"
    assert replayed.next_turn is not None and replayed.next_turn.policy == "rule"
    assert silent.requests == []


async def test_a_paused_later_turn_resumes_where_the_policy_started_it() -> None:
    """Turn 2 starts at triage (entry), pauses after billing, and resumes to the end."""
    journal = InMemoryJournal()
    model = ScriptedModel(text("hello"), transfer("billing"), text("refunded"))
    swarm = desk(model, "entry", journal, interrupt_after=["billing"])
    await swarm.run("Hi", session_id="chat", continue_session=True)
    paused = await swarm.run("Refund me", session_id="chat", continue_session=True)
    assert paused.stop_reason == "interrupted"

    resumed = await swarm.resume("chat__turn_2", decision=approve())

    assert resumed.stop_reason == "final_output"
    assert resumed.trail == ("triage", "billing")
    assert resumed.next_turn == NextTurnDecision(
        policy="entry", agent="triage", last_agent="triage"
    )
    model.assert_exhausted()


async def test_start_agent_overrides_the_policy_for_one_call() -> None:
    """start_agent= names who answers this message, journaled as its own policy."""
    model = ScriptedModel(transfer("billing"), text("refunded"), text("triage here"), text("b"))
    swarm = desk(model)
    first = await swarm.run("Refund me")

    second = await swarm.run("Something else", history=first, start_agent="triage")
    fresh = await swarm.run("Straight to billing", start_agent="billing")

    assert second.trail == ("triage",)
    assert second.next_turn == NextTurnDecision(
        policy="start_agent", agent="triage", last_agent="billing"
    )
    assert fresh.trail == ("billing",)
    model.assert_exhausted()


def test_bad_policies_are_configuration_errors_at_construction() -> None:
    """An unknown policy, a rule naming no agent, a bad condition: errors before any call."""
    with pytest.raises(ConfigurationError, match="next_turn must be 'last', 'entry'"):
        desk(ScriptedModel(), "sometimes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="agents the swarm does not have: nobody"):
        desk(ScriptedModel(), [("true", "nobody")])
    with pytest.raises(ConditionSyntaxError):
        desk(ScriptedModel(), [("swarm.agent ==", "triage")])
    with pytest.raises(ConfigurationError, match="pair"):
        desk(ScriptedModel(), ["triage"])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError, match="otherwise"):
        NextTurn(otherwise="first")  # type: ignore[arg-type]


async def test_bad_start_agent_and_a_foreign_conversation_are_errors_at_run() -> None:
    """An unknown start_agent, or a conversation another swarm held, fails before a call."""
    journal = InMemoryJournal()
    model = ScriptedModel(text("hi"))
    swarm = desk(model, journal=journal)
    with pytest.raises(ConfigurationError, match="start_agent 'nobody' is not an agent"):
        await swarm.run("Hi", start_agent="nobody")
    await swarm.run("Hi", session_id="chat", continue_session=True)
    other = Swarm([Agent(name="solo")], "solo", model=ScriptedModel(), journal=journal)

    with pytest.raises(ConfigurationError, match="held by a swarm of agents billing, triage"):
        await other.run("Again", session_id="chat", continue_session=True)


@tool
def lookup_invoice() -> str:
    """The customer's open invoice."""
    return "INV-7, 120 EUR, due Friday"


def filtered_desk(model: ScriptedModel, memory: str) -> Swarm:
    """Handoffs forward only the latest message; billing keeps its ``memory``."""
    billing = Agent(name="billing", tools=[lookup_invoice], handoffs=[], memory=memory)  # type: ignore[arg-type]
    return Swarm(
        [Agent(name="triage", handoffs=["billing"]), billing],
        "triage",
        model=model,
        next_turn="entry",
        pass_full_history=False,
        journal=InMemoryJournal(),
    )


def billing_turns() -> ScriptedModel:
    return ScriptedModel(
        transfer("billing"),
        tool_call("lookup_invoice"),
        text("INV-7 is due Friday."),
        transfer("billing"),
        text("Still INV-7."),
    )


async def test_own_memory_gives_an_agent_its_earlier_tool_calls_back() -> None:
    """Called again next turn, billing sees its own lookup though the handoff sent one message."""
    model = billing_turns()
    swarm = filtered_desk(model, "own")

    await swarm.run("My invoice?", session_id="chat", continue_session=True)
    second = await swarm.run("Which one again?", session_id="chat", continue_session=True)

    seen = model.requests[-1].messages[1:]
    assert [type(m).__name__ for m in seen] == [
        "AssistantMessage",
        "ToolMessage",
        "AssistantMessage",
        "UserMessage",
    ]
    assert isinstance(seen[0], AssistantMessage) and seen[0].tool_calls[0].name == "lookup_invoice"
    assert isinstance(seen[1], ToolMessage) and seen[1].content == "INV-7, 120 EUR, due Friday"
    assert seen[-1].content == "Which one again?"
    replayed = await swarm.with_models(
        {"triage": ScriptedModel(), "billing": ScriptedModel()}
    ).replay(second.session_id)
    assert replayed.messages == second.messages


async def test_shared_memory_sees_only_what_the_handoff_forwarded() -> None:
    """Without own memory the same billing sees just the latest message."""
    model = billing_turns()
    swarm = filtered_desk(model, "shared")

    await swarm.run("My invoice?", session_id="chat", continue_session=True)
    await swarm.run("Which one again?", session_id="chat", continue_session=True)

    assert [m.content for m in model.requests[-1].messages[1:]] == ["Which one again?"]


async def test_no_memory_sees_only_the_turn_it_is_in() -> None:
    """memory="none": continuing, or handed the conversation, an agent sees nothing of the
    earlier turns, only what was said in this one; replay sees the same."""
    model = ScriptedModel(
        text("Hello.", for_agent="triage"),
        transfer("billing", for_agent="triage"),
        text("Billing here.", for_agent="billing"),
    )
    triage = Agent(name="triage", instructions="Route.", memory="none")
    billing = Agent(name="billing", instructions="Bill.", memory="none")
    swarm = Swarm([triage, billing], "triage", model=model, journal=InMemoryJournal())

    first = await swarm.run("hi, I am Ada", session_id="memo", continue_session=True)
    second = await swarm.run("my invoice?", session_id="memo", continue_session=True)

    to_triage, to_billing = model.requests[1].messages[1:], model.requests[2].messages[1:]
    assert [m.content for m in to_triage] == ["my invoice?"]
    assert "hi, I am Ada" not in [m.content for m in to_billing]
    assert to_billing[0].content == "my invoice?"
    assert first.final_output == "Hello." and second.final_output == "Billing here."
    replayed = await swarm.with_model(ScriptedModel()).replay(second.session_id)
    assert replayed.messages == second.messages


def test_an_unknown_memory_is_a_configuration_error() -> None:
    """memory takes 'shared', 'own' or 'none'."""
    with pytest.raises(ConfigurationError, match="memory must be 'shared', 'own' or 'none'"):
        Agent(name="a", memory="all")  # type: ignore[arg-type]


def test_sessions_threads_and_show_list_a_conversation_as_one_thread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sessions --threads` groups the turns; `show` prints each turn's next-turn decision."""
    path = tmp_path / "chat.db"
    model = ScriptedModel(transfer("billing"), text("refunded"), text("hi"), text("solo"))
    with SQLiteJournal(path) as journal:
        swarm = Swarm(
            [Agent(name="triage", handoffs=["billing"]), Agent(name="billing", handoffs=[])],
            "triage",
            model=model,
            next_turn=BACK_TO_TRIAGE,
            journal=journal,
        )
        swarm.run_sync("Refund me", session_id="chat", continue_session=True)
        swarm.run_sync("New address", session_id="chat", continue_session=True)
        swarm.run_sync("Alone", session_id="other")

    assert main(["sessions", "--threads", "--journal", str(path)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[0].split()[:2] == ["CONVERSATION", "TURNS"]
    rows = [line.split() for line in listing[1:]]
    threads = sorted(row[:2] for row in rows if not row[0][0].isdigit())
    assert threads == [["chat", "2"], ["other", "1"]]
    assert ["1.", "chat", "finished"] in [row[:3] for row in rows]
    assert ["2.", "chat__turn_2", "finished"] in [row[:3] for row in rows]

    assert main(["show", "chat", "--journal", str(path)]) == 0
    out = capsys.readouterr().out
    assert "== turn 2 (chat__turn_2)" in out
    assert "next turn triage: rule" in out


async def test_conversations_lists_each_thread_with_its_turns_in_order() -> None:
    """swarmkit.journal.conversations groups turns under their conversation, forks apart."""
    journal = InMemoryJournal()
    model = ScriptedModel(text("a"), text("b"), text("c"), text("d"))
    swarm = desk(model, journal=journal)
    await chat(swarm, "one", "two", "three")
    await swarm.run("elsewhere", session_id="solo")

    threads = {t.conversation_id: t for t in await conversations(journal)}

    assert set(threads) == {"chat", "solo"}
    assert [turn.session_id for turn in threads["chat"].turns] == [
        "chat",
        "chat__turn_2",
        "chat__turn_3",
    ]
    assert threads["chat"].latest.prompt == "three"
    assert turn_of("chat__turn_12") == ("chat", 12)
    assert turn_of("chat__turn_2__fork_3") == ("chat__turn_2__fork_3", 1)


def test_a_thread_exports_and_imports_with_all_its_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`export --thread` writes every turn; `import` adds them all to another journal."""
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    model = ScriptedModel(text("one"), text("two"), text("three"))
    with SQLiteJournal(source) as journal:
        swarm = desk(model)
        for message in ("Hi", "Again", "Once more"):
            swarm.run_sync(message, session_id="chat", continue_session=True, journal=journal)
    assert main(["export", "chat", "--thread", "--journal", str(source)]) == 0
    exported = tmp_path / "chat.jsonl"
    exported.write_text(capsys.readouterr().out, encoding="utf-8")

    assert main(["import", str(exported), "--journal", str(target)]) == 0

    assert "imported chat__turn_3 (4 records)" in capsys.readouterr().out
    with SQLiteJournal(target) as journal:
        copied = asyncio.run(conversations(journal))
    assert [turn.session_id for turn in copied[0].turns] == ["chat", "chat__turn_2", "chat__turn_3"]
    assert main(["import", str(exported), "--journal", str(target)]) == 2


def test_deleting_a_thread_takes_all_its_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`swarmkit delete CONVERSATION --thread --yes` removes every turn; the plain form one."""
    path = str(tmp_path / "chat.sqlite")
    agent = Agent(name="helper", instructions="Answer.")
    model = ScriptedModel(text("one"), text("two"), text("three"))
    with SQLiteJournal(path) as journal:
        swarm = Swarm([agent], "helper", model=model, journal=journal)
        for prompt in ("a", "b", "c"):
            swarm.run_sync(prompt, session_id="chat", continue_session=True)

    assert main(["delete", "chat__turn_3", "--journal", path, "--yes"]) == 0
    assert main(["delete", "chat", "--thread", "--journal", path, "--yes"]) == 0
    out = capsys.readouterr().out
    assert "deleted chat__turn_3 (" in out and "deleted chat (2 turns)" in out
    with SQLiteJournal(path) as journal:
        assert asyncio.run(journal.sessions()) == ()
