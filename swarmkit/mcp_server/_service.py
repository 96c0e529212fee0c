"""The service behind a served swarm's MCP server: who calls, what a call runs, how a paused
run gets its decision."""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from swarmkit.exceptions import ConfigurationError, SwarmkitError
from swarmkit.interrupts import Decision, approve, reject
from swarmkit.journal import Journal
from swarmkit.mcp_server._tools import (
    DECIDE_TOOL,
    FORM_SCHEMA,
    DecideArguments,
    DecisionForm,
    Entry,
    describe,
    entries_of,
    error_result,
    finished,
    problems,
    question_of,
    waiting,
)
from swarmkit.redaction import Redactor
from swarmkit.result import RunResult
from swarmkit.serving import CALLER, PRINCIPAL_KEY, decision_from_request
from swarmkit.swarm import Swarm

DECIDER = "decider"
"""The principal an McpServer's ``decision_token`` names."""
LOCAL = "local"
"""The principal of a call without an HTTP request (stdio, in process)."""
SESSION_PREFIX = "mcp-"
"""What a served call's session id starts with, before its owner and a random id."""
ENABLE_DECISIONS = (
    "deciding a paused run over MCP needs the decision permission: serve with "
    "McpServer(decision_token=...) and call with that token, or on stdio with "
    "allow_decisions=True (swarmkit serve mcp --allow-decisions)"
)
"""What a refused decision says: how a server lets a caller decide."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Caller:
    """Who makes a call: the journal's name for it, whose sessions it sees, whether it decides."""

    name: str
    """The principal, journaled as ``mcp:<name>`` when it decides."""
    owner: str
    """The principal whose sessions it starts and decides."""
    decides: bool
    """Whether it may decide a paused run."""


class Service:
    """What a served swarm does with MCP requests: list its tools, run and decide calls."""

    def __init__(
        self,
        swarm: Swarm,
        journal: Journal,
        entries: Sequence[str] | None,
        *,
        local_decides: bool,
        decisions: bool,
    ) -> None:
        if not isinstance(journal, Journal):
            raise ConfigurationError("an MCP server needs a Journal: every call is journaled")
        self.swarm = swarm
        self.journal = journal
        self.entries = {e.tool: e for e in entries_of(swarm, entries)}
        self.local_decides = local_decides
        """Whether a caller without an HTTP request (stdio, in process) may decide."""
        self.decisions = decisions
        """Whether anyone may decide here (the decide tool is listed)."""
        self.redactor = Redactor.of(swarm.config.redact_keys)

    def tools(self) -> list[types.Tool]:
        """A tool per entry, and the decide tool when decisions are enabled."""
        listed = [
            types.Tool(
                name=entry.tool,
                description=describe(self.swarm, entry.agent),
                input_schema=entry.arguments.model_json_schema(),
            )
            for entry in self.entries.values()
        ]
        if self.decisions:
            listed.append(
                types.Tool(
                    name=DECIDE_TOOL,
                    description="Decide a run that paused for a person, by its session id.",
                    input_schema=DecideArguments.model_json_schema(),
                )
            )
        return listed

    async def call(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Run a call, or take the decision it carries; an unknown tool is a protocol error."""
        caller = self._caller(ctx)
        if params.name == DECIDE_TOOL and self.decisions:
            return await self._decide_tool(ctx, caller, params.arguments or {})
        entry = self.entries.get(params.name)
        if entry is None:
            known = ", ".join([*self.entries, *([DECIDE_TOOL] if self.decisions else [])])
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}; tools: {known}"
            )
        if params.request_state is not None:
            return await self._answered_form(ctx, caller, params)
        try:
            arguments = entry.arguments.model_validate(params.arguments or {})
        except ValidationError as exc:
            return error_result(f"the arguments of {entry.tool} do not validate: {problems(exc)}")
        return await self._start(ctx, caller, entry, arguments)

    async def _start(
        self,
        ctx: ServerRequestContext[Any, Any],
        caller: Caller,
        entry: Entry,
        arguments: BaseModel,
    ) -> types.CallToolResult | types.InputRequiredResult:
        data = arguments.model_dump(mode="json")
        prompt = data.pop("prompt")
        session_id = f"{SESSION_PREFIX}{caller.owner}-{secrets.token_hex(8)}"
        start = entry.agent if entry.agent != self.swarm.entry_agent else None
        try:
            result = await self.swarm.run(
                prompt,
                context=data or None,
                session_id=session_id,
                journal=self.journal,
                start_agent=start,
            )
        except (SwarmkitError, ValueError) as exc:
            return error_result(f"the run did not start: {exc}")
        return await self._answer(ctx, caller, result)

    async def _answer(
        self, ctx: ServerRequestContext[Any, Any], caller: Caller, result: RunResult
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The call's answer: the output, a request for the decision, or why the run stopped."""
        if result.stop_reason != "interrupted" or result.pending is None:
            return finished(result)
        pending = self.redactor.value(dataclasses.asdict(result.pending))
        question = question_of(result.session_id, pending)
        if not (caller.decides and can_elicit(ctx)):
            return waiting(result.session_id, question, self._how(caller), pending)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            form = types.ElicitRequestFormParams(message=question, requested_schema=FORM_SCHEMA)
            return types.InputRequiredResult(
                input_requests={"decision": types.ElicitRequest(params=form)},
                request_state=json.dumps({"session_id": result.session_id}),
            )
        answer = await ctx.session.elicit_form(question, FORM_SCHEMA, ctx.request_id)
        return await self._take_form(ctx, caller, result.session_id, answer)

    async def _answered_form(
        self,
        ctx: ServerRequestContext[Any, Any],
        caller: Caller,
        params: types.CallToolRequestParams,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """A retried call carrying the elicitation's answer: resume the session it names."""
        state = json.loads(params.request_state or "{}")
        answer = (params.input_responses or {}).get("decision")
        if not isinstance(answer, types.ElicitResult):
            raise MCPError(
                code=types.INVALID_PARAMS,
                message='the retried call needs the "decision" elicitation answer',
            )
        return await self._take_form(ctx, caller, str(state.get("session_id")), answer)

    async def _take_form(
        self,
        ctx: ServerRequestContext[Any, Any],
        caller: Caller,
        session_id: str,
        answer: types.ElicitResult,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Resume with the person's answer; a dismissed form leaves the run waiting."""
        if answer.action == "cancel":
            return waiting(session_id, "The decision was dismissed.", self._how(caller))
        if answer.action == "decline":
            return await self._resume(ctx, caller, session_id, reject("declined"))
        try:
            form = DecisionForm.model_validate(answer.content or {})
        except ValidationError as exc:
            return waiting(
                session_id, f"The answer is not a decision: {problems(exc)}.", self._how(caller)
            )
        if form.decision == "approve":
            return await self._resume(ctx, caller, session_id, approve())
        decision = reject(form.reason) if form.reason.strip() else reject()
        return await self._resume(ctx, caller, session_id, decision)

    async def _decide_tool(
        self, ctx: ServerRequestContext[Any, Any], caller: Caller, arguments: Mapping[str, Any]
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            given = DecideArguments.model_validate(arguments)
        except ValidationError as exc:
            return error_result(f"the arguments of {DECIDE_TOOL} do not validate: {problems(exc)}")
        decision = decision_from_request(given.model_dump(exclude_none=True))
        if decision is None:
            return error_result('an edit decision needs "payload": a JSON object')
        return await self._resume(ctx, caller, given.session_id, decision)

    async def _resume(
        self,
        ctx: ServerRequestContext[Any, Any],
        caller: Caller,
        session_id: str,
        decision: Decision,
    ) -> types.CallToolResult | types.InputRequiredResult:
        if not caller.decides:
            return error_result(ENABLE_DECISIONS)
        if not session_id.startswith(f"{SESSION_PREFIX}{caller.owner}-"):
            return error_result(f"no paused session {session_id!r} of yours is served here")
        decided = dataclasses.replace(decision, by=f"mcp:{caller.name}")
        try:
            result = await self.swarm.resume(session_id, self.journal, decision=decided)
        except (SwarmkitError, ValueError) as exc:
            return error_result(f"the decision was not taken: {exc}")
        return await self._answer(ctx, caller, result)

    def _how(self, caller: Caller) -> str:
        """How the waiting run gets its decision, as the waiting result tells the caller."""
        if caller.decides:
            return f"call {DECIDE_TOOL} with this session_id and a decision"
        if self.decisions:
            return f"a caller with the decision token calls {DECIDE_TOOL} with this session_id"
        return ENABLE_DECISIONS

    def _caller(self, ctx: ServerRequestContext[Any, Any]) -> Caller:
        scope = getattr(ctx.request, "scope", None)
        if not isinstance(scope, Mapping) or PRINCIPAL_KEY not in scope:
            return Caller(name=LOCAL, owner=LOCAL, decides=self.local_decides)
        name = str(scope[PRINCIPAL_KEY])
        return Caller(name=name, owner=CALLER, decides=name == DECIDER)

    def principal(self, ctx: ServerRequestContext[Any, Any]) -> str:
        """The name a request-state token is bound to: a retry must come from the same one."""
        return self._caller(ctx).name


def can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)
