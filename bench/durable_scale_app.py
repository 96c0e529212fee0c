"""The scale benchmark's swarm and its loopback model server (``bench/durable_scale.py``).

The swarm: triage looks the invoice up (a tool), hands off to billing, billing answers: four
steps (three model calls and a tool), a handoff. Its model is ``OpenAIModel`` against the
loopback server at ``$SCALE_MODEL_URL``, which answers each request after ``LATENCY`` seconds,
deciding from the request alone (any worker continues any session).
Serve the model: ``python bench/durable_scale_app.py PORT LATENCY``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from swarmkit import Agent, Handoff, OpenAIModel, Swarm, tool
from swarmkit.models import RetryPolicy

MODEL_URL = "SCALE_MODEL_URL"


@tool
def lookup_invoice(invoice: str) -> str:
    """Look an invoice up."""
    return f"invoice {invoice}: charged twice"


def build() -> Swarm:
    """The benchmark swarm, its model at ``$SCALE_MODEL_URL``."""
    model = OpenAIModel(
        "gpt-bench",
        base_url=os.environ.get(MODEL_URL, "http://127.0.0.1:9/v1"),
        api_key="sk-bench-key",
        retry=RetryPolicy(max_attempts=1),
    )
    billing = Agent(name="billing", instructions="Billing. Refund duplicates.")
    triage = Agent(
        name="triage",
        instructions="Triage. Look the invoice up, then pass on.",
        tools=[lookup_invoice],
        handoffs=[Handoff(agent=billing)],
    )
    return Swarm([triage, billing], "triage", model=model)


swarm = build()


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The chat completion the scripted model gives this request."""
    messages = body.get("messages", [])
    system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
    looked_up = any(
        m.get("role") == "tool" and "invoice" in str(m.get("content")) for m in messages
    )
    if system.startswith("Billing") or "Billing." in system:
        message: dict[str, Any] = {"role": "assistant", "content": "Refunded the duplicate."}
    else:
        name, arguments = (
            ("transfer_to_billing", "{}") if looked_up else ("lookup_invoice", '{"invoice": "A-1"}')
        )
        call = {"id": f"call_{name}", "type": "function"}
        call["function"] = {"name": name, "arguments": arguments}  # type: ignore[assignment]
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-bench",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


async def _serve(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: float
) -> None:
    """HTTP/1.1 with keep-alive, POST with a JSON body only: what the openai client sends."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.decode("latin-1").split("\r\n")[1:]:
                key, _, value = line.partition(":")
                if key.strip().lower() == "content-length":
                    length = int(value)
            body = json.loads(await reader.readexactly(length)) if length else {}
            await asyncio.sleep(latency)
            data = json.dumps(answer(body)).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                + f"content-length: {len(data)}\r\n\r\n".encode()
                + data
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(port: int, latency: float) -> None:
    """Serve until killed."""
    server = await asyncio.start_server(
        lambda r, w: _serve(r, w, latency), "127.0.0.1", port, backlog=1024
    )
    print(f"model server on {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), float(sys.argv[2])))
