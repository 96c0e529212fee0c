"""Effects in the loop: the intent journaled and committed before the call, and an intent found
without an outcome settled by the tool's reconcile function or a person, never by a silent re-run.

After an ``effect_intent`` record the journal holds exactly one of: the call's ``tool_call``
(its outcome), an ``effect_reconciled`` answer, or the pause a person decides. Replay walks the
same records and calls nothing: neither the effect nor its reconcile function.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from swarmkit._run import _replies as replies
from swarmkit._run._parts import RunParts
from swarmkit._run._pauses import pause_point
from swarmkit.effects import Happened, NotDone, arguments_of, happened, reconcile_effect
from swarmkit.exceptions import EffectOutcomeUnknownError
from swarmkit.interrupts import Approve, Decision, Edit, PendingDecision, Reject
from swarmkit.messages import ToolCall
from swarmkit.plan import AgentPlan
from swarmkit.tools import ToolOutcome, outcome_from_data

INTENT = "effect_intent"
"""An effect about to run: tool, executed arguments, idempotency key, when."""
RECONCILED = "effect_reconciled"
"""A reconcile function's answer for an intent found without an outcome."""

Live = Callable[[RunParts, AgentPlan, ToolCall, str, str], Awaitable[ToolOutcome]]
"""Runs the tool for real with the given arguments and idempotency key."""


async def run_effect(
    run: RunParts,
    plan: AgentPlan,
    call: ToolCall,
    *,
    arguments: str,
    decision: Decision | None,
    live: Live,
) -> ToolOutcome:
    """An effect's outcome: journaled, settled, or (intent committed first) run for real."""
    key = f"{run.state.session_id}:{run.state.budget.turns}:{call.id}"
    while True:
        held = run.tape.held(INTENT)
        if held is None or held.data is None:
            outcome = await _first_attempt(
                run, plan, call, (arguments, key), decision=decision, live=live
            )
            if outcome is None:
                continue  # an engine lost the attempt and a person said to run it again
            return outcome
        key = str(held.data.get("idempotency", key))
        await run.tape.note(INTENT, _intent(plan, call, arguments, key, held.data.get("at")))
        if _holds(run, "tool_call"):
            outcome = await _journaled(run, plan, call, arguments)
            assert outcome is not None  # the journal holds it
            return outcome
        if run.tape.held("tool_call") is None:
            # The journal ends at the intent: a strict replay stops here, before anyone is asked.
            await _journaled(run, plan, call, arguments)
        settled = await _settle(run, plan, call, held.data)
        if settled is None:
            continue  # it did not happen, or a person said to run it: a new intent first
        journaled = await _journaled(run, plan, call, arguments)
        if journaled is not None:
            return journaled
        run.tape.record_outcome(plan.name, call, settled, decision, arguments)
        return settled


async def _first_attempt(
    run: RunParts,
    plan: AgentPlan,
    call: ToolCall,
    how: tuple[str, str],
    *,
    decision: Decision | None,
    live: Live,
) -> ToolOutcome | None:
    """Journal and commit the intent, then run the effect; None to run it again (a person's
    word after an engine lost the attempt)."""
    arguments, key = how
    journaled = await _journaled(run, plan, call, arguments)
    if journaled is not None:
        return journaled
    intent = _intent(plan, call, arguments, key, run.seams.runtime.clock())
    await run.tape.note(INTENT, intent)
    await run.tape.flush()  # committed before the call: a crash from here on is an unknown
    try:
        outcome = await live(run, plan, call, arguments, key)
    except EffectOutcomeUnknownError as exc:
        settled = _decided(await pause_point(run, _pending(run, plan, call, intent, str(exc))))
        if settled is None:
            return None
        outcome = settled
    run.tape.record_outcome(plan.name, call, outcome, decision, arguments)
    return outcome


async def _journaled(
    run: RunParts, plan: AgentPlan, call: ToolCall, arguments: str
) -> ToolOutcome | None:
    """The journaled outcome, or None when the run is live here. A replay that executes tools
    still takes an effect's outcome from the journal: replay never runs an effect."""
    held = run.tape.held("tool_call")
    outcome = await run.tape.replayed_outcome(plan.name, call, arguments)
    if outcome is None and held is not None and held.data is not None:
        return outcome_from_data(held.data["outcome"])
    return outcome


async def _settle(
    run: RunParts, plan: AgentPlan, call: ToolCall, intent: Mapping[str, Any]
) -> ToolOutcome | None:
    """An intent without an outcome: its outcome, or None to run the effect again."""
    answer = await _reconciled(run, plan, call, intent)
    match answer:
        case Happened(result=result):
            return happened(result)
        case NotDone():
            return None
        case _:
            pending = _pending(run, plan, call, intent, answer)
    return _decided(await pause_point(run, pending))


async def _reconciled(
    run: RunParts, plan: AgentPlan, call: ToolCall, intent: Mapping[str, Any]
) -> Happened | NotDone | str | None:
    """The reconcile function's answer (journaled, or asked now), why it gave none, or None
    without a function (or once a person's pause is journaled here)."""
    held = run.tape.held(RECONCILED)
    if held is not None and held.data is not None:
        await run.tape.note(RECONCILED, held.data)
        return _answer_of(held.data)
    reconcile = plan.tools[call.name].reconcile
    if held is not None or reconcile is None:
        return None
    answer = await reconcile_effect(reconcile, str(intent["idempotency"]), _args(intent))
    if isinstance(answer, str):
        run.log("effect_reconcile_failed", tool=call.name, error=answer)
        return answer
    await run.tape.note(RECONCILED, _answer_data(intent, answer))
    return answer


def _pending(
    run: RunParts,
    plan: AgentPlan,
    call: ToolCall,
    intent: Mapping[str, Any],
    error: str | None,
) -> PendingDecision:
    """The pause for a person: the journaled one, or "outcome unknown" with the evidence."""
    held = run.tape.held("interrupt")
    if held is not None and held.data is not None:
        return PendingDecision(**held.data)
    payload: dict[str, Any] = {
        "outcome": "unknown",
        "idempotency": intent["idempotency"],
        "arguments": _args(intent),
        "intent_at": intent.get("at"),
    }
    if error is not None:
        payload["error"] = error
    run.log("effect_outcome_unknown", tool=call.name, idempotency=intent["idempotency"])
    return PendingDecision(kind="effect", agent=plan.name, tool_name=call.name, payload=payload)


def _decided(decision: Decision) -> ToolOutcome | None:
    """A person's decision on an unknown outcome: it happened (an edit with the result), run
    it again (approve), or it must not run (reject)."""
    match decision:
        case Approve():
            return None
        case Reject():
            return replies.rejected_outcome(decision)
        case Edit(payload=payload):
            return happened(payload.get("result"))


def _holds(run: RunParts, kind: str) -> bool:
    held = run.tape.held(kind)
    return held is not None and held.data is not None


def _intent(plan: AgentPlan, call: ToolCall, arguments: str, key: str, at: Any) -> dict[str, Any]:
    return {
        "agent": plan.name,
        "id": call.id,
        "name": call.name,
        "arguments": arguments,
        "idempotency": key,
        "at": at,
    }


def _args(intent: Mapping[str, Any]) -> dict[str, Any]:
    return arguments_of(str(intent.get("arguments") or "{}"))


def _answer_data(intent: Mapping[str, Any], answer: Happened | NotDone) -> dict[str, Any]:
    data: dict[str, Any] = {"idempotency": intent["idempotency"], "answer": answer.kind}
    if isinstance(answer, Happened):
        data["result"] = to_jsonable_python(answer.result, fallback=str)
    return data


def _answer_of(data: Mapping[str, Any]) -> Happened | NotDone:
    if data.get("answer") == "happened":
        return Happened(result=data.get("result"))
    return NotDone()
