"""A raw-socket HTTP server on 127.0.0.1 that answers exactly the bytes a test scripts."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from openai import AsyncOpenAI

from swarmkit.exceptions import ModelError
from swarmkit.models import ModelRequest, OpenAIModel, RetryPolicy, StreamingModel, Timeouts
from swarmkit.runtime import Runtime

Reply = Callable[[asyncio.StreamWriter], Awaitable[None]]
"""Writes one HTTP response (or fails to) on the connection."""


ONE_TRY = RetryPolicy(max_attempts=1)
TWO_TRIES = RetryPolicy(max_attempts=2, initial_backoff=0.0, jitter=0.0)


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def json_reply(body: Any, *, status: int = 200) -> Reply:
    """A complete JSON response."""
    raw = json.dumps(body).encode()

    async def reply(writer: asyncio.StreamWriter) -> None:
        headers = {"Content-Type": "application/json", "Content-Length": str(len(raw))}
        writer.write(_head(status, {**headers, "Connection": "close"}) + raw)
        await writer.drain()

    return reply


def raw_reply(body: str, *, content_type: str = "application/json") -> Reply:
    """A complete response whose body is exactly ``body`` (for JSON ``json.dumps`` won't write)."""
    raw = body.encode()

    async def reply(writer: asyncio.StreamWriter) -> None:
        headers = {"Content-Type": content_type, "Content-Length": str(len(raw))}
        writer.write(_head(200, {**headers, "Connection": "close"}) + raw)
        await writer.drain()

    return reply


def sse_reply(*events: Any, done: bool = True) -> Reply:
    """A stream of ``data:`` events (objects are JSON-encoded), then ``[DONE]``."""
    lines = [e if isinstance(e, str) else f"data: {json.dumps(e)}\n\n" for e in events]
    body = "".join(lines) + ("data: [DONE]\n\n" if done else "")

    async def reply(writer: asyncio.StreamWriter) -> None:
        head = {"Content-Type": "text/event-stream", "Connection": "close"}
        writer.write(_head(200, head) + body.encode())
        await writer.drain()

    return reply


async def silent(writer: asyncio.StreamWriter) -> None:
    """Accept the request and never answer."""
    await asyncio.Event().wait()


async def trickle(writer: asyncio.StreamWriter) -> None:
    """Send the headers of a huge JSON answer, then its body one byte per pass of the event
    loop, for ever: data keeps coming, the whole answer never does (no wall-clock pacing)."""
    head = {"Content-Type": "application/json", "Content-Length": "1000000000000"}
    writer.write(_head(200, head))
    while True:
        writer.write(b" ")
        await writer.drain()
        await asyncio.sleep(0)  # let the client read: a loop pass, not a wall-clock wait


async def keep_alive_only(writer: asyncio.StreamWriter) -> None:
    """Start a stream with one text event, then send only keep-alive comments, one per pass
    of the event loop, for ever."""
    writer.write(_head(200, {"Content-Type": "text/event-stream"}))
    writer.write(f"data: {json.dumps(text_chunk('Hel'))}\n\n".encode())
    while True:
        writer.write(b": keep-alive\n\n")
        await writer.drain()
        await asyncio.sleep(0)  # let the client read: a loop pass, not a wall-clock wait


def text_chunk(text: str | None = None, *, finish: str | None = None) -> dict[str, Any]:
    """A chat.completion.chunk with some text and/or a finish reason."""
    delta = {} if text is None else {"content": text}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}


def completion(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A chat.completion whose first choice holds ``message``."""
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}
    return {"id": "x", "object": "chat.completion", "model": "m", "choices": [choice], **extra}


@dataclass(kw_only=True)
class RawServer:
    """Serves ``replies`` in turn (the last one again when they run out) and counts requests."""

    replies: list[Reply]
    """What each connection gets, in order."""
    bodies: list[bytes] = field(default_factory=list)
    """The body of each request, in order."""
    port: int = 0
    """The port it listens on, once started."""
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the server stops: every reply still running is abandoned."""
    open_connections: int = 0
    """Connections whose handler has not returned yet."""
    now: float = 0.0
    """The reading of the clock ``stalled_time()`` gives a model."""
    deadlines_passed: int = 0
    """How many deadlines have passed on that clock."""
    arrived: asyncio.Condition = field(default_factory=asyncio.Condition)
    """Notified when a request has arrived."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Read one request, then run its reply until it ends, fails, or the server stops."""
        self.open_connections += 1
        try:
            await _until_stopped(self._serve(reader, writer), self.stopping)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client gave up on us: exactly what a deadline does
        finally:
            writer.close()
            self.open_connections -= 1

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.bodies.append(await _read_request(reader))
        async with self.arrived:
            self.arrived.notify_all()
        await self.replies[min(len(self.bodies), len(self.replies)) - 1](writer)

    @property
    def requests(self) -> int:
        """How many requests arrived."""
        return len(self.bodies)

    def stalled_time(self) -> Runtime:
        """A runtime for a model's ``runtime=`` whose clock (``now``) moves only while the
        client waits on a deadline and this server holds that attempt's request: one second
        per pass of the event loop, so a stalling reply trickles a byte or sends a keep-alive
        a second. A deadline passes when the clock reaches it, with no wall-clock wait."""

        async def sleep_until(when: float) -> None:
            attempt = self.deadlines_passed + 1  # each attempt here ends at its deadline
            async with self.arrived:
                await self.arrived.wait_for(lambda: self.requests >= attempt)
            while self.now < when:
                await asyncio.sleep(0)  # a pass of the event loop, not a wall-clock wait
                self.now += 1.0
            self.deadlines_passed += 1

        return Runtime(clock=lambda: self.now, sleep=_no_wait, sleep_until=sleep_until)

    def model(
        self,
        *,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy = ONE_TRY,
        api: type[OpenAIModel] = OpenAIModel,
        runtime: Runtime | None = None,
    ) -> OpenAIModel:
        """An OpenAIModel (or ``api``, e.g. OpenAIResponsesModel) talking to this server."""
        client = AsyncOpenAI(api_key="sk-raw-server", base_url=f"http://127.0.0.1:{self.port}/v1")
        return api(
            "gpt-raw",
            client=client,
            timeouts=timeouts,
            retry=retry,
            sleep=_no_wait,
            runtime=runtime,
        )


async def _no_wait(seconds: float) -> None:
    return None


async def _until_stopped(work: Awaitable[None], stopping: asyncio.Event) -> None:
    tasks = {asyncio.ensure_future(work), asyncio.ensure_future(stopping.wait())}
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for task in done:
        task.result()


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return await reader.readexactly(length)


@contextlib.asynccontextmanager
async def raw_server(*replies: Reply) -> AsyncIterator[RawServer]:
    """A RawServer on a free loopback port, stopped (its running replies abandoned) at exit."""
    server = RawServer(replies=list(replies))
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listener.close()
        server.stopping.set()
        while server.open_connections:
            await asyncio.sleep(0)
        await listener.wait_closed()


async def failure(model: StreamingModel, request: ModelRequest, *, stream: bool) -> str:
    """The first line of the ModelError a call ends with, streamed or not."""
    with pytest.raises(ModelError) as caught:
        if stream:
            async for _ in model.stream(request):
                pass
        else:
            await model.respond(request)
    return str(caught.value).splitlines()[0]
