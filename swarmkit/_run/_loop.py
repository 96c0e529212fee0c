"""The run loop: rules first, then the model, its tool calls, and at most one handoff a turn."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import asdict, dataclass
from typing import Any, assert_never

from swarmkit import events as ev
from swarmkit._log import log
from swarmkit._run import _budget as budget
from swarmkit._run import _replies as replies
from swarmkit._run._callbacks import handoff_callback
from swarmkit._run._conversation import start_data, this_turn_only, with_own_memory
from swarmkit._run._delegate import Delegating, run_delegations
from swarmkit._run._limits import apply_refusal_policy, continuation, may_hand_off, refusal
from swarmkit._run._mapping import mapped_payload
from swarmkit._run._offers import not_offered
from swarmkit._run._output import accept_answer, after_tool_calls
from swarmkit._run._request import build_request, offered_tools
from swarmkit._run._state import (
    Candidate,
    Interrupted,
    RunState,
    StopRun,
    build_result,
    finish_reason,
    finished_data,
    record_data,
    rule_state,
    run_context,
)
from swarmkit._run._steps import Answered, Continued, HandedOff, HandoffOutcome, Refused, Step
from swarmkit.events import RefusalReason
from swarmkit.exceptions import (
    HandoffPayloadError,
    InputFilterError,
    JournalError,
    ModelError,
    ReplayDivergenceError,
)
from swarmkit.filters import HandoffInput, apply_filter
from swarmkit.graph import Edge
from swarmkit.handoffs import HandoffRequest
from swarmkit.interrupts import Decision, Edit, PendingDecision, Reject
from swarmkit.journal._codec import json_safe
from swarmkit.journal._digest import RequestHistory
from swarmkit.journal._tape import StepWriter, with_history
from swarmkit.limits import LimitBreach
from swarmkit.messages import ToolCall, ToolMessage, UserMessage
from swarmkit.models import (
    AttemptDiscarded,
    ModelRequest,
    ModelResponse,
    StreamingModel,
    Usage,
    provider_of,
)
from swarmkit.models import TextDelta as ModelTextDelta
from swarmkit.plan import AgentPlan
from swarmkit.result import DecidedBy, HandoffRecord, RuleDecision
from swarmkit.spec import RunSeams, SwarmSpec
from swarmkit.tools import ToolOutcome


class RunLoop:
    """Drives one run of a swarm and yields its events; ``events()`` ends with RunFinished.

    A ``quiet`` loop is read by nobody but for its result (a run or replay with no observer):
    it builds no per-step events (model call started and finished, tool called and
    resulted); every other event, and everything the run journals, is the same.

    Each step of the active agent: consult the HandoffGraph (a match hands off with no model
    call); otherwise call the model; run the tool calls it made, then take at most one of the
    handoffs it asked for; an answer in plain text ends the run. Every step goes through the
    step writer, which journals it, or serves it back when replaying. The loop reaches the world
    only through the spec's models and its seams (tool runner, decision source, runtime).
    """

    def __init__(
        self,
        swarm: SwarmSpec,
        state: RunState,
        tape: StepWriter,
        seams: RunSeams,
        *,
        streaming: bool,
        quiet: bool = False,
    ) -> None:
        self._swarm = swarm
        self._state = state
        self._tape = tape
        self._seams = seams
        self._streaming = streaming
        self._quiet = quiet
        # Limits that are not configured cost nothing: with neither usage limits nor time
        # limits, a live step skips their checks (a replay still asks the journal for stops).
        self._limits = swarm.usage_limits
        self._timed = swarm.run_timeout is not None or swarm.agent_timeout is not None
        self._limited = self._limits is not None or self._timed

    async def events(self) -> AsyncGenerator[ev.Event, None]:
        """Run to the end, yielding every event exactly once."""
        state = self._state
        budget.start_run(self._swarm, state, self._seams.runtime.clock())
        await self._tape.note("run_started", self._start_data())
        yield ev.RunStarted(
            session_id=state.session_id,
            prompt=state.prompt,
            entry_agent=state.agent,
            replay=self._tape.replaying,
            next_turn=state.start.decision if state.start else None,
        )
        self._log("run_started")
        pending: PendingDecision | None = None
        error: BaseException | None = None
        try:
            yield await self._enter(state.agent)
            async for event in self._drive():
                yield event
            reason = finish_reason(state)
        except StopRun as stop:
            reason = stop.reason
        except Interrupted as pause:
            reason, pending = "interrupted", pause.pending
        except (ModelError, InputFilterError) as exc:
            reason, error = "error", exc
        except (ReplayDivergenceError, JournalError):
            # The journal failed or holds what cannot be read: writing the end to it would
            # only bury the real cause under a second error.
            raise
        except Exception as exc:
            # A limit's "error" policy or a tool set to raise: journal the end, then raise.
            await self._tape.note("run_finished", {"stop_reason": "error", "error": repr(exc)})
            await self._tape.close()
            raise
        except (KeyboardInterrupt, asyncio.CancelledError):
            await self._note_cancelled()
            raise
        except BaseException:
            await self._tape.abandon()
            raise
        result = build_result(state, reason, error, pending)
        await self._tape.note("run_finished", finished_data(result))
        await self._tape.close()
        self._log("run_finished", stop_reason=reason)
        yield ev.RunFinished(result=result)

    async def _note_cancelled(self) -> None:
        """Ctrl-C or a cancelled task: journal the end as interrupted and ``cancelled`` (no
        decision pending), so the session is not left open and resume simply continues it."""
        if not self._tape.replaying:
            data = finished_data(build_result(self._state, "interrupted", None, None))
            await self._tape.note("run_finished", {**data, "cancelled": True})
        await self._tape.abandon()

    def _log(self, event: str, **fields: Any) -> None:
        """A structlog event with the session, the active agent and the turn bound."""
        state = self._state
        bound: dict[str, Any] = {
            "session_id": state.session_id,
            "agent": state.agent,
            "turn": state.turns,
        }
        log("swarmkit.run", event, **bound, **fields)

    def _start_data(self) -> dict[str, Any]:
        state = self._state
        return {
            "prompt": state.prompt,
            "context": json_safe(state.context),
            "entry_agent": state.agent,
            "fingerprint": dict(self._swarm.fingerprint),
            **(start_data(state.start) if state.start else {}),
        }

    async def _drive(self) -> AsyncIterator[ev.Event]:
        # The common step (no spent budget, no rules, no streaming) passes through no nested
        # generator: each layer would cost every event of every step one more resumption.
        while True:
            plan = self._swarm.plans[self._state.agent]
            before: HandedOff | Continued = Continued()
            if continuation(self._state, plan) is not None:
                before = await self._continue_when_spent(plan)
            if not isinstance(before, HandedOff) and self._has_rules(plan):
                before = await self._consult_rules(plan)
            for event in before.events:
                yield event
            if isinstance(before, HandedOff):
                continue
            call = await self._start_call(plan)
            if call.started is not None:
                yield call.started
            try:
                response = await self._tape.replayed_response(
                    plan.name, call.turn, call.request, call.history
                )
            finally:
                # Counted once the call is under way (a journaled failure counts too), not
                # while its record is reached: the state history shows states between steps.
                self._count_call(call)
            if response is None and not self._timed and not self._streams(plan):
                response = await self._plain_call(plan, call)
            elif response is None:
                async for item in self._live_call(plan, call):
                    if isinstance(item, ModelResponse):
                        response = item
                    else:
                        yield item
                assert response is not None
            response = await self._take_response(plan, response)
            if not self._quiet:
                yield _call_finished(plan, call.turn, response)
            step: Step
            if response.message.tool_calls:
                async for event in self._run_tool_calls(plan, response.message.tool_calls):
                    yield event
                after_tool_calls(self._state, response)
                step = HandedOff() if self._state.agent != plan.name else Continued()
            else:
                step = await self._answer_step(plan, response)
            match step:
                case Answered():
                    return
                case HandedOff() | Continued():
                    continue
                case _:
                    assert_never(step)

    async def _answer_step(self, plan: AgentPlan, response: ModelResponse) -> Step:
        """An answer in text (or typed) ends the run, unless it is sent back or a person
        rejects it."""
        accepted = await accept_answer(self._tape, self._state, plan, response)
        if accepted and await self._answer_stands(plan):
            return Answered()
        return Continued()

    # -- rules ---------------------------------------------------------------------------

    async def _continue_when_spent(self, plan: AgentPlan) -> HandedOff | Continued:
        """Seed 001: an agent whose handoff budget is spent continues to its ``then`` agent."""
        target = continuation(self._state, plan)
        if target is None:
            return Continued()
        request = HandoffRequest(target=target, payload=None, message=None)
        outcome = await self._try_handoff(plan, request, "budget")
        if isinstance(outcome, Refused):
            return Continued((outcome.event,))
        return outcome

    def _has_rules(self, plan: AgentPlan) -> bool:
        graph = self._swarm.graph
        return graph is not None and plan.name in graph and bool(graph.edges(plan.name))

    async def _consult_rules(self, plan: AgentPlan) -> HandedOff | Continued:
        graph = self._swarm.graph
        if graph is None or not self._has_rules(plan):
            return Continued()
        if not may_hand_off(
            self._swarm,
            self._state,
            plan,
            had_options=lambda: graph.route_edge(plan.name, rule_state(self._state)) is not None,
        ):
            return Continued()
        edge = graph.route_edge(plan.name, rule_state(self._state))
        evaluated = ev.RuleEvaluated(
            agent=plan.name,
            target=edge.target if edge else None,
            condition=edge.when if edge else None,
        )
        if edge is None:
            return Continued((evaluated,))
        turn = self._state.turns
        # Journaled before the handoff it causes, so the journal reads in the order of events.
        fired = {"agent": plan.name, "target": edge.target, "condition": edge.when, "turn": turn}
        await self._tape.note("rule", fired)
        request = self._rule_request(plan, edge)
        outcome: HandoffOutcome
        if isinstance(request, HandoffPayloadError):
            # The mapped payload does not validate: recorded, and the model decides instead.
            outcome = Refused(
                await self._refuse(plan, edge.target, "rule", "payload", str(request))
            )
        else:
            outcome = await self._try_handoff(plan, request, "rule", condition=edge.when)
        decision = RuleDecision(
            agent=plan.name,
            target=edge.target,
            condition=edge.when,
            turn=turn,
            performed=isinstance(outcome, HandedOff),
        )
        self._state.rules.append(decision)
        if isinstance(outcome, HandedOff):
            return HandedOff((evaluated, *outcome.events))
        return Continued((evaluated, outcome.event))

    def _rule_request(self, plan: AgentPlan, edge: Edge) -> HandoffRequest | HandoffPayloadError:
        if edge.input_mapping is None:
            return HandoffRequest(target=edge.target, payload=None, message=None)
        payload = mapped_payload(edge.input_mapping, self._state)
        return replies.goto_request(plan, "", edge.target, payload)

    # -- model ---------------------------------------------------------------------------

    async def _start_call(self, plan: AgentPlan) -> _Call:
        """Check the limits and build the request (the turn's number), before the model is
        asked."""
        state = self._state
        replaying = self._tape.replaying
        if self._limited or replaying:
            await self._within_limits(budget.before_call(self._swarm, state))
            replaying = self._tape.replaying
        # The history goes to the tape by reference: a replayed step never copies it.
        request = await build_request(self._swarm, state, plan, head_only=replaying)
        if self._limits is not None:
            request = budget.shaped(self._swarm, state, request)
        history = RequestHistory(view=state.view, items=state.own_items, count=len(state.own_items))
        turn = state.turns + 1
        started = None if self._quiet else _call_started(plan, turn)
        return _Call(request=request, history=history, turn=turn, started=started)

    def _count_call(self, call: _Call) -> None:
        self._state.turns = call.turn
        self._state.spend.add(model_calls=1)

    def _streams(self, plan: AgentPlan) -> bool:
        return self._streaming and isinstance(plan.model, StreamingModel)

    async def _plain_call(self, plan: AgentPlan, call: _Call) -> ModelResponse:
        """Ask the model with no time limit and no stream (the common live call): no generator
        in between; journal the answer."""
        request = with_history(call.request, call.history) if self._tape.replaying else call.request
        try:
            response = await plan.model.respond(request)
        except ModelError as exc:
            self._tape.record_model_error(plan.name, call.turn, request, exc)
            raise
        self._tape.record_response(plan.name, call.turn, request, response)
        return response

    async def _live_call(
        self, plan: AgentPlan, call: _Call
    ) -> AsyncIterator[ev.Event | ModelResponse]:
        """Ask the model (the journal had no answer), within the time left; journal the answer."""
        request = with_history(call.request, call.history) if self._tape.replaying else call.request
        response: ModelResponse | None = None
        try:
            responding = self._respond(plan, request, call.turn)
            async for item in budget.bounded(self._time_left(), responding, last=_is_answer):
                if isinstance(item, ModelResponse):
                    response = item
                else:
                    yield item
        except ModelError as exc:
            self._tape.record_model_error(plan.name, call.turn, request, exc)
            raise
        except budget.Expired:
            await self._within_limits(self._expired())
        assert response is not None
        self._tape.record_response(plan.name, call.turn, request, response)
        yield response

    async def _take_response(self, plan: AgentPlan, response: ModelResponse) -> ModelResponse:
        """Count the answer's usage against the limits and add it, attributed, to the history."""
        state = self._state
        state.usage[plan.name] = state.usage.get(plan.name, Usage()) + response.usage
        if self._limited or self._tape.replaying:
            model_name = response.model or getattr(plan.model, "name", plan.name)
            await self._within_limits(
                budget.after_answer(self._swarm, state, str(model_name), response.usage)
            )
        message = replies.attributed(response.message, plan.name)
        state.append(message)
        if message.content:
            state.last_text = message.content
        if message is response.message:
            return response
        return ModelResponse(
            message=message,
            usage=response.usage,
            finish_reason=response.finish_reason,
            model=response.model,
        )

    async def _respond(
        self, plan: AgentPlan, request: ModelRequest, turn: int
    ) -> AsyncIterator[ev.Event | ModelResponse]:
        model = plan.model
        if not (self._streaming and isinstance(model, StreamingModel)):
            yield await model.respond(request)
            return
        async for item in model.stream(request):
            if isinstance(item, ModelResponse):
                yield item
            elif isinstance(item, ModelTextDelta):
                yield ev.TextDelta(agent=plan.name, text=item.text)
            elif isinstance(item, AttemptDiscarded):
                yield ev.ModelAttemptDiscarded(
                    agent=plan.name, turn=turn, attempt=item.attempt, reason=item.reason
                )

    # -- time and usage limits -----------------------------------------------------------

    def _time_left(self) -> float | None:
        if not self._timed:
            return None
        return budget.time_left(self._swarm, self._state, self._seams.runtime.clock())

    def _expired(self) -> LimitBreach | None:
        now = self._seams.runtime.clock()
        return budget.time_breach(self._swarm, self._state, now, expired=True)

    async def _within_limits(self, breach: LimitBreach | None) -> None:
        """Stop the run at a breach (the one given, else a time limit that ran out).

        A replay takes its stops from the journal, not from the limits or the clock (a replay
        runs in no time at all), so it stops exactly where the recorded run stopped, and
        passes a stop that a resume went on from; live steps are held to the limits.
        """
        held = self._tape.held_stop()
        if held is not None:
            breach = LimitBreach.from_data(held.data) if held.data is not None else None
        elif breach is None and self._timed:
            breach = budget.time_breach(self._swarm, self._state, self._seams.runtime.clock())
        if breach is None:
            return
        state = self._state
        state.limit = breach
        await self._tape.note("limit_reached", breach.to_data())
        self._log("limit_reached", limit=breach.limit, allowed=breach.allowed, used=breach.used)
        raise StopRun(breach.stop_reason)

    # -- tools ---------------------------------------------------------------------------

    async def _run_tool_calls(
        self, plan: AgentPlan, calls: tuple[ToolCall, ...]
    ) -> AsyncIterator[ev.Event]:
        """Function tools run first, in order; then at most one handoff is taken."""
        results: dict[str, ToolMessage] = {}
        candidates: list[Candidate] = []
        delegations: list[ToolCall] = []
        for call in calls:
            if call.name in self._state.withheld:
                results[call.id] = replies.not_offered(call)
                yield replies.tool_resulted(plan.name, results[call.id])
            elif call.name in plan.tools:
                if not self._quiet:
                    yield ev.ToolCalled(
                        agent=plan.name,
                        tool_call_id=call.id,
                        name=call.name,
                        arguments=call.arguments,
                    )
                resulted = await self._run_function_tool(plan, call, results, candidates)
                if resulted is not None:
                    yield resulted
            elif call.name in plan.delegates:
                delegations.append(call)
            elif _is_handoff_call(plan, call):
                candidates.append(Candidate(call=call, decided_by="llm"))
            else:
                offered = offered_tools(self._swarm, self._state, plan)
                results[call.id] = replies.unknown_tool(call, offered)
                yield replies.tool_resulted(plan.name, results[call.id])
        if delegations:
            async for event in self._run_delegations(plan, delegations, results):
                yield event
        if candidates:
            async for event in self._take_one_handoff(plan, candidates, results):
                yield event
        for call in calls:
            self._state.append(results[call.id])
        if self._state.agent != plan.name:
            await self._enter_view(plan)

    async def _run_function_tool(
        self,
        plan: AgentPlan,
        call: ToolCall,
        results: dict[str, ToolMessage],
        candidates: list[Candidate],
    ) -> ev.ToolResulted | None:
        """Run one function tool (its ToolCalled already yielded); the result's event."""
        outcome, arguments, decision = await self._invoke(plan, call)
        state = self._state
        state.last_tool, state.last_tool_ok = call.name, not outcome.is_error
        result = outcome.result
        if result is not None and result.update:
            state.context.update(result.update)
        content, is_error = outcome.content, outcome.is_error
        if result is not None and result.ask is not None:
            content, is_error = await self._ask(plan, call, result.ask)
        state.last_tool_output = content
        results[call.id] = ToolMessage(
            tool_call_id=call.id, name=call.name, content=content, is_error=is_error
        )
        if outcome.is_error:
            self._log("tool_failed", tool=call.name)
        resulted = None
        if not self._quiet:
            resulted = replies.tool_resulted(plan.name, results[call.id])
            if decision is not None:
                resulted = replies.with_decision(resulted, call, arguments, decision)
        if result is None or result.goto is None:
            return resulted
        request = replies.goto_request(plan, call.id, result.goto, result.payload)
        if isinstance(request, HandoffPayloadError):
            results[call.id] = replies.with_note(results[call.id], str(request))
            return resulted
        candidates.append(
            Candidate(call=call, decided_by="tool", request=request, tool_content=outcome.content)
        )
        return resulted

    async def _run_delegations(
        self, plan: AgentPlan, calls: list[ToolCall], results: dict[str, ToolMessage]
    ) -> AsyncIterator[ev.Event]:
        state, tape = self._state, self._tape
        how = Delegating(quiet=self._quiet, streaming=self._streaming)
        async for item in run_delegations(plan, calls, state, tape, self._seams, how=how):
            if not isinstance(item, tuple):
                yield item
                continue
            call, outcome = item
            state.last_tool, state.last_tool_ok = call.name, not outcome.is_error
            results[call.id] = ToolMessage(
                tool_call_id=call.id,
                name=call.name,
                content=outcome.content,
                is_error=outcome.is_error,
            )
            yield replies.tool_resulted(plan.name, results[call.id])

    async def _ask(self, plan: AgentPlan, call: ToolCall, question: str) -> tuple[str, bool]:
        """A tool's question for a person: the run pauses, and the answer is the result."""
        pending = PendingDecision(
            kind="question", agent=plan.name, tool_name=call.name, payload={"question": question}
        )
        return replies.answer_of(await self._pause_point(pending))

    async def _answer_stands(self, plan: AgentPlan) -> bool:
        """With ``interrupt_after``, a person approves, edits or rejects the agent's answer."""
        if plan.name not in self._swarm.interrupt_after:
            return True
        state = self._state
        pending = PendingDecision(
            kind="answer", agent=plan.name, payload={"output": state.last_text or ""}
        )
        decision = await self._pause_point(pending)
        if isinstance(decision, Reject):
            state.append(UserMessage(content=decision.reason))  # the agent answers again
            return False
        if isinstance(decision, Edit):
            state.last_text = str(decision.payload.get("output", state.last_text))
        return True

    async def _invoke(
        self, plan: AgentPlan, call: ToolCall
    ) -> tuple[ToolOutcome, str, Decision | None]:
        """Run a function tool (after a person's approval when it needs one): its outcome, the
        arguments it ran with, and the person's decision."""
        function = plan.tools[call.name]
        arguments = call.arguments
        decision: Decision | None = None
        if function.needs_approval:
            decision = await self._pause_point(replies.tool_pending(plan, call))
            if isinstance(decision, Reject):
                return replies.rejected_outcome(decision), arguments, decision
            if isinstance(decision, Edit):
                arguments = json.dumps(dict(decision.payload))
        if self._limited or self._tape.replaying:
            await self._within_limits(budget.before_tool_call(self._swarm, self._state))
        else:
            self._state.tool_calls += 1
        outcome = await self._tape.replayed_outcome(plan.name, call, arguments)
        if outcome is None:
            state = self._state
            key = f"{state.session_id}:{state.turns}:{call.id}"
            context = run_context(state, idempotency_key=key)
            invoked = self._seams.tool_runner.invoke(function, arguments, context)
            try:
                outcome = await budget.within(self._time_left(), invoked)
            except budget.Expired:
                await self._within_limits(self._expired())
                raise
            self._tape.record_outcome(plan.name, call, outcome, decision, arguments)
        return outcome, arguments, decision

    # -- handoffs ------------------------------------------------------------------------

    async def _take_one_handoff(
        self, plan: AgentPlan, candidates: list[Candidate], results: dict[str, ToolMessage]
    ) -> AsyncIterator[ev.Event]:
        """The first valid handoff call is the turn's; every later one is told it was not."""
        taken: str | None = None
        for candidate in candidates:
            call = candidate.call
            if taken is not None:
                detail = f"not taken: only one handoff per turn, and {taken!r} was taken first"
                results[call.id] = replies.handoff_result(candidate, detail, is_error=True)
                target = replies.candidate_target(plan, candidate)
                yield await self._refuse(plan, target, candidate.decided_by, "not_taken", detail)
                continue
            request = _parse(plan, candidate)
            if isinstance(request, HandoffPayloadError):
                results[call.id] = replies.payload_error(call, request)
                yield replies.tool_resulted(plan.name, results[call.id])
                continue
            taken = request.target
            outcome = await self._try_handoff(plan, request, candidate.decided_by)
            refused = outcome.event if isinstance(outcome, Refused) else None
            detail = replies.handoff_detail(request, refused)
            results[call.id] = replies.handoff_result(candidate, detail, is_error=bool(refused))
            for event in outcome.events if isinstance(outcome, HandedOff) else (outcome.event,):
                yield event

    async def _try_handoff(
        self,
        plan: AgentPlan,
        request: HandoffRequest,
        decided_by: DecidedBy,
        *,
        condition: str | None = None,
    ) -> HandoffOutcome:
        """Perform a handoff or refuse it."""
        refused = refusal(
            self._swarm, self._state, plan, request.target, continuation=decided_by == "budget"
        )
        refused = refused or not_offered(self._state, request.target, decided_by)
        if refused is None:
            decision = await self._handoff_decision(plan, request, decided_by)
            if isinstance(decision, Reject):
                refused = "rejected", f"a human rejected the handoff: {decision.reason}"
            elif isinstance(decision, Edit):
                request = replies.edited(plan, request, decision)
        if refused is None:
            refused = await handoff_callback(self._tape, self._state, plan, request)
        if refused is not None:
            reason, detail = refused
            return Refused(await self._refuse(plan, request.target, decided_by, reason, detail))
        return await self._perform(plan, request, decided_by, condition)

    async def _handoff_decision(
        self, plan: AgentPlan, request: HandoffRequest, decided_by: DecidedBy
    ) -> Decision | None:
        swarm = self._swarm
        asked = swarm.interrupt_on_handoff or plan.name in swarm.interrupt_after
        if not (asked or request.target in swarm.interrupt_before):
            return None
        pending = PendingDecision(
            kind="handoff",
            agent=plan.name,
            target=request.target,
            payload=request.payload.model_dump(mode="json") if request.payload else None,
            decided_by=decided_by,
        )
        return await self._pause_point(pending)

    async def _pause_point(self, pending: PendingDecision) -> Decision:
        """The decision for a pause point, or pause the run when nobody has decided yet."""
        decision = await self._tape.interrupt(asdict(pending))
        if decision is None:
            decision = await self._seams.decisions.decide(pending)
            if decision is None:
                raise Interrupted(pending)
            self._tape.record_decision(decision)
        return decision

    async def _refuse(
        self,
        plan: AgentPlan,
        target: str,
        decided_by: DecidedBy,
        reason: RefusalReason,
        detail: str,
    ) -> ev.HandoffRefused:
        state = self._state
        state.refusals.append(detail)
        await self._tape.note(
            "handoff_refused",
            {
                "source": plan.name,
                "target": target,
                "decided_by": decided_by,
                "reason": reason,
                "detail": detail,
            },
        )
        self._log(
            "handoff_refused",
            source=plan.name,
            target=target,
            reason=reason,
        )
        apply_refusal_policy(self._swarm, state, reason, target)
        return ev.HandoffRefused(
            source=plan.name, target=target, decided_by=decided_by, reason=reason, detail=detail
        )

    async def _perform(
        self,
        plan: AgentPlan,
        request: HandoffRequest,
        decided_by: DecidedBy,
        condition: str | None,
    ) -> HandedOff:
        state = self._state
        payload = request.payload.model_dump(mode="json") if request.payload else None
        record = HandoffRecord(
            source=plan.name,
            target=request.target,
            decided_by=decided_by,
            turn=state.turns,
            number=state.handoff_count + 1,
            payload=payload,
            payload_type=type(request.payload).__name__ if request.payload else None,
            message=request.message,
            condition=condition,
        )
        await self._tape.note("handoff", record_data(record))
        state.handoffs.append(record)
        state.used_by_agent[plan.name] += 1
        state.previous_agent, state.agent = plan.name, request.target
        state.payload, state.handoff_message = request.payload, request.message
        self._log(
            "handoff_performed",
            source=plan.name,
            target=request.target,
            decided_by=decided_by,
        )
        performed = ev.HandoffPerformed(
            source=plan.name,
            target=request.target,
            decided_by=decided_by,
            payload=payload,
            payload_type=record.payload_type,
            message=request.message,
            condition=condition,
            number=record.number,
        )
        return HandedOff((performed, await self._enter(request.target)))

    async def _enter(self, agent: str) -> ev.AgentStarted:
        state = self._state
        if not state.trail and agent in self._swarm.interrupt_before:
            await self._pause_point(PendingDecision(kind="agent", agent=agent, target=agent))
        state.trail.append(agent)
        state.visits[agent] += 1
        state.agent_started_at = self._seams.runtime.clock()
        started = ev.AgentStarted(
            agent=agent,
            sub_session_id=f"{state.session_id}__swarm_{agent}_{state.handoff_count}",
            handoff_count=state.handoff_count,
            provider=provider_of(self._swarm.plans[agent].model),
        )
        await self._tape.note(
            "agent_started",
            {
                "agent": agent,
                "handoff_count": started.handoff_count,
                "sub_session_id": started.sub_session_id,
            },
        )
        return started

    async def _enter_view(self, source: AgentPlan) -> None:
        """Compute what the new active agent sees, through its input filter."""
        state = self._state
        target = state.agent
        config = source.handoff_configs.get(target) or self._swarm.peer_handoffs.get(target)
        history = tuple(state.transcript)
        if config is not None and config.input_filter is not None:
            data = HandoffInput(
                history=history,
                new_items=tuple(state.own_items),
                payload=state.payload,
                message=state.handoff_message,
                source=source.name,
                target=target,
            )
            state.view = await apply_filter(config.input_filter, data)
        elif self._swarm.pass_full_history:
            state.view = history
        else:
            state.view = (replies.latest_user_message(history, state.prompt),)
        memory = self._swarm.plans[target].agent.memory
        if memory == "own":
            state.view = with_own_memory(history, target, state.view)
        elif memory == "none" and state.start is not None:
            state.view = this_turn_only(state.view, state.start)
        state.own_items = []


@dataclass(frozen=True, kw_only=True, slots=True)
class _Call:
    """One model call while it is under way."""

    request: ModelRequest
    """The request (only its system message when replaying: the history is ``history``)."""
    history: RequestHistory
    """The history the request carries, held by reference."""
    turn: int
    """The run's turn this call is."""
    started: ev.ModelCallStarted | None
    """Its start, as streamed (None in a quiet loop)."""


def _call_started(plan: AgentPlan, turn: int) -> ev.ModelCallStarted:
    return ev.ModelCallStarted(
        agent=plan.name,
        turn=turn,
        model=_text_attribute(plan.model, "name"),
        provider=provider_of(plan.model),
    )


def _call_finished(plan: AgentPlan, turn: int, response: ModelResponse) -> ev.ModelCallFinished:
    return ev.ModelCallFinished(
        agent=plan.name,
        turn=turn,
        usage=response.usage,
        finish_reason=response.finish_reason,
        response_model=response.model,
        content=response.message.content,
    )


def _is_answer(item: ev.Event | ModelResponse) -> bool:
    return isinstance(item, ModelResponse)


def _text_attribute(model: object, name: str) -> str | None:
    value = getattr(model, name, None)
    return value if isinstance(value, str) else None


def _is_handoff_call(plan: AgentPlan, call: ToolCall) -> bool:
    legacy = plan.legacy
    return call.name in plan.transfers or (legacy is not None and call.name == legacy.name)


def _parse(plan: AgentPlan, candidate: Candidate) -> HandoffRequest | HandoffPayloadError:
    if candidate.request is not None:
        return candidate.request
    call = candidate.call
    try:
        if call.name in plan.transfers:
            return plan.transfers[call.name].parse(call.arguments, tool_call_id=call.id)
        assert plan.legacy is not None
        return plan.legacy.parse(call.arguments, tool_call_id=call.id)
    except HandoffPayloadError as exc:
        return exc
