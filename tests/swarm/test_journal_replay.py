"""Journaled runs replay exactly with zero model calls, and stop with a diff when code changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from swarmkit import (
    Agent,
    ConfigurationError,
    Handoff,
    HandoffCycleError,
    HandoffGraph,
    JournalError,
    ReplayDivergenceError,
    RunContext,
    Swarm,
    ToolResult,
    tool,
)
from swarmkit.journal import InMemoryJournal, SQLiteJournal, export_jsonl
from swarmkit.testing import (
    NeverCalledModel,
    RecordingModel,
    ScriptedModel,
    text,
    tool_call,
    transfer,
)


class Refund(BaseModel):
    """A refund."""

    invoice_id: str


def _support(model: object, *, billing_instructions: str = "Handle billing.") -> Swarm:
    charged: list[str] = []

    @tool
    def lookup(invoice_id: str) -> str:
        """Look up an invoice."""
        charged.append(invoice_id)
        return f"{invoice_id}: 30 EUR"

    @tool
    def classify() -> ToolResult:
        """Classify the ticket."""
        return ToolResult(output="vip", update={"tier": "vip"})

    billing = Agent(name="billing", instructions=billing_instructions, tools=[lookup])
    triage = Agent(
        name="triage",
        tools=[classify],
        handoffs=[Handoff(agent=billing, input_type=Refund), "human"],
    )
    graph = HandoffGraph()
    graph.add_edge("triage", "human", when="category == 'legal'")
    return Swarm(
        [triage, billing, Agent(name="human")],
        "triage",
        model=model,  # type: ignore[arg-type]
        graph=graph,
    )


def _script() -> ScriptedModel:
    return ScriptedModel(
        tool_call("classify"),
        transfer("billing", invoice_id="A-1"),
        tool_call("lookup", invoice_id="A-1"),
        text("Refunded 30 EUR."),
    )


async def test_replay_reproduces_the_run_with_zero_model_calls(tmp_path: Path) -> None:
    """Replay returns the same output, trail and handoffs without calling the model or tools."""
    journal = SQLiteJournal(tmp_path / "j.sqlite")
    original = await _support(_script()).run("refund A-1", session_id="s1", journal=journal)
    offline = RecordingModel(NeverCalledModel())

    replayed = await _support(offline).replay("s1", journal)

    assert offline.calls == 0
    assert replayed.final_output == original.final_output == "Refunded 30 EUR."
    assert replayed.trail == original.trail == ("triage", "billing")
    assert replayed.handoffs == original.handoffs
    assert replayed.context == original.context == {"tier": "vip"}
    assert replayed.usage == original.usage


async def test_replay_reproduces_rule_decisions() -> None:
    """A rule-routed run replays its rule decision and handoff."""
    journal = InMemoryJournal()
    swarm = _support(ScriptedModel(text("A human will call.")))
    original = await swarm.run("sue you", context={"category": "legal"}, journal=journal)

    replayed = await _support(NeverCalledModel()).replay(original.session_id, journal)

    assert replayed.rule_decisions == original.rule_decisions
    assert [h.decided_by for h in replayed.handoffs] == ["rule"]


async def test_changed_instructions_stop_replay_with_a_diff() -> None:
    """A changed instruction makes the journaled answer stale: divergence, not a stale answer."""
    journal = InMemoryJournal()
    await _support(_script()).run("refund A-1", session_id="s1", journal=journal)
    changed = _support(NeverCalledModel(), billing_instructions="Refuse all refunds.")

    with pytest.raises(ReplayDivergenceError) as raised:
        await changed.replay("s1", journal)

    assert "Refuse all refunds." in raised.value.diff
    assert "Handle billing." in raised.value.diff
    assert raised.value.step > 0


async def test_changed_routing_decision_stops_replay() -> None:
    """A graph that now routes differently diverges at the rule step."""
    journal = InMemoryJournal()
    await _support(_script()).run("refund A-1", session_id="s1", journal=journal)
    swarm = _support(NeverCalledModel())
    assert swarm.graph is not None
    swarm.graph.add_edge("triage", "billing")

    with pytest.raises(ReplayDivergenceError):
        await swarm.replay("s1", journal)


async def test_replay_with_execute_runs_tools_for_real() -> None:
    """tools='execute' re-runs the tools instead of serving their journaled results."""
    journal = InMemoryJournal()
    await _support(_script()).run("refund A-1", session_id="s1", journal=journal)
    ran: list[str] = []

    @tool
    def lookup(invoice_id: str) -> str:
        """Look up an invoice."""
        ran.append(invoice_id)
        return f"{invoice_id}: 30 EUR"

    swarm = _support(NeverCalledModel())
    billing = swarm.plans["billing"]
    object.__setattr__(billing, "tools", {"lookup": lookup})

    result = await swarm.replay("s1", journal, tools="execute")

    assert ran == ["A-1"]
    assert result.final_output == "Refunded 30 EUR."


async def test_fork_continues_live_from_a_step_as_a_new_session() -> None:
    """live_after=N replays the first N steps, then asks the model, in a new session."""
    journal = InMemoryJournal()
    original = await _support(_script()).run("refund A-1", session_id="s1", journal=journal)
    records = await journal.read("s1")
    second_call = next(r.seq for r in records if r.kind == "model_call" and r.data["turn"] == 2)
    live = ScriptedModel(text("Forked answer."))

    forked = await _support(live).replay("s1", journal, live_after=second_call)

    assert forked.final_output == "Forked answer."
    assert forked.session_id == f"s1__fork_{second_call}"
    assert len(live.requests) == 1
    assert original.final_output == "Refunded 30 EUR."
    assert (await journal.read(forked.session_id))[-1].kind == "run_finished"


async def test_a_secret_context_key_is_refused_at_run_pointing_to_deps() -> None:
    """A context value under a secret key is refused before anything is journaled: the journal
    would keep "[redacted]", and a resumed run's tools would see that placeholder (issue 33)."""
    journal = InMemoryJournal()
    swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("ok")))

    with pytest.raises(
        ConfigurationError, match=r"context key 'billing\.api_key' names a secret.*deps="
    ):
        await swarm.run(
            "x", context={"billing": {"api_key": "sk-live-123"}}, journal=journal, session_id="s"
        )
    with pytest.raises(ConfigurationError, match="deps="):
        async for _ in swarm.stream("x", context={"dbPassword": "hunter2"}, journal=journal):
            pass

    assert await journal.sessions() == ()


async def test_a_secret_context_key_deep_in_lists_among_plain_values_is_refused() -> None:
    """A secret key is found however it is nested, past lists and beside text and numbers."""
    swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("ok")))
    context = {"n": 1, "accounts": ["x", 3, None, {"owner": "ann", "keys": [{"token": "t"}]}]}

    with pytest.raises(ConfigurationError, match=r"context key 'accounts\[3\]\.keys\[0\]\.token'"):
        await swarm.run("x", context=context)


async def test_a_secret_in_deps_reaches_tools_after_a_resume(tmp_path: Path) -> None:
    """Secrets passed as deps= are never journaled and a resumed run's tools get them whole."""
    seen: list[str] = []

    @tool
    def charge(context: RunContext) -> str:
        """Charge the card."""
        seen.append(context.deps["api_key"])
        return "charged"

    journal = SQLiteJournal(tmp_path / "j.db")
    swarm = Swarm([Agent(name="a", tools=[charge])], "a", model=ScriptedModel(tool_call("charge")))
    with pytest.raises(AssertionError):  # the script runs out after the tool: the run dies
        await swarm.run("x", journal=journal, session_id="s", deps={"api_key": "sk-live-123"})
    with SQLiteJournal(tmp_path / "j.db") as reader:
        exported = export_jsonl(await reader.read("s"))

    resumed = await swarm.with_model(ScriptedModel(tool_call("charge"), text("ok"))).resume(
        "s", journal, deps={"api_key": "sk-live-123"}
    )

    assert resumed.final_output == "ok"
    assert seen == ["sk-live-123", "sk-live-123"]
    assert "sk-live-123" not in exported


async def test_running_twice_into_one_session_is_refused() -> None:
    """A session id already in the journal cannot be overwritten by a new run."""
    journal = InMemoryJournal()
    swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("1"), text("2")))
    await swarm.run("x", session_id="s", journal=journal)

    with pytest.raises(JournalError, match="already in the journal"):
        await swarm.run("x", session_id="s", journal=journal)


async def test_limit_error_is_journaled_before_it_is_raised() -> None:
    """A run ended by an 'error' policy still leaves a finished journal."""
    journal = InMemoryJournal()
    swarm = Swarm(
        [Agent(name="a"), Agent(name="b")],
        "a",
        model=ScriptedModel(transfer("b"), transfer("a")),
        on_cycle="error",
    )

    with pytest.raises(HandoffCycleError):
        await swarm.run("x", session_id="s", journal=journal)

    last = (await journal.read("s"))[-1]
    assert last.kind == "run_finished" and last.data["stop_reason"] == "error"


async def test_changed_prompt_is_refused_not_served_stale_answers() -> None:
    """Replaying a session for another prompt diverges at its first step, with the diff."""
    journal = InMemoryJournal()
    await _support(_script()).run("refund A-1", session_id="s1", journal=journal)

    with pytest.raises(ReplayDivergenceError) as raised:
        await _support(NeverCalledModel()).replay("s1", journal, prompt="refund B-2")

    assert raised.value.step == 0
    assert '-  "prompt": "refund A-1"' in raised.value.diff
    assert '+  "prompt": "refund B-2"' in raised.value.diff


async def test_a_session_id_factory_that_repeats_is_caught() -> None:
    """Ids from a user's factory are checked against the journal like given ids."""
    journal = InMemoryJournal()
    swarm = Swarm(
        [Agent(name="a")],
        "a",
        model=ScriptedModel(text("1"), text("2")),
        journal=journal,
        session_ids=lambda: "fixed",
    )
    await swarm.run("x")

    with pytest.raises(JournalError, match="already in the journal"):
        await swarm.run("x")


async def test_secrets_in_tool_arguments_and_json_results_never_reach_the_journal() -> None:
    """A password the model passes to a tool and a token in a tool's JSON result are kept as
    "[redacted]" in every record, while the live run's tool and model saw them whole."""
    seen: list[str] = []

    @tool
    def login(user: str, password: str) -> str:
        """Log in."""
        seen.append(password)
        return '{"ok": true, "session_token": "tok-123-secret"}'

    model = RecordingModel(
        ScriptedModel(tool_call("login", user="dana", password="hunter2"), text("in"))
    )
    journal = InMemoryJournal()
    result = await Swarm([Agent(name="a", tools=[login])], "a", model=model).run(
        "x", journal=journal, session_id="s"
    )

    records = await journal.read("s")
    assert seen == ["hunter2"]
    assert "tok-123-secret" in str(model.requests[-1].messages)  # the model read it live
    assert all("hunter2" not in repr(r.data) and "tok-123" not in repr(r.data) for r in records)
    call = next(r for r in records if r.kind == "model_call")
    assert '"password": "[redacted]"' in call.data["response"]["tool_calls"][0]["arguments"]
    assert result.final_output == "in"


async def test_a_session_with_redacted_tool_secrets_replays_exactly() -> None:
    """The journal's redacted copies digest as the live messages did: replay reproduces the
    session with zero model calls, and the tool is not run again."""
    calls: list[str] = []

    @tool
    def login(password: str) -> str:
        """Log in."""
        calls.append(password)
        return '{"api_key": "sk-live-999"}'

    journal = InMemoryJournal()
    script = ScriptedModel(tool_call("login", password="hunter2"), text("done"))
    await Swarm([Agent(name="a", tools=[login])], "a", model=script).run(
        "x", journal=journal, session_id="s"
    )

    replayed = await Swarm([Agent(name="a", tools=[login])], "a", model=NeverCalledModel()).replay(
        "s", journal
    )

    assert replayed.final_output == "done"
    assert calls == ["hunter2"]
    assert "sk-live-999" not in str(replayed.messages)
