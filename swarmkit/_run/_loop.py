"""The run loop: rules first, then the model, its tool calls, and at most one handoff a turn."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any, TypeAlias, assert_never

from swarmkit import events as ev
from swarmkit._run import _budget as budget
from swarmkit._run import _ledger as ledger
from swarmkit._run import _replies as replies
from swarmkit._run import _shadow as shadow
from swarmkit._run._conversation import start_data
from swarmkit._run._handoff import enter
from swarmkit._run._output import accept_answer
from swarmkit._run._parts import RunParts
from swarmkit._run._pauses import answer_stands
from swarmkit._run._people import take_over
from swarmkit._run._request import build_request
from swarmkit._run._routing import route, routes
from swarmkit._run._state import RunState, build_result, finish_reason, finished_data
from swarmkit._run._steps import (
    ANSWERED,
    ENDING,
    GOES_ON,
    Answered,
    Continued,
    End,
    HandedOff,
    Paused,
    Step,
    Stopped,
    ended,
)
from swarmkit._run._tool_calls import tool_turn
from swarmkit.context import json_safe
from swarmkit.exceptions import JournalError, ModelError, ReplayDivergenceError
from swarmkit.ledger import Reservation
from swarmkit.lowlevel import RequestHistory, StepWriter
from swarmkit.models import (
    AttemptDiscarded,
    ModelRequest,
    ModelResponse,
    StreamingModel,
    Usage,
    provider_of,
    reasoning_of,
    server_of,
)
from swarmkit.models import TextDelta as ModelTextDelta
from swarmkit.people import is_people_queue
from swarmkit.plan import AgentPlan
from swarmkit.result import RunResult
from swarmkit.spec import RunSeams, SwarmSpec

TextWriter: TypeAlias = Callable[[str, str], ev.Event]
"""How a streamed run writes each piece of its text (the agent, the text) as the item its
stream yields in the place of a TextDelta."""

Streaming: TypeAlias = bool | TextWriter
"""Whether a run streams its text: not at all (False), as TextDelta events (True), or as a
writer writes it."""


class RunLoop:
    """Drives one run of a swarm and yields its events; ``events()`` ends with RunFinished.

    A ``quiet`` loop is read by nobody but for its result (a run or replay with no observer):
    it builds no per-step events (model call started and finished, tool called and
    resulted); every other event, and everything the run journals, is the same.

    Each step of the active agent: consult the HandoffGraph (a match hands off with no model
    call); otherwise call the model; run the tool calls it made, then take at most one of the
    handoffs it asked for; an answer in plain text ends the run. Each step comes to a step
    value (``_steps``) that the driver dispatches on. Every step goes through the step writer,
    which journals it, or serves back what the journal held for it. The loop reaches the world
    only through the spec's models and its seams (tool runner, decision source, runtime).
    """

    def __init__(
        self,
        swarm: SwarmSpec,
        state: RunState,
        tape: StepWriter,
        seams: RunSeams,
        *,
        streaming: Streaming,
        quiet: bool = False,
        previous_trace: str | None = None,
    ) -> None:
        self._previous_trace = previous_trace
        self._text = None if isinstance(streaming, bool) else streaming
        """Writes the streamed text (None: as TextDelta events)."""
        self._run = RunParts(
            swarm=swarm,
            state=state,
            tape=tape,
            seams=seams,
            streaming=streaming is not False,
            quiet=quiet,
            limited=swarm.usage_limits is not None
            or swarm.run_timeout is not None
            or swarm.agent_timeout is not None,
            timed=swarm.run_timeout is not None or swarm.agent_timeout is not None,
        )
        self._end: End = ANSWERED

    async def events(self) -> AsyncGenerator[ev.Event, None]:
        """Run to the end, yielding every event exactly once."""
        run = self._run
        state, tape = run.state, run.tape
        try:
            budget.start_run(run.swarm, state, run.seams.runtime.clock())
            replayed = await tape.note("run_started", self._start_data())
        except BaseException:
            # Nothing of the run is journaled: let the session go, with nothing written.
            await tape.abandon()
            raise
        try:
            yield ev.RunStarted(
                session_id=state.session_id,
                prompt=state.prompt,
                entry_agent=state.agent,
                replay=replayed,
                next_turn=state.start.decision if state.start else None,
                previous_trace=self._previous_trace,
            )
            run.log("run_started")
            async for event in self._drive():
                yield event
        except (ReplayDivergenceError, JournalError):
            # The journal failed or holds what cannot be read: writing the end to it would
            # only bury the real cause under a second error.
            raise
        except Exception as exc:
            # A limit's "error" policy or a tool set to raise: journal the end, then raise.
            await tape.note("run_finished", {"stop_reason": "error", "error": repr(exc)})
            await tape.close()
            raise
        except (KeyboardInterrupt, asyncio.CancelledError):
            # Journaled as interrupted and ``cancelled`` (no decision pending), so the session
            # is not left open and resume simply continues it.
            data = finished_data(build_result(state, "interrupted", None, None))
            await tape.cancel({**data, "cancelled": True})
            raise
        except BaseException:
            await tape.abandon()
            raise
        result = self._result(self._end)
        await tape.note("run_finished", self._end_data(result))
        await tape.close()
        run.log("run_finished", stop_reason=result.stop_reason)
        yield ev.RunFinished(result=result)

    def _result(self, end: End) -> RunResult:
        state = self._run.state
        match end:
            case Answered():
                return build_result(state, finish_reason(state), None, None)
            case Paused(pending=pending):
                return build_result(state, "interrupted", None, pending)
            case Stopped(reason=reason, error=error):
                return build_result(state, reason, error, None)
            case _:
                assert_never(end)

    def _end_data(self, result: RunResult) -> dict[str, Any]:
        """The run's end as journaled; with the trace an observer recorded it in, if any."""
        data = finished_data(result)
        trace = ev.run_trace(self._run.state.session_id)
        if trace is not None:
            data["trace"] = trace
        return data

    def _start_data(self) -> dict[str, Any]:
        run = self._run
        state = run.state
        return {
            "prompt": state.prompt,
            "context": json_safe(state.context),
            "entry_agent": state.agent,
            "fingerprint": dict(run.swarm.fingerprint),
            **(start_data(state.start) if state.start else {}),
        }

    async def _drive(self) -> AsyncIterator[ev.Event]:
        """Step after step until one ends the run (its value kept as ``_end``)."""
        run = self._run
        try:
            yield await enter(run, run.state.agent)
        except ENDING as exc:
            self._end = ended(exc)
            return
        while True:
            plan = run.swarm.plans[run.state.agent]
            step: Step
            try:
                step = await self._before_call(plan)
                for event in step.events:
                    yield event
                if isinstance(step, Continued):
                    # No generator in between: each would cost every event a resumption.
                    call = await self._start_call(plan)
                    if call.started is not None:
                        yield call.started
                    served = (response := await self._replayed(plan, call)) is not None
                    if response is None and self._at_once(plan):
                        response = await self._plain_call(plan, call)
                    if response is None:
                        async for item in self._live_call(plan, call):
                            if isinstance(item, ModelResponse):
                                response = item
                            else:
                                yield item
                        assert response is not None
                    response = await self._take_response(plan, response, call)
                    if not run.quiet:
                        yield _call_finished(plan, call.turn, response, served)
                    if response.message.tool_calls:
                        turn = await tool_turn(run, plan, response)
                        if isinstance(turn, HandedOff | Continued):
                            continue  # the common turn, run at once: the next step
                        async for told in turn:
                            if isinstance(told, HandedOff | Continued):
                                step = told
                            else:
                                yield told
                        del turn  # not held (spent) through the next model call
                    else:
                        step = await self._after_answer(plan, response)
            except ENDING as exc:
                step = ended(exc)
            if not isinstance(step, HandedOff | Continued):
                self._end = step  # Answered, Paused or Stopped (End): the run's last step
                return

    async def _before_call(self, plan: AgentPlan) -> HandedOff | Continued | Answered:
        """A queue of people's turn (a person's), else a spent budget's continuation or the
        rules; ``Continued`` leaves the step to the model."""
        run = self._run
        if is_people_queue(plan.agent):
            return await take_over(run, plan)
        return await route(run, plan) if routes(run, plan) else GOES_ON

    async def _after_answer(self, plan: AgentPlan, response: ModelResponse) -> Answered | Continued:
        """A turn with no tool calls: the answer that ends the run, unless it is sent back or a
        person rejects it (then the same agent goes on)."""
        state = self._run.state
        accepted = await accept_answer(self._run.tape, state, plan, response)
        if accepted and await answer_stands(self._run, plan):
            return ANSWERED
        return Continued()

    # -- model ---------------------------------------------------------------------------

    async def _start_call(self, plan: AgentPlan) -> _Call:
        """Check the limits and build the request (the turn's number), before the model is
        asked. The history goes to the tape by reference: a replayed step never copies it."""
        run = self._run
        state = run.state
        hit = run.limit_hit(budget.before_call(run.swarm, state) if run.limited else None)
        if hit is not None:
            await run.stop(hit)
        request = await build_request(run.swarm, state, plan)
        if run.limited:
            request = budget.shaped(run.swarm, state, request)
        history = RequestHistory(
            view=state.conversation.view,
            items=state.conversation.own_items,
            count=len(state.conversation.own_items),
        )
        if run.swarm.ledger is not None and run.tape.held_stop() is None:
            # Only a live call reserves: a replayed one was paid (and charged) when it ran.
            refused = await ledger.reserve(run, plan, history.sent_with(request))
            if refused is not None:
                await run.stop(refused)
        turn = state.budget.turns + 1
        started = None
        if not run.quiet:
            streams, held = self._streams(plan), state.budget.reservation
            started = _call_started(plan, turn, request, history, streams, held=held)
        return _Call(
            request=request,
            history=history,
            turn=turn,
            started=started,
            shadow=shadow.judge(run, plan),
        )

    def _at_once(self, plan: AgentPlan) -> bool:
        """Whether a live call is asked with no generator in between: no time limit, no stream.
        (Awaited in ``_drive`` itself: a coroutine between them is held through every call.)"""
        return not self._run.timed and not self._streams(plan)

    async def _replayed(self, plan: AgentPlan, call: _Call) -> ModelResponse | None:
        """What the journal held for this call: its response, or None when the call is live."""
        try:
            return await self._run.tape.replayed_response(
                plan.name, call.turn, call.request, call.history
            )
        finally:
            # Counted once the call is under way (a journaled failure counts too), not
            # while its record is reached: the state history shows states between steps.
            budget.count_call(self._run.state, call.turn)

    def _streams(self, plan: AgentPlan) -> bool:
        return self._run.streaming and isinstance(plan.model, StreamingModel)

    async def _plain_call(self, plan: AgentPlan, call: _Call) -> ModelResponse:
        """Ask the model with no time limit and no stream (the common live call): no generator
        in between; journal the answer."""
        tape = self._run.tape
        request = call.history.sent_with(call.request)
        try:
            response = replies.unique_call_ids(await plan.model.respond(request))
        except ModelError as exc:
            tape.record_model_error(plan.name, call.turn, request, exc)
            await ledger.settle(self._run, Usage())
            raise
        if call.shadow is None:
            tape.record_response(plan.name, call.turn, request, response)
        else:  # the shadow rules' verdicts on the answer go in its record
            verdicts = shadow.verdicts(self._run, plan, call.shadow, response)
            if verdicts is None:
                verdicts = await shadow.naming_verdicts(self._run, plan, call.shadow, response)
            tape.record_response(plan.name, call.turn, request, response, shadow=verdicts)
        return response

    async def _live_call(
        self, plan: AgentPlan, call: _Call
    ) -> AsyncIterator[ev.Event | ModelResponse]:
        """Ask the model (the journal had no answer), within the time left; journal the answer."""
        run = self._run
        request = call.history.sent_with(call.request)
        response: ModelResponse | None = None
        try:
            responding = self._respond(plan, request, call.turn)
            answered = budget.bounded(
                run.time_left(), responding, last=_is_answer, runtime=run.seams.runtime
            )
            async for item in answered:
                if isinstance(item, ModelResponse):
                    response = replies.unique_call_ids(item)
                else:
                    yield item
        except ModelError as exc:
            run.tape.record_model_error(plan.name, call.turn, request, exc)
            await ledger.settle(run, Usage())
            raise
        except budget.Expired:
            hit = run.limit_hit(run.expired())
            if hit is not None:
                await run.stop(hit)
        assert response is not None
        if call.shadow is None:
            run.tape.record_response(plan.name, call.turn, request, response)
        else:
            verdicts = shadow.verdicts(run, plan, call.shadow, response)
            if verdicts is None:
                verdicts = await shadow.naming_verdicts(run, plan, call.shadow, response)
            run.tape.record_response(plan.name, call.turn, request, response, shadow=verdicts)
        yield response

    async def _take_response(
        self, plan: AgentPlan, response: ModelResponse, call: _Call
    ) -> ModelResponse:
        """Count the answer's usage against the limits and add it, attributed, to the history;
        check a replayed call's shadow verdicts."""
        run = self._run
        state = run.state
        budget.add_usage(state, plan.name, response.usage)
        if state.budget.reservation is not None:
            await ledger.settle(run, response.usage)
        breach = None
        if run.limited:
            model_name = str(response.model or getattr(plan.model, "name", plan.name))
            breach = budget.after_answer(run.swarm, state, model_name, response.usage)
        hit = run.limit_hit(breach)
        if hit is not None:
            await run.stop(hit)
        if call.shadow is not None and run.tape.held_verdicts() is not None:  # replayed
            await shadow.check(run, plan, call.shadow, response)
        message = replies.attributed(response.message, plan.name)
        state.conversation.add(message)
        if message.content:
            state.conversation.say(message.content)
        if message is response.message:
            return response
        return replace(response, message=message)

    async def _respond(
        self, plan: AgentPlan, request: ModelRequest, turn: int
    ) -> AsyncIterator[ev.Event | ModelResponse]:
        model = plan.model
        if not self._streams(plan):
            yield await model.respond(request)
            return
        assert isinstance(model, StreamingModel)
        write = self._text
        async for item in model.stream(request):
            if isinstance(item, ModelResponse):
                yield item
            elif isinstance(item, ModelTextDelta):
                if write is None:
                    yield ev.TextDelta(agent=plan.name, text=item.text)
                else:  # the stream's reader writes it, and no event is built
                    yield write(plan.name, item.text)
            elif isinstance(item, AttemptDiscarded):
                yield ev.ModelAttemptDiscarded(
                    agent=plan.name, turn=turn, attempt=item.attempt, reason=item.reason
                )


@dataclass(kw_only=True, slots=True)
class _Call:
    """One model call while it is under way (not frozen: made every step, never changed)."""

    request: ModelRequest
    """The request with only its system message (the history is ``history``)."""
    history: RequestHistory
    """The history the request carries, held by reference."""
    turn: int
    """The run's turn this call is."""
    started: ev.ModelCallStarted | None
    """Its start, as streamed (None in a quiet loop)."""
    shadow: shadow.Trials | None
    """The shadow rules' verdicts on the state before the call (None: the agent has none)."""


def _call_started(
    plan: AgentPlan,
    turn: int,
    request: ModelRequest,
    history: RequestHistory,
    stream: bool,
    *,
    held: Reservation | None = None,
) -> ev.ModelCallStarted:
    server = server_of(plan.model)
    return ev.ModelCallStarted(
        agent=plan.name,
        turn=turn,
        model=_text_attribute(plan.model, "name"),
        provider=provider_of(plan.model),
        stream=stream,
        server_address=server[0] if server else None,
        server_port=server[1] if server else None,
        request=request,
        history=history,
        spend=None if held is None else ledger.hold_data(held),
    )


def _call_finished(
    plan: AgentPlan, turn: int, response: ModelResponse, replayed: bool
) -> ev.ModelCallFinished:
    return ev.ModelCallFinished(
        agent=plan.name,
        turn=turn,
        usage=response.usage,
        finish_reason=response.finish_reason,
        response_model=response.model,
        response_id=response.id,
        content=response.message.content,
        replayed=replayed,
        reasoning=reasoning_of(response.message),
    )


def _is_answer(item: ev.Event | ModelResponse) -> bool:
    return isinstance(item, ModelResponse)


def _text_attribute(model: object, name: str) -> str | None:
    value = getattr(model, name, None)
    return value if isinstance(value, str) else None
