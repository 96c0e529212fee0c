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
A long-conversation section follows (issue 14): one agent calls a lookup tool each turn for
500 turns, so every model call carries the whole growing history, through ``OpenAIModel`` and
``OpenAIResponsesModel``, each against its floor, raw ``client.post`` with the same growing
list. Turns are timed between request arrivals at the transport and shown in windows of 50.
Run: ``make bench`` or ``.venv/bin/python bench/session.py`` (``... session.py long`` for the
long section alone).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from _size import size
from openai import AsyncOpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import swarmkit
from swarmkit import Agent, HandoffGraph, OpenAIModel, OpenAIResponsesModel, Swarm
from swarmkit.events import EventObserver
from swarmkit.tracing import RunTracing, traced

ROUNDS = size(15)
SESSIONS_PER_ROUND = size(40, 2)
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


# --- Long conversations: per-turn cost as the history grows (issue 14) ---------------------

LONG_TURNS = size(500, 3)
LONG_REPEATS = size(5)
LONG_WINDOW = 50
LOOKUP_PARAMETERS: Any = {
    "type": "object",
    "properties": {"invoice": {"type": "string"}},
    "required": ["invoice"],
    "additionalProperties": False,
}
LOOKUP_SPEC: Any = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look up one invoice.",
        "parameters": LOOKUP_PARAMETERS,
        "strict": True,
    },
}
RESPONSES_LOOKUP_SPEC: Any = {
    "type": "function",
    "name": "lookup",
    "description": "Look up one invoice.",
    "parameters": LOOKUP_PARAMETERS,
    "strict": True,
}


def _lookup_call(turn: int, *, responses: bool) -> bytes:
    arguments = json.dumps({"invoice": f"A-{turn}"})
    if responses:
        return _response(
            {
                "type": "function_call",
                "id": f"fc_{turn}",
                "call_id": f"call_{turn}",
                "name": "lookup",
                "arguments": arguments,
                "status": "completed",
            }
        )
    call = {
        "id": f"call_{turn}",
        "type": "function",
        "function": {"name": "lookup", "arguments": arguments},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return _completion(message, "tool_calls")


class _LongTransport:
    """Scripted replies for a long session: a lookup call per turn, then the answer; each
    request's arrival time marks a turn boundary."""

    def __init__(self, *, responses: bool) -> None:
        calls = [_lookup_call(turn, responses=responses) for turn in range(1, LONG_TURNS)]
        self.replies = [*calls, RESPONSES_ANSWER if responses else ANSWER]
        self.turn = 0
        self.marks: list[float] = []

    def start(self) -> None:
        self.turn = 0
        self.marks = [time.perf_counter()]

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        if self.turn:
            self.marks.append(time.perf_counter())
        body = self.replies[self.turn]
        self.turn += 1
        return httpx2.Response(200, content=body, headers=HEADERS)

    def turn_costs(self) -> list[float]:
        """Seconds per turn: from one request's arrival to the next (the last to the end)."""
        marks = [*self.marks, time.perf_counter()]
        return [b - a for a, b in itertools.pairwise(marks)]


def _long_client(transport: _LongTransport) -> AsyncOpenAI:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(transport.handle))
    return AsyncOpenAI(
        api_key="sk-bench", base_url="http://bench.local/v1", http_client=http, max_retries=0
    )


def _lookup(invoice: str) -> str:
    """Look up one invoice."""
    return f"Invoice {invoice}: paid twice, 40.00 EUR each."


def _long_raw(client: AsyncOpenAI) -> Callable[[], Awaitable[object]]:
    """The floor: ``client.post`` with the whole growing message list, a lookup per turn."""

    async def session() -> object:
        messages: list[Any] = [
            {"role": "system", "content": "You handle billing."},
            {"role": "user", "content": PROMPT},
        ]
        while True:
            body = {"model": "gpt-bench", "messages": messages, "tools": [LOOKUP_SPEC]}
            reply: Any = await client.post("/chat/completions", body=body, cast_to=object)
            message = reply["choices"][0]["message"]
            if not message.get("tool_calls"):
                return message
            call = message["tool_calls"][0]
            result = _lookup(**json.loads(call["function"]["arguments"]))
            messages.append({**message, "content": message["content"] or ""})
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})

    return session


def _long_raw_responses(client: AsyncOpenAI) -> Callable[[], Awaitable[object]]:
    """The Responses floor: ``client.post`` with the whole growing input list."""

    async def session() -> object:
        items: list[Any] = [
            {"role": "system", "content": "You handle billing."},
            {"role": "user", "content": PROMPT},
        ]
        while True:
            body = {"model": "gpt-bench", "input": items, "tools": [RESPONSES_LOOKUP_SPEC]}
            reply: Any = await client.post("/responses", body=body, cast_to=object)
            call = reply["output"][0]
            if call["type"] != "function_call":
                return call
            result = _lookup(**json.loads(call["arguments"]))
            items.append({k: call[k] for k in ("type", "call_id", "name", "arguments")})
            items.append(
                {"type": "function_call_output", "call_id": call["call_id"], "output": result}
            )

    return session


def _long_swarm(client: AsyncOpenAI, *, responses: bool) -> Callable[[], Awaitable[object]]:
    """One agent, one tool, a lookup per turn: each model call carries the whole history."""
    from swarmkit import tool  # noqa: PLC0415 - only this section needs it

    model = (OpenAIResponsesModel if responses else OpenAIModel)("gpt-bench", client=client)
    billing = Agent(
        name="billing", instructions="You handle billing.", tools=[tool(_lookup)], handoffs=[]
    )
    swarm = Swarm([billing], "billing", model=model, max_turns=LONG_TURNS + 1)

    async def session() -> object:
        result = await swarm.run(PROMPT)
        assert result.stop_reason == "final_output", result.stop_reason
        return result

    return session


LONG_CONTENDERS: dict[
    str, tuple[bool, Callable[[AsyncOpenAI], Callable[[], Awaitable[object]]]]
] = {
    "raw client.post": (False, _long_raw),
    "OpenAIModel": (False, lambda client: _long_swarm(client, responses=False)),
    "raw client.post /responses": (True, _long_raw_responses),
    "OpenAIResponsesModel": (True, lambda client: _long_swarm(client, responses=True)),
}
"""Each contender: whether it speaks the Responses API, and how to build its session."""


def _windows(costs: list[float]) -> list[float]:
    return [
        statistics.fmean(costs[start : start + LONG_WINDOW])
        for start in range(0, len(costs), LONG_WINDOW)
    ]


async def long_main() -> None:
    """A 500-turn session through each adapter against raw ``client.post``, interleaved."""
    contenders: dict[str, tuple[_LongTransport, Callable[[], Awaitable[object]]]] = {}
    for name, (responses, build) in LONG_CONTENDERS.items():
        transport = _LongTransport(responses=responses)
        contenders[name] = (transport, build(_long_client(transport)))
    runs: dict[str, list[list[float]]] = {name: [] for name in contenders}
    for repeat in range(LONG_REPEATS + 1):
        for name, (transport, session) in contenders.items():
            transport.start()
            await session()
            costs = transport.turn_costs()
            assert len(costs) == LONG_TURNS, len(costs)
            if repeat:  # the first round warms up
                runs[name].append(costs)
    print(f"\nswarmkit measured: {swarmkit.__file__}")
    print(f"{LONG_TURNS}-turn session (a tool call per turn), ms per turn, median of repeats")
    met = _print_long(runs["raw client.post"], runs["OpenAIModel"], "OpenAIModel")
    met_responses = _print_long(
        runs["raw client.post /responses"], runs["OpenAIResponsesModel"], "OpenAIResponsesModel"
    )
    print(
        f"target ≤1.2x raw at {LONG_TURNS} turns: {'met' if met else 'not met'} (OpenAIModel);"
        f" {'met' if met_responses else 'not met'} (OpenAIResponsesModel)"
    )


def _print_long(raw: list[list[float]], ours: list[list[float]], name: str) -> bool:
    """Per-window medians and the ratios at 500 turns; whether both are within 1.2x."""
    print(f"{'turns':>9} {'raw client.post':>16} {name:>20} {'ratio':>6}")
    raw_w = [_windows(costs) for costs in raw]
    our_w = [_windows(costs) for costs in ours]
    for index in range(len(raw_w[0])):
        r = statistics.median(w[index] for w in raw_w)
        o = statistics.median(w[index] for w in our_w)
        turns = f"{index * LONG_WINDOW + 1}-{(index + 1) * LONG_WINDOW}"
        print(f"{turns:>9} {r * 1e3:16.3f} {o * 1e3:20.3f} {o / r:6.2f}")
    # Paired by repeat: the two sessions ran back to back.
    whole = sorted(
        statistics.fmean(o) / statistics.fmean(r) for o, r in zip(ours, raw, strict=True)
    )
    last = sorted(w_o[-1] / w_r[-1] for w_o, w_r in zip(our_w, raw_w, strict=True))
    mean_r = statistics.median(statistics.fmean(r) for r in raw) * 1e3
    mean_o = statistics.median(statistics.fmean(o) for o in ours) * 1e3
    print(f"whole session: {mean_o:.3f} ms vs {mean_r:.3f} ms per turn")
    last_label = f"turns {LONG_TURNS - LONG_WINDOW + 1}-{LONG_TURNS}"
    for label, ratios in (("whole session", whole), (last_label, last)):
        print(
            f"{name} / raw, {label}: min {ratios[0]:.2f} median {statistics.median(ratios):.2f}"
            f" max {ratios[-1]:.2f} over {len(ratios)} repeats"
        )
    return statistics.median(whole) <= 1.2 and statistics.median(last) <= 1.2


if __name__ == "__main__":
    if "long" not in sys.argv[1:]:
        asyncio.run(main())
    asyncio.run(long_main())
