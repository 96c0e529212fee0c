"""A remote agent written with the a2a-sdk's own server classes, for the remote-peer tests."""

from __future__ import annotations

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
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette

from swarmkit.serving import ASGIApp, AsgiServer


class PeerExecutor(AgentExecutor):
    """Answers ``echo: <text>``, or fails every task when ``fail`` is set; counts its calls."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.calls = 0
        self.received: list[dict[str, object]] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """One answer per message."""
        self.calls += 1
        task_id, context_id = str(context.task_id), str(context.context_id)
        status = TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
        await event_queue.enqueue_event(Task(id=task_id, context_id=context_id, status=status))
        updater = TaskUpdater(event_queue, task_id, context_id)
        message = context.message
        assert message is not None
        self.received.extend(get_data_parts(list(message.parts)))
        if self.fail:
            await updater.failed(updater.new_agent_message([new_text_part("out of stock")]))
            return
        await updater.add_artifact([new_text_part(f"echo: {context.get_user_input()}")])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Nothing runs long enough to cancel."""


def peer_server(executor: PeerExecutor, token: str) -> AsgiServer:
    """The peer on a free loopback port, its card and JSON-RPC built by the a2a-sdk."""

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
            skills=[AgentSkill(id="stock", name="stock", description="Stock levels.", tags=[])],
        )
        handler = DefaultRequestHandler(
            agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
        )
        routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
        return Starlette(routes=routes)

    return AsgiServer(build, token=token)
