"""The conformance kit: swarmkit's promises, checked against your own journal store and engine.

Each check builds a small shop swarm whose tools count what the outside world received, runs
it through the engine on the store, and fails with what broke. Run them from pytest:

```python
# tests/test_conformance.py of an application
import pytest
from swarmkit.journal import SQLiteJournal
from swarmkit.testing.conformance import Target, conformance_tests

@pytest.fixture
def conformance_target(tmp_path):
    return Target(journal=lambda: SQLiteJournal(tmp_path / "journal.sqlite"))

test_conformance = conformance_tests()
```
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from swarmkit import queues
from swarmkit.agent import Agent
from swarmkit.context import RunContext
from swarmkit.effects import Happened, NotDone, Reconcile
from swarmkit.exceptions import PeopleQueueError, SwarmkitError
from swarmkit.interrupts import Decision, PendingDecision, edit, reject
from swarmkit.journal import Journal
from swarmkit.messages import AssistantMessage
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.people import PeopleQueue
from swarmkit.result import RunResult
from swarmkit.swarm import Swarm
from swarmkit.testing import (
    NeverCalledModel,
    ScriptedModel,
    ScriptedTurn,
    text,
    tool_call,
    transfer,
)
from swarmkit.tools import FunctionTool, tool


class SimulatedCrash(BaseException):
    """Raised by a kit tool to stand for the process dying mid-call (nothing catches it)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Ended:
    """Where a session stands when the engine hands it back: finished, or waiting."""

    final_output: Any = None
    """The answer of a finished session."""
    pending: PendingDecision | None = None
    """What a waiting session waits for a person to decide."""

    @classmethod
    def of(cls, result: RunResult) -> Ended:
        """From a ``RunResult``."""
        return cls(final_output=result.final_output, pending=result.pending)


class Engine(Protocol):
    """How the kit runs a swarm: in this process, or on a durable engine."""

    async def run(self, swarm: Swarm, prompt: str, *, session_id: str, journal: Journal) -> Ended:
        """Start a session; a ``SimulatedCrash`` from a tool must end it like a dead process."""
        ...

    async def resume(
        self, swarm: Swarm, session_id: str, *, journal: Journal, decision: Decision | None = None
    ) -> Ended:
        """Go on with a session that paused, crashed or was cancelled."""
        ...

    async def replay(self, swarm: Swarm, session_id: str, *, journal: Journal) -> Ended:
        """Replay a journaled session (zero model and tool calls)."""
        ...

    async def cancel_midway(
        self,
        swarm: Swarm,
        prompt: str,
        *,
        session_id: str,
        journal: Journal,
        reached: asyncio.Event,
    ) -> None:
        """Start a session and cancel it once ``reached`` is set (a model call hangs there);
        return once it stopped. ``resume`` then goes on with it from where it was cut."""
        ...


class InProcess:
    """The engine of ``Swarm.run``, ``resume`` and ``replay`` in this process."""

    async def run(self, swarm: Swarm, prompt: str, *, session_id: str, journal: Journal) -> Ended:
        """``Swarm.run``."""
        return Ended.of(await swarm.run(prompt, session_id=session_id, journal=journal))

    async def resume(
        self, swarm: Swarm, session_id: str, *, journal: Journal, decision: Decision | None = None
    ) -> Ended:
        """``Swarm.resume``."""
        return Ended.of(await swarm.resume(session_id, journal, decision=decision))

    async def replay(self, swarm: Swarm, session_id: str, *, journal: Journal) -> Ended:
        """``Swarm.replay``."""
        return Ended.of(await swarm.replay(session_id, journal))

    async def cancel_midway(
        self,
        swarm: Swarm,
        prompt: str,
        *,
        session_id: str,
        journal: Journal,
        reached: asyncio.Event,
    ) -> None:
        """Run as a task and cancel it (Ctrl-C's way) once ``reached`` is set."""
        task = asyncio.ensure_future(swarm.run(prompt, session_id=session_id, journal=journal))
        await reached.wait()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return
        raise AssertionError("the cancelled run finished anyway")


@dataclass(frozen=True, kw_only=True)
class Target:
    """What the kit checks: a journal store, and the engine that runs swarms on it."""

    journal: Callable[[], Journal]
    """Makes the journal a check writes to (called once per check, inside its event loop);
    sessions get fresh ids, so one store may serve every check."""
    engine: Engine = field(default_factory=InProcess)
    """Runs, resumes and replays the kit's swarms."""


class Outside:
    """The outside world the kit's tools act on: every call it received, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.crash_on: str | None = None
        """A tool whose next call crashes right after it was received (its result is never
        journaled)."""
        self.crashed = asyncio.Event()
        """Set when a call crashed (an engine may swallow the crash with its worker's task)."""

    def received(self, name: str, **arguments: Any) -> None:
        """Note a call; crash right after it when it is the one ``crash_on`` names."""
        self.calls.append((name, arguments))
        if self.crash_on == name:
            self.crash_on = None
            self.crashed.set()
            raise SimulatedCrash

    def count(self, name: str) -> int:
        """How many calls of ``name`` arrived."""
        return sum(1 for called, _ in self.calls if called == name)


def shop(
    outside: Outside,
    model: Any,
    *,
    needs_approval: bool = False,
    reconcile: Reconcile | None = None,
) -> Swarm:
    """The kit's swarm: a clerk with ``lookup``, ``refund`` (needs approval when told) and
    ``pay`` (an effect, with ``reconcile`` when given)."""

    @tool
    def lookup(order: str) -> str:
        """Look an order up."""
        outside.received("lookup", order=order)
        return f"{order}: paid"

    @tool(needs_approval=needs_approval)
    def refund(order: str) -> str:
        """Refund an order."""
        outside.received("refund", order=order)
        return f"refunded {order}"

    @tool(effect=True, reconcile=reconcile)
    def pay(order: str, context: RunContext) -> str:
        """Take a payment for an order."""
        outside.received("pay", order=order, key=context.idempotency_key)
        return f"paid {order}"

    tools: list[FunctionTool] = [lookup, refund, pay]
    return Swarm([Agent(name="clerk", instructions="Serve.", tools=tools)], "clerk", model=model)


def _session() -> str:
    return f"conformance-{uuid.uuid4().hex[:12]}"


def _expect(holds: bool, broken: str) -> None:
    if not holds:
        raise AssertionError(f"conformance: {broken}")


def _script(*turns: ScriptedTurn) -> ScriptedModel:
    return ScriptedModel(*turns)


# -- the checks ---------------------------------------------------------------------------


async def check_a_rejected_tool_never_executes(target: Target) -> None:
    """A tool call a person rejects is never executed; the agent is told and goes on."""
    outside, journal, session = Outside(), target.journal(), _session()
    model = _script(tool_call("refund", order="o-1"), text("not refunded"))
    swarm = shop(outside, model, needs_approval=True)
    paused = await target.engine.run(swarm, "refund o-1", session_id=session, journal=journal)
    _expect(paused.pending is not None, "a tool that needs approval did not pause")
    done = await target.engine.resume(swarm, session, journal=journal, decision=reject("no"))
    _expect(outside.calls == [], f"a rejected tool executed: {outside.calls}")
    _expect(done.final_output == "not refunded", "the run did not go on after the rejection")


async def check_an_edited_approval_executes_the_edited_arguments(target: Target) -> None:
    """A person's edit is what executes, once; the model's proposal never does."""
    outside, journal, session = Outside(), target.journal(), _session()
    model = _script(tool_call("refund", order="o-1"), text("refunded"))
    swarm = shop(outside, model, needs_approval=True)
    await target.engine.run(swarm, "refund o-1", session_id=session, journal=journal)
    decision = edit(payload={"order": "o-2"})
    await target.engine.resume(swarm, session, journal=journal, decision=decision)
    _expect(
        outside.calls == [("refund", {"order": "o-2"})],
        f"the edited arguments did not execute once: {outside.calls}",
    )


async def check_resume_never_repeats_a_journaled_call(target: Target) -> None:
    """After a crash, resume repeats no journaled model or tool call."""
    outside, journal, session = Outside(), target.journal(), _session()
    model = _script(
        tool_call("lookup", order="o-1"), tool_call("refund", order="o-1"), text("refunded")
    )
    swarm = shop(outside, model)
    outside.crash_on = "refund"
    await _crashed(
        target.engine.run(swarm, "refund o-1", session_id=session, journal=journal), outside
    )
    done = await target.engine.resume(swarm, session, journal=journal)
    _expect(done.final_output == "refunded", "the resumed run did not finish")
    _expect(outside.count("lookup") == 1, f"a journaled tool call ran again: {outside.calls}")
    _expect(len(model.requests) == 3, f"journaled model calls ran again: {len(model.requests)}")


async def check_an_unknown_effect_is_reconciled_or_paused_never_rerun(target: Target) -> None:
    """An effect whose intent was journaled and outcome was not: with a reconcile function its
    answer is the outcome; without one the run pauses for a person; it never runs again."""
    for reconcile in (_found_payment, None):
        outside, journal, session = Outside(), target.journal(), _session()
        model = _script(tool_call("pay", order="o-1"), text("paid"))
        swarm = shop(outside, model, reconcile=reconcile)
        outside.crash_on = "pay"
        await _crashed(
            target.engine.run(swarm, "pay o-1", session_id=session, journal=journal), outside
        )
        resumed = await target.engine.resume(swarm, session, journal=journal)
        _expect(outside.count("pay") == 1, f"an effect ran again: {outside.calls}")
        if reconcile is not None:
            _expect(resumed.final_output == "paid", "the reconciled run did not finish")
            continue
        pending = resumed.pending
        _expect(
            pending is not None and pending.kind == "effect",
            "an unknown outcome without a reconcile function did not pause for a person",
        )


async def check_cancellation_leaves_a_conversation_that_can_continue(target: Target) -> None:
    """A run cancelled mid-way resumes to its end and the conversation takes another turn."""
    outside, journal, session = Outside(), target.journal(), _session()
    reached = asyncio.Event()
    hanging = _Hanging(reached)
    swarm = shop(outside, hanging)
    await target.engine.cancel_midway(
        swarm, "where is o-1", session_id=session, journal=journal, reached=reached
    )
    hanging.hang = False
    done = await target.engine.resume(swarm, session, journal=journal)
    _expect(done.final_output == "o-1 is paid", "the cancelled run did not resume to its end")
    _expect(outside.count("lookup") == 1, f"a journaled tool call ran again: {outside.calls}")


async def check_replay_makes_zero_calls(target: Target) -> None:
    """Replaying a finished session calls no model and no tool, and gives the same answer."""
    outside, journal, session = Outside(), target.journal(), _session()
    model = _script(tool_call("lookup", order="o-1"), tool_call("pay", order="o-1"), text("ok"))
    swarm = shop(outside, model)
    done = await target.engine.run(swarm, "pay o-1", session_id=session, journal=journal)
    before = list(outside.calls)
    replayed = await target.engine.replay(
        swarm.with_model(NeverCalledModel()), session, journal=journal
    )
    _expect(outside.calls == before, f"replay called tools: {outside.calls[len(before) :]}")
    _expect(replayed.final_output == done.final_output, "replay gave another answer")


async def check_a_parked_conversation_resumes_once_per_reply(target: Target) -> None:
    """A handoff to a queue of people parks the conversation; a person's claim, reply and
    hand-back resume it once, and the agent sees the reply once; a second hand-back, or the
    same hand-back sent again, resumes nothing."""
    journal, session = target.journal(), _session()
    model = _script(transfer("desk"), text("Refund booked.", for_agent="clerk"))
    swarm = _desk(model)
    parked = await target.engine.run(swarm, "a person please", session_id=session, journal=journal)
    _expect(
        parked.pending is not None and parked.pending.kind == "person",
        "a handoff to a queue of people did not park the conversation for a person",
    )
    await _claim_and_reply(journal, session)
    decision = await queues.hand_back_decision(journal, session, to="clerk", by="ana")
    done = await target.engine.resume(swarm, session, journal=journal, decision=decision)
    _expect(done.final_output == "Refund booked.", "the handed-back agent did not go on")
    _expect(len(model.requests) == 2, f"the agent was called {len(model.requests) - 1} times")
    seen = _said_by(model.requests[-1], "ana")
    _expect(seen == [_REPLY], f"the agent saw the person's reply {len(seen)} times: {seen}")
    await _resumes_nothing(target, swarm, session, journal=journal, decision=decision, model=model)


class NotChecked(Exception):
    """A check the target cannot take part in; pytest reports it as skipped, with why."""


Check = Callable[[Target], Coroutine[Any, Any, None]]
"""One promise: an async function of the target that raises AssertionError when broken."""

CHECKS: tuple[Check, ...] = (
    check_a_rejected_tool_never_executes,
    check_an_edited_approval_executes_the_edited_arguments,
    check_resume_never_repeats_a_journaled_call,
    check_an_unknown_effect_is_reconciled_or_paused_never_rerun,
    check_a_parked_conversation_resumes_once_per_reply,
    check_cancellation_leaves_a_conversation_that_can_continue,
    check_replay_makes_zero_calls,
)
"""Every check of the kit, in the order they run."""


def conformance_tests() -> Callable[..., None]:
    """A pytest test, parametrized over ``CHECKS``, that runs each against the ``Target``
    your fixture named ``conformance_target`` gives (parametrize the fixture to check several
    stores or engines). Assign it to a ``test_`` name in a test module."""
    import pytest  # noqa: PLC0415 - only a test session needs it

    @pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
    def test_conformance(check: Check, conformance_target: Target) -> None:
        try:
            asyncio.run(check(conformance_target))
        except NotChecked as reason:
            pytest.skip(str(reason))

    return test_conformance


# -- the checks' parts ---------------------------------------------------------------------


def _found_payment(key: str, arguments: dict[str, Any]) -> Happened | NotDone:
    """The kit's reconcile function: the crash came after the payment, so it happened."""
    return Happened(result=f"paid {arguments['order']}")


_REPLY = "I refunded o-1 myself."


def _desk(model: Any) -> Swarm:
    """A triage agent that hands conversations to a queue of people, and a clerk to hand
    them back to."""
    desk = PeopleQueue(name="desk")
    triage = Agent(name="triage", instructions="Route.", handoffs=[desk])
    clerk = Agent(name="clerk", instructions="Serve.")
    return Swarm([triage, clerk, desk], "triage", model=model)


async def _claim_and_reply(journal: Journal, session: str) -> None:
    listed = [c.session_id for c in await queues.waiting(journal, queue="desk")]
    _expect(session in listed, f"the parked conversation is not in its queue: {listed}")
    await queues.claim(journal, session, by="ana")
    await queues.reply(journal, session, by="ana", text=_REPLY)


def _said_by(request: ModelRequest, person: str) -> list[str]:
    return [
        str(m.content)
        for m in request.messages
        if isinstance(m, AssistantMessage) and m.agent == person
    ]


async def _resumes_nothing(
    target: Target,
    swarm: Swarm,
    session: str,
    *,
    journal: Journal,
    decision: Decision,
    model: ScriptedModel,
) -> None:
    """A second hand-back is refused; the first one sent again resumes nothing; a replay takes
    the journaled hand-back and calls nothing."""
    records = len(await journal.read(session))
    try:
        await queues.hand_back_decision(journal, session, to="clerk", by="ana")
    except PeopleQueueError:
        pass
    else:
        raise AssertionError("conformance: a second hand-back of a finished conversation was taken")
    with contextlib.suppress(SwarmkitError):
        await target.engine.resume(swarm, session, journal=journal, decision=decision)
    _expect(len(model.requests) == 2, "a hand-back sent again resumed the conversation again")
    after = len(await journal.read(session))
    _expect(after == records, f"a hand-back sent again wrote {after - records} records")
    replayed = await target.engine.replay(
        swarm.with_model(NeverCalledModel()), session, journal=journal
    )
    _expect(replayed.final_output == "Refund booked.", "the handed-back session replays otherwise")


async def _crashed(run: Awaitable[Ended], outside: Outside) -> None:
    """Wait until the run crashed: its ``SimulatedCrash`` comes out, or the engine's worker
    swallowed it (then the run is stopped, as a dead process stops)."""
    running = asyncio.ensure_future(run)
    crash = asyncio.ensure_future(outside.crashed.wait())
    await asyncio.wait({running, crash}, return_when=asyncio.FIRST_COMPLETED)
    crash.cancel()
    if not running.done():
        running.cancel()
    try:
        await running
    except (SimulatedCrash, asyncio.CancelledError):
        if outside.crashed.is_set():
            return
    raise AssertionError("conformance: the kit's crash did not end the run")


class _Hanging:
    """Looks an order up, then hangs on its second call (where the kit cancels) until told
    not to; then answers."""

    name = "hanging"

    def __init__(self, reached: asyncio.Event) -> None:
        self.hang = True
        self._reached = reached
        self._script = ScriptedModel(tool_call("lookup", order="o-1"), text("o-1 is paid"))

    async def respond(self, request: ModelRequest) -> ModelResponse:
        if self.hang and self._script.requests:
            self._reached.set()
            await asyncio.Event().wait()
        return await self._script.respond(request)


__all__ = [
    "CHECKS",
    "Check",
    "Ended",
    "Engine",
    "InProcess",
    "NotChecked",
    "Outside",
    "SimulatedCrash",
    "Target",
    "check_a_parked_conversation_resumes_once_per_reply",
    "check_a_rejected_tool_never_executes",
    "check_an_edited_approval_executes_the_edited_arguments",
    "check_an_unknown_effect_is_reconciled_or_paused_never_rerun",
    "check_cancellation_leaves_a_conversation_that_can_continue",
    "check_replay_makes_zero_calls",
    "check_resume_never_repeats_a_journaled_call",
    "conformance_tests",
    "shop",
]
