"""Session overhead: a two-call swarm session against the floor of two raw client calls.

Triage hands off to billing by an LLM transfer call and billing answers. Every contender
talks to the same in-process HTTP transport through the real ``openai`` client, so the
figures compare what each adds on top of the client. Rounds interleave the contenders and
the medians are compared. The floor is two ``client.chat.completions.create`` calls; swarmkit's
adapter sends through the client's lower-level ``client.post`` (same HTTP, auth, errors and
JSON parsing, without the typed request transform), so that path is shown as a second floor.
The same session through ``OpenAIResponsesModel`` is compared with its own floor, two raw
``client.responses.create`` calls.

The LLM-handoff session also runs with tracing on (spans to the SDK's in-memory exporter) and
with the tracing observer attached but no tracer provider configured (tracing off), and each
is compared with the same session without an observer, round by round (median of the ratios).
Run: ``make bench`` or ``.venv/bin/python bench/session.py``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from openai import AsyncOpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from swarmkit import Agent, HandoffGraph, OpenAIModel, OpenAIResponsesModel, Swarm
from swarmkit.events import EventObserver
from swarmkit.tracing import RunTracing, traced

ROUNDS = 15
SESSIONS_PER_ROUND = 40
PROMPT = "I was charged twice for invoice A-1."


def _completion(message: dict[str, Any], finish: str) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-bench",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }
    return json.dumps(body).encode()


TRANSFER = _completion(
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "transfer_to_billing", "arguments": "{}"},
            }
        ],
    },
    "tool_calls",
)
ANSWER = _completion({"role": "assistant", "content": "Refunded the duplicate charge."}, "stop")
HEADERS = {"content-type": "application/json"}


def _response(item: dict[str, Any]) -> bytes:
    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-bench",
        "status": "completed",
        "output": [item],
        "usage": {"input_tokens": 50, "output_tokens": 10, "total_tokens": 60},
    }
    return json.dumps(body).encode()


RESPONSES_TRANSFER = _response(
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "transfer_to_billing",
        "arguments": "{}",
        "status": "completed",
    }
)
RESPONSES_ANSWER = _response(
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "Refunded the duplicate charge.", "annotations": []}
        ],
    }
)


def _handler(request: httpx2.Request) -> httpx2.Response:
    # Billing's instructions mark its call; everything else is triage deciding to transfer.
    billing = b"You handle billing" in request.content
    if request.url.path.endswith("/responses"):
        body = RESPONSES_ANSWER if billing else RESPONSES_TRANSFER
    else:
        body = ANSWER if billing else TRANSFER
    return httpx2.Response(200, content=body, headers=HEADERS)


def _client() -> AsyncOpenAI:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(_handler))
    return AsyncOpenAI(
        api_key="sk-bench", base_url="http://bench.local/v1", http_client=http, max_retries=0
    )


def _raw_floor(client: AsyncOpenAI, *, low_level: bool = False) -> Callable[[], Awaitable[object]]:
    tools: Any = [
        {
            "type": "function",
            "function": {
                "name": "transfer_to_billing",
                "description": "Hand off to billing.",
                "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
            },
        }
    ]

    async def create(**body: Any) -> Any:
        if low_level:
            return await client.post("/chat/completions", body=body, cast_to=object)
        reply = await client.chat.completions.create(**body)
        return reply.model_dump()

    async def session() -> object:
        first: Any = [
            {"role": "system", "content": "You route tickets."},
            {"role": "user", "content": PROMPT},
        ]
        reply = await create(model="gpt-bench", messages=first, tools=tools)
        calls = reply["choices"][0]["message"]["tool_calls"]
        second: Any = [
            {"role": "system", "content": "You handle billing."},
            {"role": "user", "content": PROMPT},
            {"role": "assistant", "content": "", "tool_calls": calls},
            {"role": "tool", "tool_call_id": "call_1", "content": "Transferred to billing."},
        ]
        return await create(model="gpt-bench", messages=second)

    return session


def _raw_responses_floor(client: AsyncOpenAI) -> Callable[[], Awaitable[object]]:
    tools: Any = [
        {
            "type": "function",
            "name": "transfer_to_billing",
            "description": "Hand off to billing.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
            "strict": True,
        }
    ]

    async def session() -> object:
        first: Any = [
            {"role": "system", "content": "You route tickets."},
            {"role": "user", "content": PROMPT},
        ]
        reply = await client.responses.create(model="gpt-bench", input=first, tools=tools)
        call = reply.output[0].model_dump()
        second: Any = [
            {"role": "system", "content": "You handle billing."},
            {"role": "user", "content": PROMPT},
            {k: call[k] for k in ("type", "call_id", "name", "arguments")},
            {"type": "function_call_output", "call_id": "call_1", "output": "Transferred."},
        ]
        answer = await client.responses.create(model="gpt-bench", input=second)
        return answer.model_dump()

    return session


def _swarm(
    client: AsyncOpenAI,
    *,
    rule: bool,
    responses: bool = False,
    observer: EventObserver | None = None,
) -> Callable[[], Awaitable[object]]:
    api = OpenAIResponsesModel if responses else OpenAIModel
    model = api("gpt-bench", client=client)
    triage = Agent(name="triage", instructions="You route tickets.")
    billing = Agent(name="billing", instructions="You handle billing.", handoffs=[])
    graph = None
    if rule:
        graph = HandoffGraph()
        graph.add_edge("triage", "billing", when="category == 'billing'")
    observers = [observer] if observer is not None else []
    swarm = Swarm([triage, billing], "triage", model=model, graph=graph, observers=observers)
    context = {"category": "billing"} if rule else None

    async def session() -> object:
        return await swarm.run(PROMPT, context=context)

    return session


def _openai_agents(client: AsyncOpenAI) -> Callable[[], Awaitable[object]] | None:
    try:
        import agents  # noqa: PLC0415 - optional bench extra
    except ImportError:
        return None
    agents.set_tracing_disabled(True)
    model = agents.OpenAIChatCompletionsModel(model="gpt-bench", openai_client=client)
    billing = agents.Agent(name="billing", instructions="You handle billing.", model=model)
    triage = agents.Agent(
        name="triage", instructions="You route tickets.", handoffs=[billing], model=model
    )

    async def session() -> object:
        return await agents.Runner.run(triage, PROMPT)

    return session


async def _time(session: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    for _ in range(SESSIONS_PER_ROUND):
        await session()
    return (time.perf_counter() - started) / SESSIONS_PER_ROUND


async def main() -> None:
    """Interleave the contenders in rounds and print medians and ratios to the raw floor."""
    client = _client()
    contenders: dict[str, Callable[[], Awaitable[object]]] = {
        "raw client (2 calls)": _raw_floor(client),
        "raw client.post (2 calls)": _raw_floor(client, low_level=True),
        "swarmkit (LLM handoff)": _swarm(client, rule=False),
        "swarmkit (rule handoff)": _swarm(client, rule=True),
        "raw responses.create (2 calls)": _raw_responses_floor(client),
        "swarmkit Responses (LLM)": _swarm(client, rule=False, responses=True),
        "swarmkit traced (in-memory)": _traced(client, batch=False),
        "swarmkit traced (batch)": _traced(client, batch=True),
        "swarmkit traced (no provider)": _swarm(client, rule=False, observer=traced),
    }
    other = _openai_agents(client)
    if other is not None:
        contenders["openai-agents"] = other
    for session in contenders.values():
        await _time(session)  # warm up
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(ROUNDS):
        for name, session in contenders.items():
            samples[name].append(await _time(session))
    floors = {
        "chat": statistics.median(samples["raw client (2 calls)"]),
        "responses": statistics.median(samples["raw responses.create (2 calls)"]),
    }
    print(f"{'contender':32} {'µs/session':>11} {'ratio to its floor':>19}")
    for name, values in samples.items():
        median = statistics.median(values)
        floor = floors["responses" if "esponses" in name else "chat"]
        print(f"{name:32} {median * 1e6:11.0f} {median / floor:19.2f}")
    if other is None:
        print("(openai-agents not installed: pip install -e '.[bench]' to compare)")
    untraced = samples["swarmkit (LLM handoff)"]
    for name in (
        "swarmkit traced (in-memory)",
        "swarmkit traced (batch)",
        "swarmkit traced (no provider)",
    ):
        # Paired by round: the two ran back to back, so the machine's load drifts out.
        ratio = statistics.median(t / u for t, u in zip(samples[name], untraced, strict=True))
        added = statistics.median(t - u for t, u in zip(samples[name], untraced, strict=True))
        print(
            f"{name}: {ratio:.2f}x the untraced session, {added * 1e6:+.0f} µs per session "
            "(target <= 1.15x)"
        )


def _traced(client: AsyncOpenAI, *, batch: bool) -> Callable[[], Awaitable[object]]:
    """The LLM-handoff session traced to an in-memory exporter (emptied now and then, as an
    exporter that ships spans away would be), through the simple or the batch processor."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
    provider.add_span_processor(processor)
    traced_session = _swarm(client, rule=False, observer=RunTracing(tracer_provider=provider))
    runs = 0

    async def session() -> object:
        nonlocal runs
        runs += 1
        if runs % SESSIONS_PER_ROUND == 0:
            exporter.clear()
        return await traced_session()

    return session


if __name__ == "__main__":
    asyncio.run(main())
