"""A2AServer: a swarm served as an A2A agent with the a2a-sdk's own request handler."""

from __future__ import annotations

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from starlette.applications import Starlette

from swarmkit.a2a._card import agent_card
from swarmkit.a2a._executor import SwarmExecutor
from swarmkit.journal import Journal
from swarmkit.serving import DEFAULT_MAX_REQUEST_BYTES, ASGIApp, AsgiServer
from swarmkit.swarm import Swarm


def a2a_app(
    swarm: Swarm,
    journal: Journal,
    *,
    url: str,
    name: str | None = None,
    bearer: bool = True,
) -> tuple[ASGIApp, DefaultRequestHandler]:
    """The ASGI app that serves ``swarm`` at ``url``: its card and JSON-RPC (no token check:
    put it behind ``swarmkit.serving.TokenGuard``); and its request handler, whose
    ``aclose()`` ends the tasks still running."""
    card = agent_card(swarm, url=url, name=name, bearer=bearer)
    handler = DefaultRequestHandler(
        agent_executor=SwarmExecutor(swarm, journal),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
    return Starlette(routes=routes), handler


class A2AServer(AsgiServer):
    """Serves a swarm over A2A on ``host:port`` (127.0.0.1 and a free port by default).

    Every request needs ``Authorization: Bearer <token>``: pass ``token=`` or read the random
    one made here from ``.token``. A host that is not loopback needs ``allow_remote=True``.
    Use as ``async with A2AServer(...) as server:`` (the agent is at ``server.url``).
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
        handlers: list[DefaultRequestHandler] = []

        def build(url: str) -> ASGIApp:
            app, handler = a2a_app(swarm, journal, url=url, name=name)
            handlers.append(handler)
            return app

        super().__init__(
            build,
            host=host,
            port=port,
            token=token,
            allow_remote=allow_remote,
            max_request_bytes=max_request_bytes,
        )
        self._handler = handlers[0]

    async def serve(self) -> None:
        """Serve until cancelled or ``close()``; then end the tasks still running (their
        journals keep what they did)."""
        try:
            await super().serve()
        finally:
            await self._handler.aclose()
