"""Benchmark: each model adapter's per-call time against its SDK's raw call, same server.

One loopback HTTP/1.1 server (keep-alive, canned answers) serves Anthropic Messages, Gemini
generateContent, Chat Completions and Responses. For each provider the SDK's own call and the
adapter's ``respond`` (same client settings, same conversation, a tool offered) are timed in
one process, interleaved round by round, alternating which goes first. Prints the median
microseconds per call and the ratio adapter/raw (target: 1.2 or less). With ``--baseline
PATH`` (another checkout), also times ``import swarmkit`` there and here, interleaved.

    .venv/bin/python bench/providers.py [--rounds 9] [--calls 200] [--baseline ../main]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
from _size import size
from google import genai
from google.genai import types

from swarmkit.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from swarmkit.models import (
    AnthropicModel,
    GeminiModel,
    Model,
    ModelRequest,
    OpenAIModel,
    OpenAIResponsesModel,
    ToolSpec,
)

TURNS = size(10, 2)
"""Tool round trips in the conversation each call sends."""

TOOL = ToolSpec(
    name="lookup",
    description="Look an order up.",
    parameters={"type": "object", "properties": {"order": {"type": "string"}}},
)

ANSWERS: dict[str, dict[str, Any]] = {
    "anthropic": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-bench",
        "content": [{"type": "text", "text": "All shipped."}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 5},
    },
    "gemini": {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "All shipped."}]},
                        "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 5,
                          "totalTokenCount": 105},
    },
    "chat": {
        "id": "c", "object": "chat.completion", "model": "gpt-bench", "created": 0,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "All shipped."}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
    },
    "responses": {
        "id": "r", "object": "response", "status": "completed", "model": "gpt-bench",
        "created_at": 0, "output": [{"type": "message", "id": "m", "role": "assistant",
                                     "status": "completed", "content": [
                                         {"type": "output_text", "text": "All shipped.",
                                          "annotations": []}]}],
        "usage": {"input_tokens": 100, "output_tokens": 5, "total_tokens": 105},
    },
}  # fmt: skip


def _api_of(path: str) -> str:
    if path.startswith("/anthropic/"):
        return "anthropic"
    if path.startswith("/gemini/"):
        return "gemini"
    return "responses" if path.endswith("/responses") else "chat"


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer requests on one keep-alive connection until the client closes it."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            length = next(
                (int(v) for n, _, v in (h.partition(":") for h in lines[1:])
                 if n.strip().lower() == "content-length"),
                0,
            )  # fmt: skip
            await reader.readexactly(length)
            raw = _BODIES[_api_of(lines[0].split(" ")[1])]
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(raw)}\r\n\r\n".encode()
                + raw
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
        pass  # the client closed, or the benchmark ended with connections still open
    finally:
        writer.close()


_BODIES = {api: json.dumps(answer).encode() for api, answer in ANSWERS.items()}


def _history() -> tuple[Message, ...]:
    messages: list[Message] = [UserMessage(content="Where are my orders?")]
    for turn in range(TURNS):
        arguments = json.dumps({"order": f"A{turn}"})
        call = ToolCall(id=f"call_{turn}", name="lookup", arguments=arguments)
        messages.append(AssistantMessage(content=None, tool_calls=(call,)))
        messages.append(ToolMessage(tool_call_id=call.id, name="lookup", content="shipped"))
    return tuple(messages)


def _anthropic_raw(client: anthropic.AsyncAnthropic) -> Callable[[], Awaitable[object]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Where are my orders?"}]
    for turn in range(TURNS):
        use = {"type": "tool_use", "id": f"call_{turn}", "name": "lookup",
               "input": {"order": f"A{turn}"}}  # fmt: skip
        result = {"type": "tool_result", "tool_use_id": f"call_{turn}", "content": "shipped"}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    tool = {"name": "lookup", "description": TOOL.description, "input_schema": TOOL.parameters}

    async def call() -> object:
        return await client.messages.create(
            model="claude-bench",
            max_tokens=4096,
            system="Help.",
            messages=messages,  # type: ignore[arg-type]
            tools=[tool],  # type: ignore[list-item]
        )

    return call


def _gemini_raw(client: genai.Client) -> Callable[[], Awaitable[object]]:
    contents: list[types.Content] = [
        types.Content(role="user", parts=[types.Part(text="Where are my orders?")])
    ]
    for turn in range(TURNS):
        asked = types.FunctionCall(name="lookup", args={"order": f"A{turn}"})
        answered = types.FunctionResponse(name="lookup", response={"result": "shipped"})
        contents += [
            types.Content(role="model", parts=[types.Part(function_call=asked)]),
            types.Content(role="user", parts=[types.Part(function_response=answered)]),
        ]
    declaration = types.FunctionDeclaration(
        name="lookup", description=TOOL.description, parameters_json_schema=TOOL.parameters
    )

    async def call() -> object:
        config = types.GenerateContentConfig(
            system_instruction="Help.",
            tools=[types.Tool(function_declarations=[declaration])],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        return await client.aio.models.generate_content(
            model="gemini-bench", contents=contents, config=config
        )

    return call


def _openai_messages() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Help."},
        {"role": "user", "content": "Where are my orders?"},
    ]
    for turn in range(TURNS):
        function = {"name": "lookup", "arguments": json.dumps({"order": f"A{turn}"})}
        messages.append({"role": "assistant", "content": "",
                         "tool_calls": [{"id": f"call_{turn}", "type": "function",
                                         "function": function}]})  # fmt: skip
        messages.append({"role": "tool", "tool_call_id": f"call_{turn}", "content": "shipped"})
    return messages


def _chat_raw(client: openai.AsyncOpenAI) -> Callable[[], Awaitable[object]]:
    messages = _openai_messages()
    tool = {"type": "function", "function": {"name": "lookup", "description": TOOL.description,
                                             "parameters": TOOL.parameters}}  # fmt: skip

    async def call() -> object:
        return await client.chat.completions.create(
            model="gpt-bench",
            messages=messages,  # type: ignore[arg-type]
            tools=[tool],  # type: ignore[list-item]
        )

    return call


def _responses_raw(client: openai.AsyncOpenAI) -> Callable[[], Awaitable[object]]:
    items: list[dict[str, Any]] = [
        {"role": "system", "content": "Help."},
        {"role": "user", "content": "Where are my orders?"},
    ]
    for turn in range(TURNS):
        items.append({"type": "function_call", "call_id": f"call_{turn}", "name": "lookup",
                      "arguments": json.dumps({"order": f"A{turn}"})})  # fmt: skip
        items.append({"type": "function_call_output", "call_id": f"call_{turn}",
                      "output": "shipped"})  # fmt: skip
    tool = {"type": "function", "name": "lookup", "description": TOOL.description,
            "parameters": TOOL.parameters, "strict": False}  # fmt: skip

    async def call() -> object:
        return await client.responses.create(
            model="gpt-bench",
            input=items,  # type: ignore[arg-type]
            tools=[tool],  # type: ignore[list-item]
        )

    return call


def _adapter(model: Model) -> Callable[[], Awaitable[object]]:
    request = ModelRequest(
        messages=(SystemMessage(content="Help."), *_history()), tools=(TOOL,), agent="bench"
    )

    async def call() -> object:
        return await model.respond(request)

    return call


async def _time(call: Callable[[], Awaitable[object]], calls: int) -> float:
    """Microseconds per call, over ``calls`` calls."""
    started = time.perf_counter()
    for _ in range(calls):
        await call()
    return (time.perf_counter() - started) / calls * 1e6


def _pairs(url: str) -> dict[str, tuple[Callable[[], Awaitable[object]], ...]]:
    claude = anthropic.AsyncAnthropic(api_key="k", base_url=f"{url}/anthropic", max_retries=0)
    options = types.HttpOptions(base_url=f"{url}/gemini", api_version="v1beta")
    gemini = genai.Client(api_key="k", http_options=options)
    oai = openai.AsyncOpenAI(api_key="k", base_url=f"{url}/v1", max_retries=0)
    return {
        "anthropic": (_anthropic_raw(claude), _adapter(AnthropicModel("c", client=claude))),
        "gemini": (_gemini_raw(gemini), _adapter(GeminiModel("gemini-bench", client=gemini))),
        "openai chat": (_chat_raw(oai), _adapter(OpenAIModel("gpt-bench", client=oai))),
        "openai responses": (
            _responses_raw(oai),
            _adapter(OpenAIResponsesModel("gpt-bench", client=oai)),
        ),
    }


async def _calls(rounds: int, calls: int) -> None:
    listener = await asyncio.start_server(_serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}"
    pairs = _pairs(url)
    print(f"{'provider':<18}{'raw µs':>10}{'adapter µs':>12}{'ratio':>8}")
    for name, (raw, ours) in pairs.items():
        await raw()
        await ours()  # warm both: connections, caches
        raws: list[float] = []
        adapters: list[float] = []
        for index in range(rounds):
            order = [(raw, raws), (ours, adapters)]
            for call, sink in order if index % 2 == 0 else reversed(order):
                sink.append(await _time(call, calls))
        raw_us, ours_us = statistics.median(raws), statistics.median(adapters)
        print(f"{name:<18}{raw_us:>10.0f}{ours_us:>12.0f}{ours_us / raw_us:>8.2f}")
    listener.close()


def _import_seconds(root: str) -> float:
    env = {**os.environ, "PYTHONPATH": root}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import swarmkit"], env=env, check=True)
    return time.perf_counter() - started


def _imports(baseline: str, rounds: int) -> None:
    here = str(Path(__file__).resolve().parents[1])
    base: list[float] = []
    ours: list[float] = []
    for index in range(rounds * 2):
        order = [(baseline, base), (here, ours)]
        for root, sink in order if index % 2 == 0 else reversed(order):
            sink.append(_import_seconds(root))
    b, o = statistics.median(base), statistics.median(ours)
    print(f"import swarmkit: baseline {b * 1000:.0f} ms, here {o * 1000:.0f} ms, ratio {o / b:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--baseline", help="another checkout whose import time to compare")
    args = parser.parse_args()
    asyncio.run(_calls(args.rounds, args.calls))
    if args.baseline:
        _imports(args.baseline, args.rounds)


if __name__ == "__main__":
    main()
