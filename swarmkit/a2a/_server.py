"""A2AServer: a swarm served as an A2A agent with the a2a-sdk's own request handler."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping, Sequence

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette

from swarmkit.a2a._card import agent_card, check_compat
from swarmkit.a2a._executor import SwarmExecutor
from swarmkit.a2a._principals import (
    Principal,
    PrincipalContextBuilder,
    WaitingTaskCheck,
    owner_of,
    server_principals,
)
from swarmkit.a2a._tasks import DatabaseTasks
from swarmkit.a2a._tasks import task_store as task_stores
from swarmkit.journal import Journal
from swarmkit.serving import CALLER, DEFAULT_MAX_REQUEST_BYTES, ASGIApp, AsgiServer
from swarmkit.swarm import Swarm


def a2a_app(
    swarm: Swarm,
    journal: Journal,
    *,
    url: str,
    name: str | None = None,
    bearer: bool = True,
    principals: Mapping[str, Principal] | None = None,
    tasks: TaskStore | None = None,
    compat: Sequence[str] = (),
) -> tuple[ASGIApp, DefaultRequestHandler]:
    """The ASGI app that serves ``swarm`` at ``url``: its public card, and JSON-RPC with the
    extended card (no token check: put it behind ``swarmkit.serving.TokenGuard``, whose
    principal names index ``principals``); and its request handler, whose ``aclose()`` ends
    the tasks still running. Each principal sees only its own tasks, kept in ``tasks`` (in
    memory by default; see ``swarmkit.a2a.task_store``). ``compat=["0.3"]`` serves A2A 0.3
    clients too (their method names on the same endpoint, and an interface for them on the
    card)."""
    compat = check_compat(compat)
    card = agent_card(swarm, url=url, name=name, bearer=bearer, compat=compat)
    tasks = tasks if tasks is not None else InMemoryTaskStore(owner_resolver=owner_of)
    handler = DefaultRequestHandler(
        agent_executor=SwarmExecutor(swarm, journal),
        task_store=tasks,
        agent_card=card,
        extended_agent_card=agent_card(
            swarm, url=url, name=name, bearer=bearer, extended=True, compat=compat
        ),
        request_context_builder=WaitingTaskCheck(
            tasks, on_new=tasks.expect_new if isinstance(tasks, DatabaseTasks) else None
        ),
    )
    calls = PrincipalContextBuilder(principals or {})
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(
            handler, rpc_url="/", context_builder=calls, enable_v0_3_compat=bool(compat)
        ),
    ]
    return Starlette(routes=routes), handler


class A2AServer(AsgiServer):
    """Serves a swarm over A2A on ``host:port`` (127.0.0.1 and a free port by default).

    Anyone may read the public agent card; every other request needs ``Authorization: Bearer
    <token>``: pass ``token=`` or read the random one made here from ``.token``. Each token
    is a principal that sees only the tasks it created: ``token`` is ``caller``, and
    ``principals`` adds more. Deciding a paused run needs a token that may decide: with
    ``decision_token=`` the principal ``decider`` decides the caller's tasks (the journal
    records ``decided_by="a2a:decider"``); without one no caller can decide over A2A. A
    decision names the pause it decides by its ``interrupt_id`` (in the waiting task's status
    message), so one meant for an earlier pause is refused. A host
    that is not loopback needs ``allow_remote=True``. Use as ``async with A2AServer(...) as
    server:`` (the agent is at ``server.url``).

    ``task_store`` says where tasks are kept: ``"journal"`` (the default) keeps them in a
    SQLite journal's file (in memory beside an in-memory journal), so waiting and finished
    tasks outlive a restart and a restarted server resumes a waiting task on its decision;
    ``"memory"``, a database URL (``sqlite:///...``, ``postgresql://...``), a SQLite path or
    a TaskStore name others. ``compat=["0.3"]`` also serves A2A 0.3 clients.
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
        principals: Sequence[Principal] = (),
        allow_remote: bool = False,
        name: str | None = None,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        task_store: str | os.PathLike[str] | TaskStore = "journal",
        compat: Sequence[str] = (),
    ) -> None:
        handlers: list[DefaultRequestHandler] = []
        token = token or secrets.token_urlsafe(24)
        named = server_principals(token, decision_token, tuple(principals))
        compat = check_compat(compat)
        self.tasks = task_stores(journal, task_store)
        """Where the server keeps its tasks."""

        def build(url: str) -> ASGIApp:
            app, handler = a2a_app(
                swarm,
                journal,
                url=url,
                name=name,
                principals=named,
                tasks=self.tasks,
                compat=compat,
            )
            handlers.append(handler)
            return app

        super().__init__(
            build,
            host=host,
            port=port,
            token=token,
            allow_remote=allow_remote,
            max_request_bytes=max_request_bytes,
            principals={n: p.token for n, p in named.items() if n != CALLER},
            public_paths=[AGENT_CARD_WELL_KNOWN_PATH],
        )
        self._handler = handlers[0]

    async def serve(self) -> None:
        """Serve until cancelled or ``close()``; then end the tasks still running (their
        journals keep what they did)."""
        try:
            await super().serve()
        finally:
            await self._handler.aclose()
            if isinstance(self.tasks, DatabaseTasks):
                await self.tasks.aclose()
