"""Effects: the intent is committed before the call; an unknown outcome is reconciled or paused."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmkit import Agent, ConfigurationError, FunctionTool, Swarm, approve, edit, reject, tool
from swarmkit.effects import Happened, NotDone, Reconcile
from swarmkit.exceptions import ReplayDivergenceError
from swarmkit.journal import SQLiteJournal
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call


class Killed(BaseException):
    """Stands in for the process dying between the effect and its journaled result."""


class Payments:
    """The outside system: it counts the payments it received, by idempotency key."""

    def __init__(self) -> None:
        self.received: list[str] = []
        self.crash_next = False

    def tool(self, reconcile: Reconcile | None = None) -> FunctionTool:
        @tool(effect=True, reconcile=reconcile)
        def pay(order: str, context: object = None) -> str:
            """Pay an order."""
            self.received.append(order)
            if self.crash_next:
                self.crash_next = False
                raise Killed
            return f"paid {order}"

        return pay


def _swarm(pay: FunctionTool, *turns: object) -> Swarm:
    model = ScriptedModel(*turns) if turns else NeverCalledModel()  # type: ignore[arg-type]
    return Swarm([Agent(name="shop", tools=[pay])], "shop", model=model)


async def _crash_mid_effect(payments: Payments, journal: SQLiteJournal, pay: FunctionTool) -> None:
    payments.crash_next = True
    with pytest.raises(Killed):
        await _swarm(pay, tool_call("pay", order="o-1")).run(
            "pay o-1", session_id="s", journal=journal
        )
    assert payments.received == ["o-1"]


async def test_the_intent_is_committed_before_the_effect_runs(tmp_path: Path) -> None:
    """Another connection reads the intent while the effect runs; the outcome follows it."""
    path = tmp_path / "j.sqlite"
    seen: list[list[str]] = []

    @tool(effect=True)
    async def pay(order: str) -> str:
        """Pay an order."""
        seen.append([r.kind for r in await SQLiteJournal(path).read("s")])
        return "paid"

    await _swarm(pay, tool_call("pay", order="o-1"), text("done")).run(
        "pay", session_id="s", journal=SQLiteJournal(path)
    )
    assert seen[0][-1] == "effect_intent"
    kinds = [r.kind for r in await SQLiteJournal(path).read("s")]
    assert kinds[kinds.index("effect_intent") + 1] == "tool_call"


async def test_an_unknown_outcome_without_reconcile_pauses_with_the_evidence(
    tmp_path: Path,
) -> None:
    """Resume pauses for a person ("outcome unknown", key, arguments, when); nothing re-runs."""
    payments, journal = Payments(), SQLiteJournal(tmp_path / "j.sqlite")
    pay = payments.tool()
    await _crash_mid_effect(payments, journal, pay)
    paused = await _swarm(pay).resume("s", journal)
    assert paused.stop_reason == "interrupted"
    assert paused.pending is not None and paused.pending.kind == "effect"
    evidence = paused.pending.payload or {}
    assert evidence["outcome"] == "unknown"
    assert evidence["arguments"] == {"order": "o-1"}
    assert str(evidence["idempotency"]).startswith("s:")
    assert isinstance(evidence["intent_at"], float)
    assert payments.received == ["o-1"]


async def test_a_person_says_it_happened_and_the_result_is_journaled(tmp_path: Path) -> None:
    """edit(payload={"result": ...}) becomes the call's outcome; the effect is not called."""
    payments, journal = Payments(), SQLiteJournal(tmp_path / "j.sqlite")
    pay = payments.tool()
    await _crash_mid_effect(payments, journal, pay)
    await _swarm(pay).resume("s", journal)
    done = await _swarm(pay, text("done")).resume(
        "s", journal, decision=edit(payload={"result": "paid o-1 (bank)"})
    )
    assert done.final_output == "done"
    assert payments.received == ["o-1"]
    outcomes = [r.data for r in await journal.read("s") if r.kind == "tool_call"]
    assert outcomes[-1]["outcome"]["content"] == "paid o-1 (bank)"


async def test_a_person_says_run_it_again_and_it_runs_once_more(tmp_path: Path) -> None:
    """approve() runs the effect again under a new committed intent with the same key."""
    payments, journal = Payments(), SQLiteJournal(tmp_path / "j.sqlite")
    pay = payments.tool()
    await _crash_mid_effect(payments, journal, pay)
    await _swarm(pay).resume("s", journal)
    done = await _swarm(pay, text("done")).resume("s", journal, decision=approve())
    assert done.final_output == "done"
    assert payments.received == ["o-1", "o-1"]
    intents = [r.data for r in await journal.read("s") if r.kind == "effect_intent"]
    assert len(intents) == 2 and intents[0]["idempotency"] == intents[1]["idempotency"]


async def test_a_person_rejects_and_the_effect_never_runs(tmp_path: Path) -> None:
    """reject() tells the agent; the effect is not called."""
    payments, journal = Payments(), SQLiteJournal(tmp_path / "j.sqlite")
    pay = payments.tool()
    await _crash_mid_effect(payments, journal, pay)
    await _swarm(pay).resume("s", journal)
    done = await _swarm(pay, text("not paid")).resume("s", journal, decision=reject("refunded"))
    assert done.final_output == "not paid"
    assert payments.received == ["o-1"]


async def test_an_edit_without_a_result_is_refused_and_the_session_waits(tmp_path: Path) -> None:
    """A person's edit must say the result; the session keeps waiting."""
    payments, journal = Payments(), SQLiteJournal(tmp_path / "j.sqlite")
    pay = payments.tool()
    await _crash_mid_effect(payments, journal, pay)
    await _swarm(pay).resume("s", journal)
    with pytest.raises(ConfigurationError, match="payload=\\{'result'"):
        await _swarm(pay).resume("s", journal, decision=edit(payload={"order": "o-2"}))
    done = await _swarm(pay, text("done")).resume(
        "s", journal, decision=edit(payload={"result": "paid"})
    )
    assert done.final_output == "done" and payments.received == ["o-1"]


async def test_reconcile_says_it_happened_and_the_effect_is_not_called(tmp_path: Path) -> None:
    """The reconcile function's result becomes the journaled outcome."""
    payments, journal = Payments(), SQLiteJournal(tmp_path / "j.sqlite")
    asked: list[tuple[str, dict[str, object]]] = []

    def reconcile(key: str, arguments: dict[str, object]) -> Happened | NotDone:
        asked.append((key, arguments))
        return Happened(result={"paid": arguments["order"]})

    pay = payments.tool(reconcile)
    await _crash_mid_effect(payments, journal, pay)
    done = await _swarm(pay, text("done")).resume("s", journal)
    assert done.final_output == "done"
    assert payments.received == ["o-1"]
    assert asked == [(asked[0][0], {"order": "o-1"})] and asked[0][0].startswith("s:")
    outcomes = [r.data for r in await journal.read("s") if r.kind == "tool_call"]
    assert outcomes[-1]["outcome"]["content"] == '{"paid":"o-1"}'


async def test_reconcile_says_not_done_and_the_effect_runs_once_with_the_same_key(
    tmp_path: Path,
) -> None:
    """NotDone runs the effect again, with the key the intent was written with."""
    payments, journal = Payments(), SQLiteJournal(tmp_path / "j.sqlite")
    keys: list[str] = []

    async def reconcile(key: str, arguments: dict[str, object]) -> NotDone:
        keys.append(key)
        return NotDone()

    pay = payments.tool(reconcile)
    await _crash_mid_effect(payments, journal, pay)
    done = await _swarm(pay, text("done")).resume("s", journal)
    assert done.final_output == "done"
    assert payments.received == ["o-1", "o-1"]
    intents = [r.data["idempotency"] for r in await journal.read("s") if r.kind == "effect_intent"]
    assert intents == [keys[0], keys[0]]


@pytest.mark.parametrize(
    "answer", [RuntimeError("bank down"), "yes"], ids=["raises", "unparseable"]
)
async def test_a_failing_reconcile_pauses_with_the_error_and_runs_nothing(
    tmp_path: Path, answer: object
) -> None:
    """A reconcile function that raises or answers something else: the run pauses with why."""
    payments, journal = Payments(), SQLiteJournal(tmp_path / "j.sqlite")

    def reconcile(key: str, arguments: dict[str, object]) -> object:
        if isinstance(answer, Exception):
            raise answer
        return answer

    pay = payments.tool(reconcile)  # type: ignore[arg-type]
    await _crash_mid_effect(payments, journal, pay)
    paused = await _swarm(pay).resume("s", journal)
    assert paused.pending is not None and paused.pending.kind == "effect"
    error = (paused.pending.payload or {})["error"]
    assert "bank down" in error if isinstance(answer, Exception) else "Happened" in error
    assert payments.received == ["o-1"]


async def test_replay_never_runs_an_effect_nor_its_reconcile(tmp_path: Path) -> None:
    """A reconciled session replays with zero calls, even when replay executes tools."""
    payments, journal = Payments(), SQLiteJournal(tmp_path / "j.sqlite")
    asked: list[str] = []

    def reconcile(key: str, arguments: dict[str, object]) -> Happened:
        asked.append(key)
        return Happened(result="paid")

    pay = payments.tool(reconcile)
    await _crash_mid_effect(payments, journal, pay)
    await _swarm(pay, text("done")).resume("s", journal)
    for tools in ("replay", "execute"):  # both: replay never runs an effect
        replayed = await _swarm(pay).replay("s", journal, tools=tools)
        assert replayed.final_output == "done"
    assert payments.received == ["o-1"] and len(asked) == 1


def test_an_effect_is_declared_with_tool_and_checked_at_once() -> None:
    """reconcile needs effect=True and a callable; an effect cannot be durable=False."""

    def pay(order: str) -> str:
        """Pay."""
        return order

    assert tool(effect=True)(pay).effect
    assert not tool(pay).effect
    with pytest.raises(ConfigurationError, match="pass effect=True"):
        tool(reconcile=lambda key, arguments: NotDone())(pay)
    with pytest.raises(ConfigurationError, match="must be callable"):
        tool(effect=True, reconcile="check")(pay)  # type: ignore[call-overload]
    with pytest.raises(ConfigurationError, match="drop durable=False"):
        tool(effect=True, durable=False)(pay)


async def test_the_intent_holds_the_arguments_a_person_edited(tmp_path: Path) -> None:
    """An effect that needs approval journals the edited arguments as its intent and runs them."""
    journal = SQLiteJournal(tmp_path / "j.sqlite")
    received: list[str] = []

    @tool(effect=True, needs_approval=True)
    def pay(order: str) -> str:
        """Pay an order."""
        received.append(order)
        return f"paid {order}"

    swarm = _swarm(pay, tool_call("pay", order="o-1"), text("done"))
    await swarm.run("pay", session_id="s", journal=journal)
    await swarm.resume("s", journal, decision=edit(payload={"order": "o-2"}))
    intents = [r.data for r in await journal.read("s") if r.kind == "effect_intent"]
    assert [i["arguments"] for i in intents] == ['{"order": "o-2"}']
    assert received == ["o-2"]


async def test_a_plain_tool_writes_no_intent(tmp_path: Path) -> None:
    """Without effect=True a tool journals only its call, as before."""
    journal = SQLiteJournal(tmp_path / "j.sqlite")

    @tool
    def look(order: str) -> str:
        """Look an order up."""
        return order

    await _swarm(look, tool_call("look", order="o-1"), text("done")).run(
        "look", session_id="s", journal=journal
    )
    kinds = [r.kind for r in await journal.read("s")]
    assert "effect_intent" not in kinds and "tool_call" in kinds


async def test_a_strict_replay_of_a_crashed_effect_asks_no_one(tmp_path: Path) -> None:
    """Replay of a session that ends at an intent diverges; reconcile and the effect stay
    uncalled."""
    payments, journal = Payments(), SQLiteJournal(tmp_path / "j.sqlite")
    asked: list[str] = []

    def reconcile(key: str, arguments: dict[str, object]) -> NotDone:
        asked.append(key)
        return NotDone()

    pay = payments.tool(reconcile)
    await _crash_mid_effect(payments, journal, pay)
    with pytest.raises(ReplayDivergenceError, match="past the end"):
        await _swarm(pay).replay("s", journal)
    assert asked == [] and payments.received == ["o-1"]
