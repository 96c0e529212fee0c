"""A remote agent written with the a2a-sdk's own server classes, for the remote-peer tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from a2a.helpers import get_data_parts, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from swarmkit.serving import ASGIApp, AsgiServer


class PeerExecutor(AgentExecutor):
    """Answers ``echo: <text>``, fails every task when ``fail`` is set, or with ``ask`` asks that
    question first and answers ``got: <answer>``; counts its calls and keeps what it received."""

    def __init__(
        self,
        *,
        fail: bool = False,
        ask: str | None = None,
        stall: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.fail = fail
        self.ask = ask
        self.stall = stall
        """Awaited before each answer (a test's way to hold the peer mid-call)."""
        self.calls = 0
        self.received: list[dict[str, object]] = []
        self.messages: list[Message] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """One answer per message."""
        self.calls += 1
        task_id, context_id = str(context.task_id), str(context.context_id)
        message = context.message
        assert message is not None
        self.messages.append(message)
        self.received.extend(get_data_parts(list(message.parts)))
        if self.stall is not None:
            await self.stall()
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is not None:  # the answer to our question
            await updater.add_artifact([new_text_part(f"got: {context.get_user_input()}")])
            await updater.complete()
            return
        status = TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
        await event_queue.enqueue_event(Task(id=task_id, context_id=context_id, status=status))
        if self.fail:
            await updater.failed(updater.new_agent_message([new_text_part("out of stock")]))
        elif self.ask is not None:
            await updater.requires_input(updater.new_agent_message([new_text_part(self.ask)]))
        else:
            await updater.add_artifact([new_text_part(f"echo: {context.get_user_input()}")])
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Nothing runs long enough to cancel."""


class FailingFirst:
    """An ASGI wrapper that answers the first JSON-RPC posts with the given HTTP statuses, then
    lets the app answer; ``posts`` counts every post it saw."""

    def __init__(self, app: ASGIApp, statuses: Sequence[int]) -> None:
        self.app = app
        self.statuses = list(statuses)
        self.posts = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Fail the next post while statuses are left."""
        if scope["type"] == "http" and scope["method"] == "POST":
            self.posts += 1
            if self.statuses:
                response = PlainTextResponse("try later", status_code=self.statuses.pop(0))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def peer_server(
    executor: PeerExecutor, token: str, *, statuses: Sequence[int] = ()
) -> tuple[AsgiServer, FailingFirst]:
    """The peer on a free loopback port, its card and JSON-RPC built by the a2a-sdk; its first
    posts answered with ``statuses`` (the wrapper counts the posts)."""
    wrapper: list[FailingFirst] = []

    def build(url: str) -> ASGIApp:
        card = AgentCard(
            name="warehouse",
            description="Knows the stock.",
            version="1.0.0",
            supported_interfaces=[
                AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
            ],
            capabilities=AgentCapabilities(streaming=False),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            skills=[
                AgentSkill(id="stock", name="stock", description="Stock levels.", tags=["stock"])
            ],
        )
        handler = DefaultRequestHandler(
            agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
        )
        routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
        wrapper.append(FailingFirst(Starlette(routes=routes), statuses))
        return wrapper[0]

    server = AsgiServer(build, token=token)
    return server, wrapper[0]
