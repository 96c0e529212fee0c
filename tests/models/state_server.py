"""A loopback server that speaks four model APIs and enforces each provider's state rule.

It answers Anthropic Messages, Gemini generateContent, Chat Completions and Responses
requests from one script of provider-neutral turns, giving every turn the state its provider
gives: a signed thinking block (Anthropic), a thought signature on each function call
(Gemini, natively and through the OpenAI-compatible ``extra_content``), ``reasoning_content``
and a reasoning item with encrypted content (Responses). Like the real services, it refuses
with a 400 any follow-up whose history holds one of its calls without the state that came
with it, so a test fails whenever an adapter, handoff, filter, journal or replay drops it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

SKIP_SIGNATURE = "skip_thought_signature_validator"
"""The signature Gemini accepts on a function call it did not make."""


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One scripted answer: text, or tool calls (name and JSON arguments), or an HTTP error."""

    text: str = ""
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    status: int = 200


def say(text: str) -> Turn:
    """A turn that answers in text."""
    return Turn(text=text)


def call(name: str, **arguments: Any) -> Turn:
    """A turn that calls one tool."""
    return Turn(calls=((name, arguments),))


def fail(status: int = 500) -> Turn:
    """A turn that fails with ``status``."""
    return Turn(status=status)


@dataclass(kw_only=True)
class StateServer:
    """The script, what was issued with each call, and every request seen."""

    script: list[Turn] = field(default_factory=list)
    """The turns still to serve, in order (any API takes the next one)."""
    issued: dict[str, dict[str, Any]] = field(default_factory=dict)
    """By API, then by call id: the state a follow-up must send back with that call."""
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(path, JSON body) of every request."""
    refusals: list[str] = field(default_factory=list)
    """Why each refused request was refused."""
    port: int = 0
    """The port it listens on."""
    _count: int = 0

    @property
    def url(self) -> str:
        """The root URL."""
        return f"http://127.0.0.1:{self.port}"

    def _of(self, api: str) -> dict[str, Any]:
        return self.issued.setdefault(api, {})

    def add(self, *turns: Turn) -> None:
        """Queue more turns."""
        self.script.extend(turns)

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and JSON answer to one request."""
        self.requests.append((path, body))
        api = _api_of(path)
        problem = _CHECKS[api](self, body)
        if problem:
            self.refusals.append(problem)
            return 400, {"error": {"type": "invalid_request_error", "message": problem}}
        if not self.script:
            return 500, {"error": {"type": "api_error", "message": "script used up"}}
        turn = self.script.pop(0)
        if turn.status != 200:
            return turn.status, {"error": {"type": "api_error", "message": "scripted failure"}}
        self._count += 1
        return 200, _ANSWERS[api](self, turn, self._count)

    # -- what each API's answer carries -------------------------------------------------------

    def _anthropic(self, turn: Turn, n: int) -> dict[str, Any]:
        thinking = {"type": "thinking", "thinking": f"plan {n}", "signature": f"sig-{n}"}
        blocks: list[dict[str, Any]] = [thinking]
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        for i, (name, arguments) in enumerate(turn.calls):
            call_id = f"toolu_{n}_{i}"
            self._of("anthropic")[call_id] = thinking
            told = f"Called {name}({json.dumps(arguments, ensure_ascii=False)})"
            self._of("anthropic-told")[told] = call_id
            blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": blocks,
            "stop_reason": "tool_use" if turn.calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_read_input_tokens": 3,
                "cache_creation_input_tokens": 2,
            },
        }

    def _gemini(self, turn: Turn, n: int) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        if turn.text:
            parts.append({"text": turn.text})
        for i, (name, arguments) in enumerate(turn.calls):
            call_id = f"gcall_{n}_{i}"
            signature = base64.b64encode(f"gsig-{n}-{i}".encode()).decode()
            self._of("gemini")[call_id] = signature
            self._of("gemini")[_call_key(name, arguments)] = signature
            function_call = {"id": call_id, "name": name, "args": arguments}
            parts.append({"functionCall": function_call, "thoughtSignature": signature})
        candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": "gemini-test",
            "responseId": f"gresp_{n}",
        }

    def _chat(self, turn: Turn, n: int) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": turn.text or None,
            "reasoning_content": f"thought {n}",
        }
        calls = []
        for i, (name, arguments) in enumerate(turn.calls):
            call_id = f"call_{n}_{i}"
            extra = {"google": {"thought_signature": f"csig-{n}-{i}"}}
            self._of("chat")[call_id] = (extra, f"thought {n}")
            function = {"name": name, "arguments": json.dumps(arguments)}
            calls.append(
                {"id": call_id, "type": "function", "function": function, "extra_content": extra}
            )
        if calls:
            message["tool_calls"] = calls
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": "tool_calls" if calls else "stop",
        }
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        return {"id": f"c{n}", "object": "chat.completion", "model": "chat-test",
                "choices": [choice], "usage": usage}  # fmt: skip

    def _responses(self, turn: Turn, n: int) -> dict[str, Any]:
        reasoning = {
            "type": "reasoning",
            "id": f"rs_{n}",
            "summary": [],
            "encrypted_content": f"enc-{n}",
        }
        output: list[dict[str, Any]] = [reasoning]
        if turn.text:
            content = [{"type": "output_text", "text": turn.text, "annotations": []}]
            output.append({"type": "message", "id": f"msg_{n}", "role": "assistant",
                           "status": "completed", "content": content})  # fmt: skip
        for i, (name, arguments) in enumerate(turn.calls):
            call_id = f"fc_{n}_{i}"
            self._of("responses")[call_id] = reasoning
            output.append({"type": "function_call", "id": f"fcid_{n}_{i}", "call_id": call_id,
                           "name": name, "arguments": json.dumps(arguments),
                           "status": "completed"})  # fmt: skip
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        return {"id": f"resp_{n}", "object": "response", "status": "completed",
                "model": "responses-test", "output": output, "usage": usage}  # fmt: skip

    # -- the rule each API enforces -----------------------------------------------------------

    def _check_anthropic(self, body: dict[str, Any]) -> str | None:
        messages = body.get("messages", [])
        if "thinking" in body and len(messages) >= 2 and _answers_tools(messages[-1]):
            opening = messages[-2]["content"][0]
            if opening.get("type") not in ("thinking", "redacted_thinking"):
                return "Expected thinking or redacted_thinking, but found " + str(opening["type"])
        for turn in messages:
            told = json.dumps(turn.get("content"))
            for text, call_id in self._of("anthropic-told").items():
                if json.dumps(text)[1:-1] in told:
                    # Text is the fallback for another model's calls; ours lost their thinking.
                    return f"tool_use {call_id} came back as text, without its signed thinking"
            if turn.get("role") != "assistant" or isinstance(turn.get("content"), str):
                continue
            blocks = turn["content"]
            for block in blocks:
                wanted = (
                    self._of("anthropic").get(block.get("id", ""))
                    if block["type"] == "tool_use"
                    else None
                )
                if wanted is not None and wanted not in blocks:
                    return f"tool_use {block['id']} came without its signed thinking block"
        return None

    def _check_gemini(self, body: dict[str, Any]) -> str | None:
        problem = self._check_gemini_signatures(body)
        if problem:
            return problem
        contents = body.get("contents", [])
        parts = [part for content in contents for part in content.get("parts", [])]
        asked = {p["functionCall"].get("id") for p in parts if "functionCall" in p}
        for part in parts:
            answered = part.get("functionResponse", {}).get("id")
            if answered is not None and answered not in asked:
                return f"function response {answered} answers no function call"
        return None

    def _check_gemini_signatures(self, body: dict[str, Any]) -> str | None:
        for content in body.get("contents", []):
            if content.get("role") != "model":
                continue
            for part in content.get("parts", []):
                function_call = part.get("functionCall")
                if function_call is None:
                    continue
                # By id, or by what it asked (a call sent back without its id is still ours).
                wanted = self._of("gemini").get(function_call.get("id", "")) or self._of(
                    "gemini"
                ).get(
                    _call_key(function_call.get("name", ""), function_call.get("args") or {}),
                    SKIP_SIGNATURE,
                )
                got = part.get("thoughtSignature")
                if got != wanted and not (got == _SKIP_B64 and wanted == SKIP_SIGNATURE):
                    return f"function call {function_call.get('name')} lacks its thought signature"
        return None

    def _check_chat(self, body: dict[str, Any]) -> str | None:
        for message in body.get("messages", []):
            for tool_call in message.get("tool_calls") or []:
                wanted = self._of("chat").get(tool_call.get("id"))
                if wanted is None:
                    continue
                extra, reasoning = wanted
                if tool_call.get("extra_content") != extra:
                    return (
                        f"tool call {tool_call['id']} lacks extra_content.google.thought_signature"
                    )
                if message.get("reasoning_content") != reasoning:
                    return f"tool call {tool_call['id']} lacks its message's reasoning_content"
        return None

    def _check_responses(self, body: dict[str, Any]) -> str | None:
        items = body.get("input", [])
        for index, item in enumerate(items):
            wanted = (
                self._of("responses").get(item.get("call_id", ""))
                if item.get("type") == "function_call"
                else None
            )
            if wanted is not None and wanted not in items[:index]:
                return f"function_call {item['call_id']} came without its reasoning item"
        return None


def _answers_tools(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def _call_key(name: str, arguments: Mapping[str, Any]) -> str:
    return json.dumps([name, arguments], sort_keys=True)


_SKIP_B64 = base64.b64encode(SKIP_SIGNATURE.encode()).decode()


def _api_of(path: str) -> str:
    if path.startswith("/anthropic/"):
        return "anthropic"
    if path.startswith("/gemini/"):
        return "gemini"
    return "responses" if path.endswith("/responses") else "chat"


_ANSWERS: dict[str, Callable[[StateServer, Turn, int], dict[str, Any]]] = {
    "anthropic": StateServer._anthropic,
    "gemini": StateServer._gemini,
    "chat": StateServer._chat,
    "responses": StateServer._responses,
}
_CHECKS: dict[str, Callable[[StateServer, dict[str, Any]], str | None]] = {
    "anthropic": StateServer._check_anthropic,
    "gemini": StateServer._check_gemini,
    "chat": StateServer._check_chat,
    "responses": StateServer._check_responses,
}


async def _handle(
    server: StateServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1].split("?")[0]
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        body = json.loads(await reader.readexactly(length) or b"{}")
        status, answer = server.answer(path, body)
        streamed = status == 200 and (body.get("stream") is True or "stream" in path.lower())
        raw = _sse(_api_of(path), answer) if streamed else json.dumps(answer).encode()
        kind = "text/event-stream" if streamed else "application/json"
        head_out = (
            f"HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\n"
            f"Content-Length: {len(raw)}\r\nConnection: close\r\n\r\n"
        )
        writer.write(head_out.encode() + raw)
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


def _sse(api: str, answer: dict[str, Any]) -> bytes:
    """The answer as its API streams it, each signature and reasoning field in its own event."""
    events = _STREAMS[api](answer)
    # Gemini's stream is plain data lines; the others name each event.
    lines = [("" if api == "gemini" else f"event: {name}\n") + f"data: {json.dumps(data)}\n\n"
             for name, data in events]  # fmt: skip
    return "".join(lines).encode()


def _anthropic_stream(answer: dict[str, Any]) -> list[tuple[str, Any]]:
    start = {**answer, "content": [], "stop_reason": None}
    events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(answer["content"]):
        empty: dict[str, Any] = _EMPTY[block["type"]]
        opened = {"type": "content_block_start", "index": index,
                  "content_block": {**block, **empty}}  # fmt: skip
        events.append(("content_block_start", opened))
        for delta in _block_deltas(block):
            event = {"type": "content_block_delta", "index": index, "delta": delta}
            events.append(("content_block_delta", event))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    ending = {"type": "message_delta", "delta": {"stop_reason": answer["stop_reason"]},
              "usage": {"output_tokens": answer["usage"]["output_tokens"]}}  # fmt: skip
    return [*events, ("message_delta", ending), ("message_stop", {"type": "message_stop"})]


_EMPTY: dict[str, dict[str, Any]] = {
    "thinking": {"thinking": "", "signature": ""},
    "text": {"text": ""},
    "tool_use": {"input": {}},
}


def _block_deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "thinking":
        return [
            {"type": "thinking_delta", "thinking": block["thinking"]},
            {"type": "signature_delta", "signature": block["signature"]},
        ]
    if block["type"] == "text":
        return [{"type": "text_delta", "text": block["text"]}]
    return [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]


def _chat_stream(answer: dict[str, Any]) -> list[tuple[str, Any]]:
    message = answer["choices"][0]["message"]
    deltas = [{"reasoning_content": message["reasoning_content"]}]
    if message.get("content"):
        deltas.append({"content": message["content"]})
    deltas += [
        {"tool_calls": [{**c, "index": i}]} for i, c in enumerate(message.get("tool_calls", []))
    ]
    finish = answer["choices"][0]["finish_reason"]
    chunks = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                   "usage": answer["usage"]})  # fmt: skip
    return [("chunk", {"id": "c", "object": "chat.completion.chunk", "model": "m", **c})
            for c in chunks]  # fmt: skip


def _responses_stream(answer: dict[str, Any]) -> list[tuple[str, Any]]:
    events: list[tuple[str, Any]] = []
    for index, item in enumerate(answer["output"]):
        added = {"type": "response.output_item.added", "output_index": index, "item": item}
        events.append((added["type"], added))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(("response.output_text.delta",
                           {"type": "response.output_text.delta", "output_index": index,
                            "delta": text}))  # fmt: skip
        done = {"type": "response.output_item.done", "output_index": index, "item": item}
        events.append((done["type"], done))
    return [*events, ("response.completed", {"type": "response.completed", "response": answer})]


def _gemini_stream(answer: dict[str, Any]) -> list[tuple[str, Any]]:
    return [("message", answer)]


_STREAMS: dict[str, Callable[[dict[str, Any]], list[tuple[str, Any]]]] = {
    "anthropic": _anthropic_stream,
    "gemini": _gemini_stream,
    "chat": _chat_stream,
    "responses": _responses_stream,
}


@contextlib.asynccontextmanager
async def state_server(*turns: Turn) -> AsyncIterator[StateServer]:
    """A StateServer on a free loopback port serving ``turns``, closed at exit."""
    server = StateServer(script=list(turns))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _handle(server, reader, writer)

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listener.close()
        await listener.wait_closed()


def answered(server: StateServer, api: str) -> int:
    """How many requests of ``api`` the server saw."""
    return sum(1 for path, _ in server.requests if _api_of(path) == api)


def bodies(server: StateServer, api: str) -> list[Mapping[str, Any]]:
    """The bodies of ``api``'s requests, in order."""
    return [body for path, body in server.requests if _api_of(path) == api]
