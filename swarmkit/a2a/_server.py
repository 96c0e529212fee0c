"""A2AServer: a swarm served as an A2A agent with the a2a-sdk's own request handler."""

from __future__ import annotations

import asyncio
import secrets
import socket
from types import TracebackType

import uvicorn
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import AgentCard
from starlette.applications import Starlette

from swarmkit.a2a._card import agent_card
from swarmkit.a2a._executor import SwarmExecutor
from swarmkit.a2a._guard import (
    DEFAULT_MAX_REQUEST_BYTES,
    ASGIApp,
    TokenGuard,
    check_host,
    check_token,
)
from swarmkit.journal import Journal
from swarmkit.swarm import Swarm


def a2a_app(
    swarm: Swarm,
    journal: Journal,
    *,
    url: str,
    token: str | None,
    name: str | None = None,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
) -> tuple[ASGIApp, DefaultRequestHandler]:
    """The ASGI app that serves ``swarm`` at ``url`` (card and JSON-RPC), behind the token
    guard; and its request handler, whose ``aclose()`` ends the tasks still running."""
    card: AgentCard = agent_card(swarm, url=url, name=name, bearer=token is not None)
    handler = DefaultRequestHandler(
        agent_executor=SwarmExecutor(swarm, journal),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
    app = TokenGuard(Starlette(routes=routes), token=token, max_request_bytes=max_request_bytes)
    return app, handler


class A2AServer:
    """Serves a swarm over A2A on ``host:port`` (127.0.0.1 and a free port by default).

    Every request needs ``Authorization: Bearer <token>``: pass ``token=`` or read the random
    one made here from ``.token``. A host that is not loopback needs ``allow_remote=True``.
    Use as ``async with A2AServer(...) as server:``, or ``serve()`` until cancelled.
    """

    def __init__(
        self,
        swarm: Swarm,
        journal: Journal,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        allow_remote: bool = False,
        name: str | None = None,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ) -> None:
        self.host = check_host(host, allow_remote=allow_remote)
        self.token = check_token(token or secrets.token_urlsafe(24))
        """The bearer token every request must carry."""
        self._socket = socket.create_server((self.host, port))
        self.port: int = self._socket.getsockname()[1]
        app, self._handler = a2a_app(
            swarm,
            journal,
            url=self.url,
            token=self.token,
            name=name,
            max_request_bytes=max_request_bytes,
        )
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._serving: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """Where the agent answers (its card is at ``/.well-known/agent-card.json``)."""
        return f"http://{self.host}:{self.port}/"

    async def serve(self) -> None:
        """Serve until cancelled or ``close()``."""
        try:
            await self._server.serve(sockets=[self._socket])
        finally:
            await self._handler.aclose()

    async def close(self) -> None:
        """Stop serving and end the tasks still running (their journals keep what they did)."""
        self._server.should_exit = True
        if self._serving is not None:
            await self._serving
            self._serving = None
        self._socket.close()

    async def __aenter__(self) -> A2AServer:
        # The socket already listens: a client may connect before uvicorn accepts.
        self._serving = asyncio.create_task(self.serve())
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"A2AServer(url={self.url!r})"  # never the token
