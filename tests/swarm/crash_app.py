"""A support swarm on a fake Chat Completions API, shared by the crash test and its child process.

Run as ``python -m tests.swarm.crash_app JOURNAL``: the child runs the swarm with the SQLite
journal, prints a line per API request and tool call, and blocks forever on billing's first
request, so the parent can SIGKILL it mid-run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from collections.abc import Callable
from typing import Any, cast

import httpx
from openai import AsyncOpenAI

from swarmkit import Agent, OpenAIModel, Swarm, tool
from swarmkit.journal import SQLiteJournal

SESSION = "crash-1"
PROMPT = "Refund invoice A-1"


def build_swarm(model: OpenAIModel, on_tool: Callable[[str], None]) -> Swarm:
    """Triage looks the invoice up and hands off; billing refunds it."""

    @tool
    def lookup(invoice_id: str) -> str:
        """Look up an invoice."""
        on_tool(f"lookup {invoice_id}")
        return f"{invoice_id}: 30 EUR, paid"

    @tool
    def refund(invoice_id: str) -> str:
        """Refund an invoice."""
        on_tool(f"refund {invoice_id}")
        return f"{invoice_id} refunded"

    triage = Agent(name="triage", instructions="You are triage.", tools=[lookup])
    billing = Agent(name="billing", instructions="You are billing.", tools=[refund], handoffs=[])
    return Swarm([triage, billing], "triage", model=model)


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The fake API's answer, chosen from the request's content alone."""
    messages = body["messages"]
    agent = "triage" if messages[0]["content"].startswith("You are triage.") else "billing"
    called = [c["function"]["name"] for m in messages for c in m.get("tool_calls") or []]
    last_call = called[-1] if called else None
    if agent == "triage" and last_call is None:
        return _call("lookup", {"invoice_id": "A-1"})
    if agent == "triage":
        return _call("transfer_to_billing", {"message": "refund A-1"})
    if last_call == "transfer_to_billing":
        return _call("refund", {"invoice_id": "A-1"})
    return _text("Refunded A-1.")


def body_digest(request: httpx.Request) -> str:
    """A short digest of a request body, to count identical requests."""
    return hashlib.sha256(request.content).hexdigest()[:16]


def model_on(handler: Callable[[httpx.Request], httpx.Response]) -> OpenAIModel:
    """An OpenAIModel whose HTTP goes to ``handler``."""
    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    client = AsyncOpenAI(
        api_key="sk-test", base_url="https://llm.test/v1", http_client=cast(Any, http)
    )
    return OpenAIModel("gpt-test", client=client)


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return _completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")


def _text(content: str) -> dict[str, Any]:
    return _completion({"role": "assistant", "content": content}, "stop")


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _child(journal_path: str) -> None:
    def say(line: str) -> None:
        print(line, flush=True)

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        say(f"request {body_digest(request)}")
        if (
            body["messages"][0]["content"].startswith("You are billing.")
            and len(body["messages"]) <= 6
        ):
            say("hang")
            sys.stdin.readline()  # blocks until the parent kills this process
        say(f"completed {body_digest(request)}")
        return httpx.Response(200, json=respond(body))

    swarm = build_swarm(model_on(handler), lambda line: say(f"tool {line}"))
    asyncio.run(swarm.run(PROMPT, session_id=SESSION, journal=SQLiteJournal(journal_path)))


if __name__ == "__main__":
    _child(sys.argv[1])
