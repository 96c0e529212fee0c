"""Helpers for the A2A tests: the a2a-sdk's own client, pointed at a loopback server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.helpers import new_data_part
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, StreamResponse, Task

from swarmkit import Swarm
from swarmkit.a2a import A2AServer
from swarmkit.journal import Journal


@asynccontextmanager
async def a2a_client(url: str, token: str | None, *, streaming: bool) -> AsyncIterator[Client]:
    """An a2a-sdk client for the agent at ``url``, sending ``token`` as a bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers) as http:
        config = ClientConfig(httpx_client=http, streaming=streaming)
        client = await ClientFactory(config).create_from_url(url)
        try:
            yield client
        finally:
            await client.close()


def user_message(
    text: str = "",
    *,
    context_id: str = "",
    task_id: str = "",
    data: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> SendMessageRequest:
    """A user's message (text, and a data part when given) as a send request."""
    parts = [Part(text=text)] if text else []
    if data is not None:
        parts.append(new_data_part(data))
    message = Message(
        role=Role.ROLE_USER,
        parts=parts,
        message_id=str(uuid.uuid4()),
        context_id=context_id,
        task_id=task_id,
    )
    if metadata:
        message.metadata.update(metadata)
    return SendMessageRequest(message=message)


def decision(
    task: Task, text: str = "", *, data: dict[str, Any] | None = None
) -> SendMessageRequest:
    """A message deciding the pause ``task`` waits on (it names the pause's interrupt id)."""
    interrupt_id = task.status.message.metadata["interrupt_id"]
    return user_message(
        text,
        task_id=task.id,
        context_id=task.context_id,
        data=data,
        metadata={"interrupt_id": interrupt_id},
    )


async def responses(client: Client, request: SendMessageRequest) -> list[StreamResponse]:
    """Everything the client yields for one send."""
    return [response async for response in client.send_message(request)]


@asynccontextmanager
async def served(
    swarm: Swarm, journal: Journal, token: str, *, streaming: bool, **options: Any
) -> AsyncIterator[Client]:
    """The swarm served on a free loopback port (with A2AServer's ``options``), and an
    a2a-sdk client talking to it with ``token``."""
    async with (
        A2AServer(swarm, journal, token=token, **options) as server,
        a2a_client(server.url, token, streaming=streaming) as client,
    ):
        yield client
