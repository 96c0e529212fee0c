"""A run's clock and budget: time and usage limits, checked before calls and after answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from swarmkit._run._state import RunState
from swarmkit.limits import LimitBreach, LimitName, UsageLimits
from swarmkit.models import ModelRequest, Usage
from swarmkit.runtime import Runtime
from swarmkit.spec import SwarmSpec

T = TypeVar("T")


class Expired(Exception):
    """Internal: the call in flight outlived the run's or the agent's time allowance."""


# -- time ------------------------------------------------------------------------------------


def start_run(swarm: SwarmSpec, state: RunState, now: float) -> None:
    """A run (or a resumed part of one) starts: a fresh time allowance, the cost from zero."""
    state.budget.run_started_at = now
    state.budget.agent_started_at = now
    limits = swarm.usage_limits
    if limits is not None and limits.cost is not None:
        state.budget.cost = 0.0
    if limits is not None and limits.per == "conversation" and state.start is not None:
        # The earlier turns' calls count from the first check on, so a spent conversation
        # stops before this turn pays for a model call.
        earlier = state.start.spent
        state.budget.spend.add(model_calls=earlier.model_calls, tool_calls=earlier.tool_calls)


def agent_started(state: RunState, now: float) -> None:
    """An agent became active: its time allowance starts."""
    state.budget.agent_started_at = now


def count_call(state: RunState, turn: int) -> None:
    """A model call is under way: it is the run's ``turn``."""
    state.budget.turns = turn
    state.budget.spend.add(model_calls=1)


def count_tool_call(state: RunState) -> None:
    """A function tool runs (a run without usage limits: no breach to check)."""
    state.budget.tool_calls += 1


def add_usage(state: RunState, agent: str, usage: Usage) -> None:
    """Tokens an agent's call (or its sub-run) used."""
    spent = state.budget.usage
    known = spent.get(agent)
    spent[agent] = usage if known is None else known + usage


def add_sub_run(state: RunState, *, model_calls: int, tool_calls: int) -> None:
    """A replayed sub-run's calls count against the limits as when it ran."""
    state.budget.spend.add(model_calls=model_calls, tool_calls=tool_calls)


def stopped(state: RunState, breach: LimitBreach) -> None:
    """The run ends at this limit."""
    state.budget.limit = breach


def time_left(swarm: SwarmSpec, state: RunState, now: float) -> float | None:
    """Seconds until the nearer of the run's and the agent's deadlines; None without either."""
    left = [seconds for _, seconds, _ in _allowances(swarm, state, now)]
    return min(left) if left else None


def time_breach(
    swarm: SwarmSpec, state: RunState, now: float, *, expired: bool = False
) -> LimitBreach | None:
    """The time limit that has run out, or None; ``expired`` names the nearest one regardless
    (a call in flight was cancelled at its deadline)."""
    allowances = sorted(_allowances(swarm, state, now), key=lambda item: item[1])
    if not allowances:
        return None
    name, left, allowed = allowances[0]
    if left > 0 and not expired:
        return None
    return _breach(state, name, allowed, allowed - left, "seconds")


def _allowances(
    swarm: SwarmSpec, state: RunState, now: float
) -> list[tuple[LimitName, float, float]]:
    found: list[tuple[LimitName, float, float]] = []
    if swarm.run_timeout is not None:
        found.append(
            (
                "run_timeout",
                swarm.run_timeout - (now - state.budget.run_started_at),
                swarm.run_timeout,
            )
        )
    if swarm.agent_timeout is not None:
        left = swarm.agent_timeout - (now - state.budget.agent_started_at)
        found.append(("agent_timeout", left, swarm.agent_timeout))
    return found


async def within(seconds: float | None, call: Awaitable[T], runtime: Runtime) -> T:
    """Await ``call``, cancelling it when ``seconds`` run out on the runtime's clock (then
    Expired)."""
    if seconds is None:
        return await call
    async with _Alarm(runtime.clock() + seconds, runtime):
        return await call


async def bounded(
    seconds: float | None, items: AsyncIterator[T], *, last: Callable[[T], bool], runtime: Runtime
) -> AsyncIterator[T]:
    """The items of a stream up to the ``last`` one, the whole stream cancelled when
    ``seconds`` run out on the runtime's clock (Expired); a last item that arrived in time is
    never lost to a deadline that passes while the finished stream is closed.

    Only the waits for the next item are bounded: the consumer's time between items counts
    against the deadline but is never cancelled.
    """
    if seconds is None:
        async for item in items:
            yield item
        return
    ends = runtime.clock() + seconds
    try:
        while True:
            try:
                async with _Alarm(ends, runtime):
                    item = await anext(items)
            except StopAsyncIteration:
                return
            yield item
            if last(item):
                return
    finally:
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            await aclose()


class _Alarm:
    """Cancels the task awaiting inside it once the runtime's clock reaches ``ends``, and
    turns that cancellation into Expired.

    The runtime waits, not the event loop: the real one for real seconds, an engine on its
    own timer, a test's fixed clock until the test moves it. The call stays in the caller's
    task (a client's task-bound state survives); only the wait runs beside it.
    """

    def __init__(self, ends: float, runtime: Runtime) -> None:
        self._ends = ends
        self._runtime = runtime
        self._rang = False

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        assert task is not None  # the loop awaits its calls from a task
        self._task, self._cancelling = task, task.cancelling()
        self._timer = asyncio.create_task(self._ring())

    async def _ring(self) -> None:
        runtime = self._runtime
        if runtime.sleep_until is not None:
            await runtime.sleep_until(self._ends)
        else:
            await runtime.sleep(max(self._ends - runtime.clock(), 0.0))
        self._rang = True
        self._task.cancel()

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self._timer.cancel()
        if not self._rang:
            return
        # The cancellation is ours only if nobody else cancelled the task meanwhile.
        ours = self._task.uncancel() <= self._cancelling
        if ours and kind is asyncio.CancelledError:
            raise Expired from None


# -- usage -----------------------------------------------------------------------------------


def before_call(swarm: SwarmSpec, state: RunState) -> LimitBreach | None:
    """The usage limit a next model call cannot fit in, or None."""
    limits = swarm.usage_limits
    if limits is None:
        return None
    calls = limits.max_model_calls
    if calls is not None:
        made = state.budget.spend.root.model_calls
        if made >= calls:
            return _breach(state, "max_model_calls", calls, made, "model calls")
    return _spent(limits, state, at_limit=True)


def after_answer(swarm: SwarmSpec, state: RunState, model: str, usage: Usage) -> LimitBreach | None:
    """Price the answer, then the usage limit it went past, or None."""
    limits = swarm.usage_limits
    if limits is None:
        return None
    if limits.cost is not None:
        state.budget.cost = (state.budget.cost or 0.0) + float(limits.cost(model, usage))
    return _spent(limits, state, at_limit=False)


def before_tool_call(swarm: SwarmSpec, state: RunState) -> LimitBreach | None:
    """The breach a next function tool call would make, or None (else the call is counted)."""
    limits = swarm.usage_limits
    allowed = limits.max_tool_calls if limits is not None else None
    if allowed is not None:
        made = state.budget.spend.root.tool_calls
        if made >= allowed:
            return _breach(state, "max_tool_calls", allowed, made, "tool calls")
    state.budget.tool_calls += 1
    state.budget.spend.add(tool_calls=1)
    return None


def shaped(swarm: SwarmSpec, state: RunState, request: ModelRequest) -> ModelRequest:
    """The request, made to answer when it is the last call max_model_calls allows and the
    limits ask for an answer then; the run then ends as ``usage_limit``."""
    limits = swarm.usage_limits
    if limits is None or not limits.answer_on_last_call or not request.tools:
        return request
    calls = limits.max_model_calls
    if calls is None or state.budget.spend.root.model_calls + 1 < calls:
        return request
    state.budget.limit = _breach(state, "max_model_calls", calls, calls, "model calls")
    return replace(request, settings=replace(request.settings, tool_choice="none"))


def _spent(limits: UsageLimits, state: RunState, *, at_limit: bool) -> LimitBreach | None:
    total = sum(state.budget.usage.values(), Usage())
    cost = state.budget.cost or 0.0
    if limits.per == "conversation" and state.start is not None:
        total, cost = total + state.start.spent.usage, cost + state.start.spent.cost
    figures: list[tuple[LimitName, float | None, float, str]] = [
        ("max_input_tokens", limits.max_input_tokens, total.prompt_tokens, "input tokens"),
        ("max_output_tokens", limits.max_output_tokens, total.completion_tokens, "output tokens"),
        ("max_total_tokens", limits.max_total_tokens, total.total_tokens, "total tokens"),
        ("max_cost", limits.max_cost, cost, "cost"),
    ]
    for name, allowed, used, unit in figures:
        if allowed is not None and (used >= allowed if at_limit else used > allowed):
            return _breach(state, name, allowed, used, unit)
    return None


def _breach(
    state: RunState, name: LimitName, allowed: float, used: float, unit: str
) -> LimitBreach:
    # "1 model call", "2 tool calls"; a cost or a time keeps its unit as it is.
    counted = unit if used != 1 or not unit.endswith("s") else unit[:-1]
    message = f"{name}={allowed:g} reached: the run used {used:g} {counted}"
    return LimitBreach(limit=name, allowed=allowed, used=used, agent=state.agent, message=message)
