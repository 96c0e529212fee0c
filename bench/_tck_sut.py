"""The two agents bench/a2a_tck.py runs the A2A conformance kit (TCK) against: a swarm that
echoes (served by ``swarmkit serve a2a _tck_sut:swarm``) and a bare a2a-sdk server that echoes
the same way (``python bench/_tck_sut.py --port N``).

Both answer every message with ``You said: <its text>``. A message whose text mentions
``subscribe`` (the TCK's SubscribeToTask test) is answered only after ``2 *
TCK_STREAMING_TIMEOUT`` seconds, as the TCK asks of the agents it tests, so the task is still
running when the kit subscribes to it.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from a2a.helpers import new_text_part
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
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol
from starlette.applications import Starlette

from swarmkit import Agent, Swarm
from swarmkit.messages import AssistantMessage, UserMessage
from swarmkit.models import ModelRequest, ModelResponse, Usage


def answer_to(text: str) -> str:
    """What both agents answer to ``text``."""
    return f"You said: {text}"


async def linger(text: str) -> None:
    """Wait as the TCK asks before answering its SubscribeToTask test's message."""
    if "subscribe" in text.lower():
        await asyncio.sleep(2 * float(os.environ.get("TCK_STREAMING_TIMEOUT", "2.0")))


class EchoModel:
    """A model that echoes the last user message, as often as it is asked."""

    provider = "swarmkit.scripted"
    """Traced like a scripted model."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """``You said: <the last user message>``."""
        said = next(
            (m.content for m in reversed(request.messages) if isinstance(m, UserMessage)), ""
        )
        await linger(said)
        return ModelResponse(
            message=AssistantMessage(content=answer_to(said)),
            usage=Usage(prompt_tokens=1, completion_tokens=1, total_tokens=2),
            finish_reason="stop",
            model="echo",
        )


swarm = Swarm(
    [Agent(name="echo", description="Echoes what it is told.")], "echo", model=EchoModel()
)
"""The swarm ``swarmkit serve a2a`` serves to the TCK."""


class EchoExecutor(AgentExecutor):
    """The bare server's agent: a task that works, then answers as the swarm does."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Submit the task, work, add the answer as an artifact, complete."""
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            task = Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
            )
            if context.message is not None:
                task.history.append(context.message)
            await event_queue.enqueue_event(task)
        await updater.start_work()
        said = context.get_user_input()
        await linger(said)
        await updater.add_artifact([new_text_part(answer_to(said))], name="output")
        await updater.complete(updater.new_agent_message([new_text_part(answer_to(said))]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Say the task is cancelled."""
        await TaskUpdater(event_queue, str(context.task_id), str(context.context_id)).cancel()


def bare_app(url: str) -> Starlette:
    """The a2a-sdk's own request handler, in-memory task store and routes, around EchoExecutor."""
    card = AgentCard(
        name="echo",
        description="Echoes what it is told.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=url,
                protocol_binding=TransportProtocol.JSONRPC,
                protocol_version=PROTOCOL_VERSION_CURRENT,
            )
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[AgentSkill(id="echo", name="echo", description="Echoes.", tags=["echo"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
    return Starlette(routes=routes)


def main() -> None:
    """Serve the bare a2a-sdk agent on 127.0.0.1:``--port`` until stopped."""
    import uvicorn  # noqa: PLC0415 - only the bare server needs it

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    app = bare_app(f"http://127.0.0.1:{port}/")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
