"""MCP servers as tool sources: their tools become FunctionTools (extra ``mcp``).

::

    async with MCPToolSource.stdio("mcp-server-time") as clock:
        agent = Agent(name="clock", tools=[*await clock.tools()])
        result = await Swarm([agent], "clock", model=model).run("What time is it in Tokyo?")

The only module of swarmkit that imports ``mcp``; nothing in the core imports it. The class is
not called ``MCPServer``: the ``mcp`` SDK names its own server class so, and code that builds a
server and connects to it would import both. An ``MCPToolSource`` is the client side, seen as
what it is to an agent: a source of tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from contextlib import AsyncExitStack
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
    ImageContent,
    ResourceLink,
    TextContent,
    Tool,
)

from swarmkit.exceptions import ConfigurationError, ToolServerError
from swarmkit.tools import FunctionTool

_UNSAFE_NAME_CHARACTERS = re.compile(r"[^a-zA-Z0-9_-]")


class MCPToolSource:
    """A connection to one MCP server whose tools agents can call; an async context manager.

    Build one with :meth:`stdio` or :meth:`http`, enter it, and pass ``await source.tools()`` to
    an Agent's ``tools``. The list is fetched once and cached; ``tools(refresh=True)`` fetches it
    again. Every tool result comes back as a tool result the model reads, errors included: a
    tool that fails, an unknown tool, a server that crashed or a closed source.
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
    ) -> None:
        if isinstance(include, str) or isinstance(exclude, str):
            raise ConfigurationError("include and exclude take lists of tool names, not a str")
        self.name = name
        self._client = client
        self._include = frozenset(include) if include is not None else None
        self._exclude = frozenset(exclude)
        self._prefix = prefix
        self._strict = strict
        self._http_client = http_client
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
    ) -> MCPToolSource:
        """A server started as a subprocess that speaks MCP on its stdin and stdout.

        The process inherits only a few safe variables of this environment (``PATH``,
        ``HOME``, ...); ``env`` adds more, such as the API key the server needs.
        """
        if isinstance(args, str):
            raise ConfigurationError("args takes a list of arguments, not one str")
        parameters = StdioServerParameters(
            command=command, args=list(args), env=dict(env) if env else None, cwd=cwd
        )
        return cls(
            Client(parameters),
            name=name or Path(command).name,
            include=include,
            exclude=exclude,
            prefix=prefix,
            strict=strict,
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
    ) -> MCPToolSource:
        """A server reached over streamable HTTP at ``url`` (e.g. ``http://127.0.0.1:8000/mcp``).

        ``headers`` (an ``Authorization`` header, say) go with every request.
        """
        # The SDK's transport takes headers only through an HTTP client of the caller's.
        http = httpx2.AsyncClient(
            headers=dict(headers or {}), timeout=httpx2.Timeout(timeout, read=300.0)
        )
        transport = streamable_http_client(url, http_client=http)
        return cls(
            Client(transport),
            name=name or url,
            include=include,
            exclude=exclude,
            prefix=prefix,
            strict=strict,
            http_client=http,
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
                await stack.enter_async_context(self._client)
            except Exception as exc:
                raise ToolServerError(
                    f"could not connect to MCP server {self.name!r} ({type(exc).__name__}: "
                    f"{exc}); check its command and arguments, or its URL",
                    tool_name="",
                    server=self.name,
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
        if stack is not None:
            await stack.__aexit__(exc_type, exc, traceback)

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
        """Call a tool by its name on the server; the result as text, or ToolServerError."""
        self._require_connection(f"call {tool_name!r}", tool_name=tool_name)
        try:
            result = await self._client.call_tool(tool_name, dict(arguments))
        except MCPError as exc:
            raise self._failed(tool_name, exc.message) from exc
        except Exception as exc:
            # A crashed process or dropped connection surfaces as the transport's own errors.
            raise self._failed(tool_name, f"unreachable ({type(exc).__name__}: {exc})") from exc
        text = result_text(result)
        if result.is_error:
            raise self._failed(tool_name, text or "the tool reported an error")
        return text

    # -- internals -----------------------------------------------------------------------

    async def _list(self, *, refresh: bool) -> list[Tool]:
        listed: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await self._client.list_tools(
                cursor=cursor, cache_mode="refresh" if refresh else "use"
            )
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return listed

    def _wanted(self, tool_name: str) -> bool:
        if self._include is not None and tool_name not in self._include:
            return False
        return tool_name not in self._exclude

    def _tool(self, listed: Tool) -> FunctionTool:
        server_name = listed.name

        async def call(arguments: dict[str, Any]) -> str:
            return await self.call(server_name, arguments)

        return FunctionTool.from_schema(
            name=self._exposed_name(server_name),
            description=listed.description or listed.title or "",
            parameters=listed.input_schema,
            function=call,
            strict=self._strict,
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

    def _failed(self, tool_name: str, detail: str) -> ToolServerError:
        return ToolServerError(
            f"MCP server {self.name!r} failed tool {tool_name!r}: {detail}",
            tool_name=tool_name,
            server=self.name,
        )


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
