"""MCP servers as tool sources: their tools become FunctionTools (extra ``mcp``).

```python
async with MCPToolSource.stdio("mcp-server-time") as clock:
    agent = Agent(name="clock", tools=[*await clock.tools()])
    result = await Swarm([agent], "clock", model=model).run("What time is it in Tokyo?")
```

The only module of swarmkit that imports ``mcp``; nothing in the core imports it. The class is
not called ``MCPServer``: the ``mcp`` SDK names its own server class so, and code that builds a
server and connects to it would import both. An ``MCPToolSource`` is the client side, seen as
what it is to an agent: a source of tools.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    ImageContent,
    InputRequiredResult,
    InputResponses,
    ResourceLink,
    TextContent,
    Tool,
)

from swarmkit.bounds import MAX_JSON_DEPTH, value_problem
from swarmkit.context import Answer, RunContext
from swarmkit.exceptions import ConfigurationError, SwarmkitError, ToolServerError
from swarmkit.interrupts import Edit, Reject
from swarmkit.runtime import Runtime, checked_runtime
from swarmkit.runtime import timeout as clock_timeout
from swarmkit.tools import FunctionTool, ToolResult

_UNSAFE_NAME_CHARACTERS = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True, kw_only=True)
class MCPLimits:
    """How long an MCP server may take and how much it may send before it is given up on.

    A server that breaks a limit gets a ``ToolServerError``: from entering the source, from
    ``tools()``, or, for a call, as a tool error result the model reads.
    """

    connect_timeout: float = 30.0
    """Seconds to start (or reach) the server and complete the MCP handshake."""
    list_timeout: float = 30.0
    """Seconds for the whole tool list, every page together."""
    call_timeout: float = 300.0
    """Seconds one tool call may take."""
    max_pages: int = 100
    """Pages of the tool list read before the server is deemed to page forever."""
    max_result_chars: int = 1_000_000
    """Characters of a tool result kept; a longer result is an error the model reads."""
    max_schema_depth: int = MAX_JSON_DEPTH
    """How deep a tool's input schema may nest."""

    def __post_init__(self) -> None:
        for name in ("connect_timeout", "list_timeout", "call_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ConfigurationError(f"MCPLimits.{name} must be a positive number of seconds")
        for name in ("max_pages", "max_result_chars", "max_schema_depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"MCPLimits.{name} must be a positive int")


class MCPToolSource:
    """A connection to one MCP server whose tools agents can call; an async context manager.

    Build one with [stdio][swarmkit.mcp.MCPToolSource.stdio] or
    [http][swarmkit.mcp.MCPToolSource.http], enter it, and pass ``await source.tools()`` to an
    Agent's ``tools``. The list is fetched once and cached; ``tools(refresh=True)`` fetches it
    again. Every tool result comes back as a tool result the model reads, errors included: a tool
    that fails, an unknown tool, a server that crashed or a closed source.
    """

    def __init__(
        self,
        client: Client,
        *,
        name: str,
        include: Collection[str] | None = None,
        exclude: Collection[str] = (),
        prefix: str = "",
        strict: bool = True,
        http_client: httpx2.AsyncClient | None = None,
        limits: MCPLimits | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        """Wrap an ``mcp`` SDK ``Client`` (``stdio`` and ``http`` build one for you).

        ``runtime``, when it can wait for its own clock (``sleep_until``, as
        ``FixedRuntime().runtime()`` can), is the clock ``limits``' timeouts run on, so a test
        passes them by moving that clock; else they run on the event loop's clock.
        """
        if isinstance(include, str) or isinstance(exclude, str):
            raise ConfigurationError("include and exclude take lists of tool names, not a str")
        checked_runtime(runtime)
        self.name = name
        self._client = client
        self._include = frozenset(include) if include is not None else None
        self._exclude = frozenset(exclude)
        self._prefix = prefix
        self._strict = strict
        self._http_client = http_client
        if limits is not None and not isinstance(limits, MCPLimits):
            raise ConfigurationError(f"limits= takes an MCPLimits, got {type(limits).__name__}")
        self.limits = limits or MCPLimits()
        self._runtime = runtime
        self._stack: AsyncExitStack | None = None
        self._entered = False
        self._tools: tuple[FunctionTool, ...] | None = None

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        name: str | None = None,
        include: Collection[str] | None = None,
        exclude: Collection[str] = (),
        prefix: str = "",
        strict: bool = True,
        limits: MCPLimits | None = None,
        runtime: Runtime | None = None,
    ) -> MCPToolSource:
        """A server started as a subprocess that speaks MCP on its stdin and stdout.

        The process inherits only a few safe variables of this environment (``PATH``,
        ``HOME``, ...); ``env`` adds more, such as the API key the server needs. ``runtime``
        is the clock of ``limits``' timeouts when it has ``sleep_until`` (as in a test).
        """
        if isinstance(args, str):
            raise ConfigurationError("args takes a list of arguments, not one str")
        parameters = StdioServerParameters(
            command=command,
            args=list(args),
            env=dict(env) if env else None,
            cwd=cwd,
            # Bytes that are not UTF-8 read as U+FFFD: a strict decoder would end the
            # connection's reader, and leaving the source would raise UnicodeDecodeError.
            encoding_error_handler="replace",
        )
        return cls(
            Client(parameters, elicitation_callback=_decline_mid_call),
            name=name or Path(command).name,
            include=include,
            exclude=exclude,
            prefix=prefix,
            strict=strict,
            limits=limits,
            runtime=runtime,
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        include: Collection[str] | None = None,
        exclude: Collection[str] = (),
        prefix: str = "",
        strict: bool = True,
        timeout: float = 30.0,
        limits: MCPLimits | None = None,
        runtime: Runtime | None = None,
    ) -> MCPToolSource:
        """A server reached over streamable HTTP at ``url`` (e.g. ``http://127.0.0.1:8000/mcp``).

        ``headers`` (an ``Authorization`` header, say) go with every request. ``runtime`` is
        the clock of ``limits``' timeouts when it has ``sleep_until``; ``timeout``, the HTTP
        client's own, stays real seconds.
        """
        checked_runtime(runtime)  # before the client it would leave unopened
        # The SDK's transport takes headers only through an HTTP client of the caller's.
        http = httpx2.AsyncClient(
            headers=dict(headers or {}), timeout=httpx2.Timeout(timeout, read=300.0)
        )
        transport = streamable_http_client(url, http_client=http)
        return cls(
            Client(transport, elicitation_callback=_decline_mid_call),
            name=name or url,
            include=include,
            exclude=exclude,
            prefix=prefix,
            strict=strict,
            http_client=http,
            limits=limits,
            runtime=runtime,
        )

    async def __aenter__(self) -> Self:
        if self._entered:
            raise ConfigurationError(
                f"MCP source {self.name!r} was already entered once; build a new one to reconnect"
            )
        self._entered = True
        async with AsyncExitStack() as stack:
            try:
                if self._http_client is not None:
                    await stack.enter_async_context(self._http_client)
                async with clock_timeout(self.limits.connect_timeout, self._runtime):
                    await stack.enter_async_context(self._client)
            except TimeoutError as exc:
                raise self._error(
                    f"MCP server {self.name!r} did not complete the handshake within "
                    f"{self.limits.connect_timeout:g} s (MCPLimits.connect_timeout); check that "
                    "it speaks MCP on that command or URL"
                ) from exc
            except Exception as exc:
                detail = _meaningful(exc)
                raise self._error(
                    f"could not connect to MCP server {self.name!r} ({type(detail).__name__}: "
                    f"{detail}); check its command and arguments, or its URL"
                ) from exc
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is None:
            return
        try:
            await stack.__aexit__(exc_type, exc, traceback)
        except BaseExceptionGroup as group:
            # The SDK's task groups wrap whatever left the block: give the caller the error
            # itself, so its except clauses match.
            leaves = list(_leaves(group))
            if exc is not None and any(leaf is exc for leaf in leaves):
                return  # the block's own error propagates unchanged
            raise _meaningful(group) from None

    @property
    def connected(self) -> bool:
        """Whether the source is entered (its tools' calls go to the server)."""
        return self._stack is not None

    async def tools(self, *, refresh: bool = False) -> tuple[FunctionTool, ...]:
        """The server's tools (after the include/exclude filter), fetched once and then cached.

        ``refresh=True`` asks the server again, for a server whose tools changed. Tools already
        given to agents keep the schema they had.
        """
        if self._tools is None or refresh:
            self._require_connection("list its tools")
            listed = await self._list(refresh=refresh)
            self._tools = tuple(self._tool(t) for t in listed if self._wanted(t.name))
        return self._tools

    async def call(self, tool_name: str, arguments: Mapping[str, Any]) -> str:
        """Call a tool by its name on the server; the result as text, or ToolServerError
        (a tool that asks for input is answered by the client's own callbacks)."""
        result = await self._request(tool_name, arguments, answering=False)
        assert isinstance(result, CallToolResult)
        return self._text(tool_name, result)

    async def call_asking(
        self, tool_name: str, arguments: Mapping[str, Any], answer: Answer | None = None
    ) -> str | ToolResult:
        """Call a tool as an agent's tool does: a request for input comes back as a question
        for a person (``ToolResult(ask=..., again=True)``); with ``answer``, the person's
        answer to it is sent and the call goes on."""
        responses, state = (None, None) if answer is None else _answered(answer)
        result = await self._request(
            tool_name, arguments, answering=True, responses=responses, state=state
        )
        if isinstance(result, InputRequiredResult):
            return self._question(tool_name, result)
        return self._text(tool_name, result)

    async def _request(
        self,
        tool_name: str,
        arguments: Mapping[str, Any],
        *,
        answering: bool,
        responses: InputResponses | None = None,
        state: str | None = None,
    ) -> CallToolResult | InputRequiredResult:
        self._require_connection(f"call {tool_name!r}", tool_name=tool_name)
        seconds = self.limits.call_timeout
        try:
            async with clock_timeout(seconds, self._runtime):
                if not answering:
                    return await self._client.call_tool(tool_name, dict(arguments))
                return await self._client.session.call_tool(
                    tool_name,
                    dict(arguments),
                    input_responses=responses,
                    request_state=state,
                    allow_input_required=True,
                )
        except TimeoutError as exc:
            detail = f"no answer within {seconds:g} s (MCPLimits.call_timeout)"
            raise self._failed(tool_name, detail) from exc
        except MCPError as exc:
            raise self._failed(tool_name, exc.message) from exc
        except Exception as exc:
            # A crashed process or dropped connection surfaces as the transport's own errors.
            cause = _meaningful(exc)
            raise self._failed(tool_name, f"unreachable ({type(cause).__name__}: {cause})") from exc

    def _text(self, tool_name: str, result: CallToolResult) -> str:
        text = result_text(result)
        if len(text) > self.limits.max_result_chars:
            raise self._failed(
                tool_name,
                f"its result is {len(text):,} characters, more than the "
                f"{self.limits.max_result_chars:,} allowed (MCPLimits.max_result_chars)",
            )
        if result.is_error:
            raise self._failed(tool_name, text or "the tool reported an error")
        return text

    def _question(self, tool_name: str, result: InputRequiredResult) -> ToolResult:
        """A request for input as a question for a person; what the call needs to go on
        (the request keys and the server's state) is the output the answer comes back with."""
        forms = {
            key: request.params
            for key, request in (result.input_requests or {}).items()
            if isinstance(request, ElicitRequest)
            and isinstance(request.params, ElicitRequestFormParams)
        }
        if not forms or len(forms) != len(result.input_requests or {}):
            detail = "it asks for input other than a form (sampling, roots or a URL)"
            raise self._failed(tool_name, detail + ", which this client does not give")
        asked = {"mcp_input_required": {"keys": list(forms), "state": result.request_state}}
        question = "\n".join(params.message for params in forms.values())
        if len(forms) == 1:
            schema = dict(next(iter(forms.values())).requested_schema)
        else:
            properties = {key: dict(params.requested_schema) for key, params in forms.items()}
            schema = {"type": "object", "properties": properties, "required": list(forms)}
        return ToolResult(output=json.dumps(asked), ask=question, ask_schema=schema, again=True)

    # -- internals -----------------------------------------------------------------------

    async def _list(self, *, refresh: bool) -> list[Tool]:
        seconds = self.limits.list_timeout
        try:
            async with clock_timeout(seconds, self._runtime):
                return await self._pages(refresh=refresh)
        except TimeoutError as exc:
            raise self._error(
                f"MCP server {self.name!r} did not list its tools within {seconds:g} s "
                "(MCPLimits.list_timeout)"
            ) from exc
        except MCPError as exc:
            raise self._error(
                f"MCP server {self.name!r} refused to list its tools: {exc.message}"
            ) from exc
        except SwarmkitError:
            raise
        except Exception as exc:
            detail = _meaningful(exc)
            raise self._error(
                f"MCP server {self.name!r} failed to list its tools "
                f"({type(detail).__name__}: {detail})"
            ) from exc

    async def _pages(self, *, refresh: bool) -> list[Tool]:
        listed: list[Tool] = []
        cursor: str | None = None
        for _ in range(self.limits.max_pages):
            page = await self._client.list_tools(
                cursor=cursor, cache_mode="refresh" if refresh else "use"
            )
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return listed
        raise self._error(
            f"MCP server {self.name!r} listed more than {self.limits.max_pages} pages of tools "
            "(MCPLimits.max_pages); it seems to page forever"
        )

    def _wanted(self, tool_name: str) -> bool:
        if self._include is not None and tool_name not in self._include:
            return False
        return tool_name not in self._exclude

    def _tool(self, listed: Tool) -> FunctionTool:
        server_name = listed.name
        problem = value_problem(listed.input_schema, max_depth=self.limits.max_schema_depth)
        if problem is not None:
            raise self._error(
                f"MCP server {self.name!r} sent an input schema for tool {server_name!r} that "
                f"{problem.removeprefix('the value ')} (MCPLimits.max_schema_depth); leave the "
                "tool out with exclude=",
                tool_name=server_name,
            )

        async def call(arguments: dict[str, Any], context: RunContext | None) -> str | ToolResult:
            answer = context.answer if context is not None else None
            return await self.call_asking(server_name, arguments, answer)

        return FunctionTool.from_schema(
            name=self._exposed_name(server_name),
            description=listed.description or listed.title or "",
            parameters=listed.input_schema,
            function=call,
            strict=self._strict,
            with_context=True,
        )

    def _exposed_name(self, server_name: str) -> str:
        # MCP allows names the model APIs refuse ("files/read", "a.b"): those become "_".
        return _UNSAFE_NAME_CHARACTERS.sub("_", f"{self._prefix}{server_name}")[:64]

    def _require_connection(self, action: str, *, tool_name: str = "") -> None:
        if self._stack is None:
            raise ToolServerError(
                f"MCP server {self.name!r} is not connected: {action} inside `async with source:`",
                tool_name=tool_name,
                server=self.name,
            )

    def _error(self, message: str, *, tool_name: str = "") -> ToolServerError:
        return ToolServerError(message, tool_name=tool_name, server=self.name)

    def _failed(self, tool_name: str, detail: str) -> ToolServerError:
        return ToolServerError(
            f"MCP server {self.name!r} failed tool {tool_name!r}: {detail}",
            tool_name=tool_name,
            server=self.name,
        )


async def _decline_mid_call(context: object, params: ElicitRequestParams) -> ElicitResult:
    """A request for input sent in the middle of a call (servers of protocol versions before
    2026-07-28) is declined: a run that pauses for a person cannot hold the call open."""
    return ElicitResult(action="decline")


def _answered(answer: Answer) -> tuple[InputResponses, str | None]:
    """The responses a person's answer makes to the request for input it answers, and the
    server's state to send back with them."""
    asked = json.loads(answer.asked).get("mcp_input_required") or {}
    keys = [str(key) for key in asked.get("keys") or []]
    state = asked.get("state")
    decision = answer.decision
    if isinstance(decision, Reject):
        return {key: ElicitResult(action="decline") for key in keys}, state
    fields = dict(decision.payload) if isinstance(decision, Edit) else {}
    if len(keys) == 1:
        return {keys[0]: ElicitResult(action="accept", content=fields)}, state
    return {
        key: ElicitResult(action="accept", content=fields.get(key) or {}) for key in keys
    }, state


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def _meaningful(error: BaseException) -> BaseException:
    """The error a caller should see inside (nested) exception groups: ours first, then any
    other that is not a cancellation; the error itself when it is no group."""
    if not isinstance(error, BaseExceptionGroup):
        return error
    leaves = [e for e in _leaves(error) if not isinstance(e, asyncio.CancelledError)]
    ours = [e for e in leaves if isinstance(e, SwarmkitError)]
    return (ours or leaves or [error])[0]


def result_text(result: CallToolResult) -> str:
    """A tool result as the text a model reads: its text blocks, else its structured content."""
    texts = [_block_text(block) for block in result.content]
    if any(isinstance(block, TextContent) for block in result.content):
        return "\n".join(texts)
    if result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return "\n".join(texts)


def _block_text(block: ContentBlock) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent | AudioContent):
        return f"[{block.type} {block.mime_type}, {len(block.data)} base64 characters]"
    if isinstance(block, ResourceLink):
        return f"[resource {block.uri}]"
    text = getattr(block.resource, "text", None)
    return text if isinstance(text, str) else f"[resource {block.resource.uri}]"
