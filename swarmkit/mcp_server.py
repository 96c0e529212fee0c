"""swarmkit[mcp]: a swarm served over MCP, one tool per entry agent, each call a journaled session.

A tool's arguments are the entry's input: ``prompt`` and, when the swarm declares a
``context_type``, that model's fields beside it. A call runs the swarm as a new session
(``mcp-<owner>-<id>``) in the server's journal; its result is the final output (with
structured content when the answer is a Pydantic model).

A run that pauses for a person asks for the decision in the protocol's way: on a 2026-07-28
connection whose client can elicit, an ``input_required`` answer (an elicitation form); the
client retries the call with the answer and the run resumes. On an older connection that can
elicit, the form is sent during the call. Otherwise the call answers with a result whose
structured content says ``"status": "input_required"`` and names the session; the
``decide_paused_run`` tool resumes it. Deciding needs the decision permission (off by default:
a decision token over HTTP, ``allow_decisions`` on stdio); the journal records who decided.

The only other importer of ``mcp`` beside ``swarmkit.mcp``; ``import swarmkit`` never loads it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field, ValidationError, create_model

from swarmkit.exceptions import ConfigurationError, SwarmkitError
from swarmkit.interrupts import Decision, approve, reject
from swarmkit.journal import Journal
from swarmkit.redaction import Redactor
from swarmkit.result import RunResult
from swarmkit.serving import (
    CALLER,
    DEFAULT_MAX_REQUEST_BYTES,
    PRINCIPAL_KEY,
    ASGIApp,
    AsgiServer,
    decision_from_request,
)
from swarmkit.swarm import Swarm

__all__ = ["DECIDE_TOOL", "McpServer", "mcp_server", "serve_mcp_stdio"]

DECIDE_TOOL = "decide_paused_run"
"""The tool that decides a paused run by its session id (listed when decisions are enabled)."""
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

_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class _Entry:
    """One tool: the agent a call starts with and the arguments it takes."""

    tool: str
    """The tool's name."""
    agent: str
    """The agent the session starts with."""
    arguments: type[BaseModel]
    """``prompt`` and the context fields, validated by Pydantic."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class _Caller:
    """Who makes a call: the journal's name for it, whose sessions it sees, whether it decides."""

    name: str
    """The principal, journaled as ``mcp:<name>`` when it decides."""
    owner: str
    """The principal whose sessions it starts and decides."""
    decides: bool
    """Whether it may decide a paused run."""


class _DecideArguments(BaseModel):
    """The arguments of ``decide_paused_run``."""

    session_id: str = Field(description="The paused session, as the waiting result named it.")
    decision: Literal["approve", "reject", "edit"] = Field(description="What to do.")
    reason: str | None = Field(default=None, description="Why, for a reject.")
    payload: dict[str, Any] | None = Field(
        default=None, description="The edited payload (a JSON object), for an edit."
    )


class _DecisionForm(BaseModel):
    """What the elicitation form asks a person."""

    decision: Literal["approve", "reject"] = Field(description="approve or reject")
    reason: str = Field(default="", description="Why (for a reject)")


_FORM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["approve", "reject"], "title": "Decision"},
        "reason": {"type": "string", "title": "Reason (for a reject)"},
    },
    "required": ["decision"],
}


class _Service:
    """What a served swarm does with MCP requests: list its tools, run and decide calls."""

    def __init__(
        self, swarm: Swarm, journal: Journal, entries: Sequence[str] | None, local_decides: bool
    ) -> None:
        if not isinstance(journal, Journal):
            raise ConfigurationError("an MCP server needs a Journal: every call is journaled")
        self.swarm = swarm
        self.journal = journal
        self.entries = {e.tool: e for e in _entries(swarm, entries)}
        self.local_decides = local_decides
        self.redactor = Redactor.of(swarm.config.redact_keys)
        self.decisions = local_decides

    def tools(self) -> list[types.Tool]:
        listed = [
            types.Tool(
                name=entry.tool,
                description=_description(self.swarm, entry.agent),
                input_schema=entry.arguments.model_json_schema(),
            )
            for entry in self.entries.values()
        ]
        if self.decisions:
            listed.append(
                types.Tool(
                    name=DECIDE_TOOL,
                    description="Decide a run that paused for a person, by its session id.",
                    input_schema=_DecideArguments.model_json_schema(),
                )
            )
        return listed

    async def call(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
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
            return _error(f"the arguments of {entry.tool} do not validate: {_problems(exc)}")
        return await self._start(ctx, caller, entry, arguments)

    async def _start(
        self,
        ctx: ServerRequestContext[Any, Any],
        caller: _Caller,
        entry: _Entry,
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
            return _error(f"the run did not start: {exc}")
        return await self._answer(ctx, caller, result)

    async def _answer(
        self, ctx: ServerRequestContext[Any, Any], caller: _Caller, result: RunResult
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The call's answer: the output, a request for the decision, or why the run stopped."""
        if result.stop_reason != "interrupted" or result.pending is None:
            return _finished(result)
        pending = self.redactor.value(dataclasses.asdict(result.pending))
        question = _question(result.session_id, pending)
        if not (caller.decides and _can_elicit(ctx)):
            return _waiting_session(result.session_id, question, self._how(caller), pending)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            form = types.ElicitRequestFormParams(message=question, requested_schema=_FORM_SCHEMA)
            return types.InputRequiredResult(
                input_requests={"decision": types.ElicitRequest(params=form)},
                request_state=json.dumps({"session_id": result.session_id}),
            )
        answer = await ctx.session.elicit_form(question, _FORM_SCHEMA, ctx.request_id)
        return await self._take_form(ctx, caller, result.session_id, answer)

    async def _answered_form(
        self,
        ctx: ServerRequestContext[Any, Any],
        caller: _Caller,
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
        caller: _Caller,
        session_id: str,
        answer: types.ElicitResult,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Resume with the person's answer; a dismissed form leaves the run waiting."""
        if answer.action == "cancel":
            return _waiting_session(session_id, "The decision was dismissed.", self._how(caller))
        if answer.action == "decline":
            return await self._resume(ctx, caller, session_id, reject("declined"))
        try:
            form = _DecisionForm.model_validate(answer.content or {})
        except ValidationError as exc:
            return _waiting_session(
                session_id, f"The answer is not a decision: {_problems(exc)}.", self._how(caller)
            )
        if form.decision == "approve":
            return await self._resume(ctx, caller, session_id, approve())
        decision = reject(form.reason) if form.reason.strip() else reject()
        return await self._resume(ctx, caller, session_id, decision)

    async def _decide_tool(
        self, ctx: ServerRequestContext[Any, Any], caller: _Caller, arguments: Mapping[str, Any]
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            given = _DecideArguments.model_validate(arguments)
        except ValidationError as exc:
            return _error(f"the arguments of {DECIDE_TOOL} do not validate: {_problems(exc)}")
        decision = decision_from_request(given.model_dump(exclude_none=True))
        if decision is None:
            return _error('an edit decision needs "payload": a JSON object')
        return await self._resume(ctx, caller, given.session_id, decision)

    async def _resume(
        self,
        ctx: ServerRequestContext[Any, Any],
        caller: _Caller,
        session_id: str,
        decision: Decision,
    ) -> types.CallToolResult | types.InputRequiredResult:
        if not caller.decides:
            return _error(ENABLE_DECISIONS)
        if not session_id.startswith(f"{SESSION_PREFIX}{caller.owner}-"):
            return _error(f"no paused session {session_id!r} of yours is served here")
        decided = dataclasses.replace(decision, by=f"mcp:{caller.name}")
        try:
            result = await self.swarm.resume(session_id, self.journal, decision=decided)
        except (SwarmkitError, ValueError) as exc:
            return _error(f"the decision was not taken: {exc}")
        return await self._answer(ctx, caller, result)

    def _how(self, caller: _Caller) -> str:
        """How the waiting run gets its decision, as the waiting result tells the caller."""
        if caller.decides:
            return f"call {DECIDE_TOOL} with this session_id and a decision"
        if self.decisions:
            return f"a caller with the decision token calls {DECIDE_TOOL} with this session_id"
        return ENABLE_DECISIONS

    def _caller(self, ctx: ServerRequestContext[Any, Any]) -> _Caller:
        scope = getattr(ctx.request, "scope", None)
        if not isinstance(scope, Mapping) or PRINCIPAL_KEY not in scope:
            return _Caller(name=LOCAL, owner=LOCAL, decides=self.local_decides)
        name = str(scope[PRINCIPAL_KEY])
        return _Caller(name=name, owner=CALLER, decides=name == DECIDER)

    def principal(self, ctx: ServerRequestContext[Any, Any]) -> str:
        """The name a request-state token is bound to: a retry must come from the same one."""
        return self._caller(ctx).name


def mcp_server(
    swarm: Swarm,
    journal: Journal,
    *,
    entries: Sequence[str] | None = None,
    name: str | None = None,
    allow_decisions: bool = False,
) -> Server[Any]:
    """The MCP server (the mcp SDK's low-level ``Server``) that serves ``swarm``: one tool per
    agent in ``entries`` (by default the entry agent alone), each call journaled in
    ``journal``. ``allow_decisions`` lets a caller without an HTTP request (stdio, in process)
    decide a paused run; over HTTP the token decides (see McpServer). Serve it with
    ``serve_mcp_stdio`` or ``McpServer``, or connect ``mcp.Client`` to it in process."""
    service = _Service(swarm, journal, entries, allow_decisions)
    return _server(service, name or swarm.entry_agent)


def _server(service: _Service, name: str) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=service.tools())

    server: Server[Any] = Server(name, on_list_tools=list_tools, on_call_tool=service.call)
    security = RequestStateSecurity(keys=[os.urandom(32)], bind_principal=service.principal)
    server.middleware.append(RequestStateBoundary(security, default_audience=name))
    return server


async def serve_mcp_stdio(
    swarm: Swarm,
    journal: Journal,
    *,
    entries: Sequence[str] | None = None,
    name: str | None = None,
    allow_decisions: bool = False,
) -> None:
    """Serve ``swarm`` over MCP on this process's stdin and stdout until the client leaves
    (the keywords are ``mcp_server``'s)."""
    from mcp.server.stdio import stdio_server  # noqa: PLC0415 - only stdio needs it

    server = mcp_server(swarm, journal, entries=entries, name=name, allow_decisions=allow_decisions)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


class McpServer(AsgiServer):
    """Serves a swarm over MCP's streamable HTTP at ``<url>mcp`` on ``host:port`` (127.0.0.1
    and a free port by default).

    Every request needs ``Authorization: Bearer <token>``: pass ``token=`` or read the random
    one made here from ``.token``. Deciding a paused run needs ``decision_token=``: the
    principal ``decider`` decides the caller's runs (journaled as ``decided_by="mcp:decider"``);
    without one no caller can decide over MCP. A host that is not loopback needs
    ``allow_remote=True``. Use as ``async with McpServer(...) as server:``.
    """

    def __init__(
        self,
        swarm: Swarm,
        journal: Journal,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        decision_token: str | None = None,
        entries: Sequence[str] | None = None,
        name: str | None = None,
        allow_remote: bool = False,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ) -> None:
        service = _Service(swarm, journal, entries, local_decides=False)
        service.decisions = decision_token is not None
        self._manager = StreamableHTTPSessionManager(
            app=_server(service, name or swarm.entry_agent), stateless=True
        )
        endpoint = StreamableHTTPASGIApp(self._manager)

        def build(url: str) -> ASGIApp:
            return endpoint

        super().__init__(
            build,
            host=host,
            port=port,
            token=token or secrets.token_urlsafe(24),
            allow_remote=allow_remote,
            max_request_bytes=max_request_bytes,
            principals={DECIDER: decision_token} if decision_token is not None else None,
        )

    @property
    def mcp_url(self) -> str:
        """Where an MCP client connects (``http://host:port/mcp``)."""
        return f"{self.url}mcp"

    async def serve(self) -> None:
        """Serve until cancelled or ``close()``."""
        async with self._manager.run():
            await super().serve()

    async def __aenter__(self) -> McpServer:
        await super().__aenter__()
        return self


def _entries(swarm: Swarm, names: Sequence[str] | None) -> list[_Entry]:
    chosen = list(names) if names is not None else [swarm.entry_agent]
    if not chosen:
        raise ConfigurationError("entries must name at least one agent of the swarm")
    entries = [_entry(swarm, name) for name in chosen]
    tools = [e.tool for e in entries]
    clash = {t for t in tools if tools.count(t) > 1} | ({DECIDE_TOOL} & set(tools))
    if clash:
        raise ConfigurationError(f"two tools would be named {sorted(clash)}: rename the agents")
    return entries


def _entry(swarm: Swarm, agent: str) -> _Entry:
    if agent not in swarm.agents:
        raise ConfigurationError(
            f"entry {agent!r} is not an agent of the swarm; agents: {', '.join(swarm.agents)}"
        )
    tool = _TOOL_NAME.sub("_", agent)[:128]
    fields: dict[str, Any] = {"prompt": (str, Field(description="What to ask the swarm."))}
    context_type = swarm.spec.context_type
    for field_name, field in (context_type.model_fields if context_type else {}).items():
        if field_name == "prompt":
            raise ConfigurationError(
                "the context_type has a field named 'prompt', which the MCP tool's prompt "
                "argument takes: rename the field"
            )
        fields[field_name] = (field.annotation, field)
    arguments = create_model(f"{tool}_arguments", **fields)
    return _Entry(tool=tool, agent=agent, arguments=arguments)


def _description(swarm: Swarm, agent: str) -> str:
    described = swarm.agents[agent].description
    return described or f"Ask the swarm, starting with its {agent} agent."


def _can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def _question(session_id: str, pending: Mapping[str, Any]) -> str:
    """What a paused run asks: the pending step, its payload as shown (secrets hidden)."""
    about = pending.get("target") or pending.get("tool_name") or pending.get("agent")
    payload = f" with {json.dumps(pending['payload'])}" if pending.get("payload") else ""
    return (
        f"The run {session_id} waits for a decision on {pending.get('kind')} {about}"
        f"{payload}: approve or reject?"
    )


def _finished(result: RunResult) -> types.CallToolResult:
    if result.stop_reason == "final_output":
        output = result.final_output
        text = output if isinstance(output, str) else result.final_output_text or ""
        structured = output.model_dump(mode="json") if isinstance(output, BaseModel) else None
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=structured
        )
    failure = f": {result.failure.type}: {result.failure.message}" if result.failure else ""
    return _error(f"the run {result.session_id} stopped ({result.stop_reason}){failure}")


def _waiting_session(
    session_id: str, text: str, how: str, pending: Mapping[str, Any] | None = None
) -> types.CallToolResult:
    """A result that says the run waits: its session, what is pending, how to decide."""
    structured = {
        "status": "input_required",
        "session_id": session_id,
        "pending": dict(pending) if pending is not None else None,
        "decide_with": DECIDE_TOOL,
    }
    return types.CallToolResult(
        content=[types.TextContent(text=f"{text} To decide, {how}.")],
        structured_content=structured,
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ())) or '(arguments)'}: {e.get('msg')}"
        for e in exc.errors()
    )
