"""The transports of a served swarm: the mcp SDK's low-level Server, stdio, and streamable
HTTP behind the bearer-token guard."""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route

from swarmkit.journal import Journal
from swarmkit.mcp_server._service import DECIDER, Service
from swarmkit.serving import DEFAULT_MAX_REQUEST_BYTES, ASGIApp, AsgiServer
from swarmkit.swarm import Swarm

_LOOPBACK_ONLY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
    allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)
"""A loopback server answers only requests that name a loopback host (no DNS rebinding)."""


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
    service = Service(
        swarm, journal, entries, local_decides=allow_decisions, decisions=allow_decisions
    )
    return _server(service, name or swarm.entry_agent)


def _server(service: Service, name: str) -> Server[Any]:
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
        service = Service(
            swarm, journal, entries, local_decides=False, decisions=decision_token is not None
        )
        self._manager = StreamableHTTPSessionManager(
            app=_server(service, name or swarm.entry_agent),
            stateless=True,
            security_settings=None if allow_remote else _LOOPBACK_ONLY,
        )
        routes = [Route("/mcp", endpoint=StreamableHTTPASGIApp(self._manager))]

        def build(url: str) -> ASGIApp:
            return Starlette(routes=routes)

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
