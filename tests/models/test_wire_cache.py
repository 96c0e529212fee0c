"""Requests built from each message's cached wire form: the same bytes as built from scratch."""

from __future__ import annotations

import gc
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from swarmkit import Agent, Handoff, Swarm, tool
from swarmkit.filters import last_messages, remove_tool_calls
from swarmkit.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from swarmkit.models import Model, ModelRequest, ModelResponse, ModelSettings, ToolSpec
from swarmkit.models._chat_completions import request_json, request_params
from swarmkit.models._responses_wire import request_body
from swarmkit.models._responses_wire import request_json as responses_json
from swarmkit.models._wire_cache import WireCache
from tests.models.fake_openai import MODEL, chunk, completion, fake_api, sse, tool_call_json
from tests.models.fake_responses import answer, call_item, fake_responses_api


def encoded(body: dict[str, Any]) -> bytes:
    """JSON as the openai client encodes a body it is given as a dict."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def chat_from_scratch(request: ModelRequest) -> bytes:
    """The chat body built the plain way: every message converted and encoded now."""
    params = request_params(MODEL, request)
    extra = params.pop("extra_body", {})
    return encoded({**params, **extra, "stream": False})


@dataclass
class Recording:
    """A model that keeps every request it is asked, then asks the model it wraps."""

    inner: Model
    """The model that answers."""
    requests: list[ModelRequest] = field(default_factory=list)
    """The requests, in order."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return await self.inner.respond(request)


def lookup_reply(turn: int) -> Any:
    """A completion that calls the lookup tool."""
    call = tool_call_json(f"call_{turn}", "lookup", json.dumps({"invoice": f"A-{turn}"}))
    return completion(None, tool_calls=[call], finish_reason="tool_calls")


@tool
def lookup(invoice: str) -> str:
    """Look up one invoice."""
    return f"Invoice {invoice}: paid twice, 40.00 € each."


def history(turns: int) -> list[Message]:
    """A tool call and its result per turn, after a user message."""
    messages: list[Message] = [UserMessage(content="Refund me.")]
    for turn in range(turns):
        call = ToolCall(id=f"call_{turn}", name="lookup", arguments=f'{{"n": {turn}}}')
        messages.append(AssistantMessage(tool_calls=(call,)))
        messages.append(ToolMessage(tool_call_id=call.id, name="lookup", content=f"ok {turn}"))
    return messages


def ask(messages: Sequence[Message], **settings: Any) -> ModelRequest:
    """A request with fresh instructions before ``messages``, as the run loop builds one."""
    return ModelRequest(
        messages=(SystemMessage(content="Be brief."), *messages),
        tools=(ToolSpec(name="lookup", description="Look up.", parameters={"type": "object"}),),
        settings=ModelSettings(**settings),
    )


async def test_each_request_of_a_long_session_is_the_body_built_from_scratch() -> None:
    """Turn after turn, the bytes sent equal the whole history encoded anew."""
    api = fake_api(*[lookup_reply(turn) for turn in range(12)], completion("Refunded."))
    model = Recording(api.model)
    swarm = Swarm([Agent(name="billing", tools=[lookup])], "billing", model=model)

    result = await swarm.run("I was charged twice.")

    assert result.final_output == "Refunded."
    assert len(api.requests) == len(model.requests) == 13
    for sent, request in zip(api.requests, model.requests, strict=True):
        assert sent.content == chat_from_scratch(request)
    assert len(api.body(-1)["messages"]) == 2 + 2 * 12


async def test_a_filtered_handoff_and_a_continued_session_send_their_own_history() -> None:
    """An input filter's edited history and a history= continuation are sent as built anew."""
    transfer = tool_call_json("call_t", "transfer_to_billing", "{}")
    api = fake_api(
        lookup_reply(1),
        completion(None, tool_calls=[transfer], finish_reason="tool_calls"),
        completion("Billing here."),
        lookup_reply(2),
        completion("Refunded."),
    )
    model = Recording(api.model)
    billing = Agent(name="billing", tools=[lookup], handoffs=[])
    triage = Agent(
        name="triage",
        tools=[lookup],
        handoffs=[Handoff(agent=billing, input_filter=remove_tool_calls)],
    )
    swarm = Swarm([triage, billing], "triage", model=model)

    first = await swarm.run("I was charged twice.")
    await swarm.run("Please refund.", history=first)

    for sent, request in zip(api.requests, model.requests, strict=True):
        assert sent.content == chat_from_scratch(request)
    assert [m["role"] for m in api.body(2)["messages"]] == ["system", "user"]


def test_a_history_cut_short_or_forked_is_joined_from_its_own_messages() -> None:
    """After a long history, a shorter one, a fork of it and the long one again stay exact."""
    long = history(20)
    fork = [*long[:9], UserMessage(content="Something else.")]
    more = [*long, UserMessage(content="More.")]
    for messages in (long, long[:7], fork, long[5:7], long, more, []):
        request = ask(messages)
        assert request_json(MODEL, request) == chat_from_scratch(request)


def test_equal_messages_keep_their_own_wire_forms() -> None:
    """Two results alike but for their call ids are each sent with their own id."""
    first = ToolMessage(tool_call_id="call_a", name="lookup", content="same")
    second = ToolMessage(tool_call_id="call_b", name="lookup", content="same")
    twin = ToolMessage(tool_call_id="call_a", name="lookup", content="same")
    request = ask([first, second, twin])

    sent = json.loads(request_json(MODEL, request))

    assert [m.get("tool_call_id") for m in sent["messages"]] == [None, "call_a", "call_b", "call_a"]
    assert request_json(MODEL, request) == chat_from_scratch(request)


def test_a_collected_message_leaves_the_cache() -> None:
    """The cache holds a message's wire form only while the message lives."""
    cache = WireCache(lambda message: json.dumps(message.kind).encode())
    messages: list[Message] = [UserMessage(content=str(n)) for n in range(50)]
    cache.array(messages)
    assert len(cache) > 0

    del messages
    gc.collect()

    assert len(cache) == 0


def test_extra_body_may_override_the_message_list() -> None:
    """extra_body fields are merged as before, also one that replaces the messages."""
    replaced = [{"role": "user", "content": "instead"}]
    for extra in ({"messages": replaced, "top_k": 3}, {"model": "other", "stream": True}):
        request = ask(history(3), extra_body=extra)
        assert request_json(MODEL, request) == chat_from_scratch(request)
    assert (
        json.loads(request_json(MODEL, ask([], extra_body={"messages": replaced})))["messages"]
        == replaced
    )


def test_text_that_is_not_ascii_or_not_unicode_is_sent_as_before() -> None:
    """Accents, emoji and a lone surrogate encode exactly as the plain path does."""
    messages = [UserMessage(content="Zoë paid 40 € 🙂"), UserMessage(content="bad \udc80 byte")]
    request = ask(messages)
    assert request_json(MODEL, request) == chat_from_scratch(request)


def test_responses_bodies_are_the_input_built_from_scratch() -> None:
    """The Responses body, streamed or not, equals its input items encoded anew."""
    long = history(10)
    for messages in (long, long[:5], [*long, AssistantMessage(content="Done.")], []):
        request = ask([*messages, AssistantMessage()], temperature=0.5)
        body = request_body(MODEL, request)
        assert responses_json(MODEL, request) == encoded(body)
        assert responses_json(MODEL, request, stream=True) == encoded({**body, "stream": True})


async def test_a_responses_session_sends_each_turn_as_built_from_scratch() -> None:
    """Through OpenAIResponsesModel, every request's bytes are its body encoded anew."""
    calls = [
        answer(None, calls=[call_item(f"call_{n}", "lookup", '{"invoice": "A"}')]) for n in range(5)
    ]
    api = fake_responses_api(*calls, answer("Refunded."))
    model = Recording(api.model)
    swarm = Swarm([Agent(name="billing", tools=[lookup])], "billing", model=model)

    await swarm.run("I was charged twice.")

    for sent, request in zip(api.requests, model.requests, strict=True):
        assert sent.content == encoded(request_body(MODEL, request))


async def test_a_last_messages_filter_sends_only_the_kept_messages() -> None:
    """last_messages(2) on a handoff: the receiving agent's request holds just those two."""
    transfer = tool_call_json("call_t", "transfer_to_billing", "{}")
    api = fake_api(
        lookup_reply(1),
        completion(None, tool_calls=[transfer], finish_reason="tool_calls"),
        completion("Billing here."),
    )
    billing = Agent(name="billing", handoffs=[])
    triage = Agent(
        name="triage",
        tools=[lookup],
        handoffs=[Handoff(agent=billing, input_filter=last_messages(2))],
    )
    model = Recording(api.model)

    await Swarm([triage, billing], "triage", model=model).run("Hi.")

    assert api.requests[2].content == chat_from_scratch(model.requests[2])
    assert len(api.body(2)["messages"]) == 3


async def test_a_streamed_call_sends_the_whole_history_with_the_stream_fields() -> None:
    """A streamed call's body is the request's params plus stream and usage options."""
    api = fake_api(
        sse(chunk(content="Hi", finish_reason="stop"), chunk(usage=(3, 1), choices=False))
    )
    request = ask(history(4), extra_body={"top_k": 3})

    items = [item async for item in api.model.stream(request)]

    assert isinstance(items[-1], ModelResponse)
    expected = request_params(MODEL, request)
    extra = expected.pop("extra_body")
    assert api.body() == {
        **expected,
        **extra,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
