"""Hostile model servers: odd but parseable answers, trickles and stream faults, over a socket."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from swarmkit import Agent, OpenAIModel, OpenAIResponsesModel, Swarm, tool
from swarmkit.console import LiveView
from swarmkit.events import ModelAttemptDiscarded, TextDelta
from swarmkit.exceptions import ModelError
from swarmkit.journal import SQLiteJournal, export_jsonl, import_jsonl
from swarmkit.messages import UserMessage
from swarmkit.models import AttemptDiscarded, ModelRequest, ModelResponse, Timeouts
from swarmkit.models import TextDelta as ModelTextDelta

from .raw_server import (
    TWO_TRIES,
    Reply,
    completion,
    failure,
    json_reply,
    keep_alive_only,
    raw_reply,
    raw_server,
    silent,
    sse_reply,
    text_chunk,
    trickle,
)

ASK = ModelRequest(messages=(UserMessage(content="Hi"),))


def _call(name: Any, arguments: Any) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


ODD_ANSWERS = [
    pytest.param(
        completion({"content": None, "tool_calls": {"id": "c"}}),
        "message.tool_calls must be a list or null, got an object",
        id="tool_calls-object",
    ),
    pytest.param(
        completion({"content": None, "tool_calls": "lookup"}),
        "message.tool_calls must be a list or null, got a string",
        id="tool_calls-string",
    ),
    pytest.param(
        completion({"content": None, "tool_calls": ["lookup"]}),
        "tool_calls[0] must be an object, got a string",
        id="tool_call-string",
    ),
    pytest.param(
        completion({"content": None, "tool_calls": [_call("lookup", {"q": 1})]}),
        "tool_calls[0].function.arguments must be a string or null, got an object",
        id="arguments-object",
    ),
    pytest.param(
        completion({"content": None, "tool_calls": [_call(7, "{}")]}),
        "tool_calls[0].function.name must be a string or null, got a number",
        id="name-number",
    ),
    pytest.param(
        completion({"content": "hi"}, usage={"prompt_tokens": "12", "total_tokens": "12"}),
        "usage.prompt_tokens must be a non-negative integer, got '12'",
        id="usage-strings",
    ),
    pytest.param(
        completion({"content": "hi"}, usage=[1, 2]),
        "usage must be an object, got a list",
        id="usage-list",
    ),
    pytest.param(
        completion({"content": [{"type": "text", "text": "hi"}]}),
        "message.content must be a string or null, got a list",
        id="content-list",
    ),
    pytest.param(
        completion({"content": 42}),
        "message.content must be a string or null, got a number",
        id="content-number",
    ),
    pytest.param(
        completion({"content": True}),
        "message.content must be a string or null, got a boolean",
        id="content-boolean",
    ),
    pytest.param(
        {**completion({"content": "hi"}), "model": ["m"]},
        "model must be a string or null, got a list",
        id="model-list",
    ),
    pytest.param(
        completion({"content": None, "tool_calls": [{"id": 5, "function": {"name": "f"}}]}),
        "tool_calls[0].id must be a string or null, got a number",
        id="call-id-number",
    ),
    pytest.param(
        completion({"content": None, "tool_calls": [{"id": "c", "type": "function"}]}),
        "tool_calls[0].function must be an object, got null",
        id="call-without-function",
    ),
    pytest.param(
        completion({"content": "hi"}, usage={"prompt_tokens": -3}),
        "usage.prompt_tokens must be a non-negative integer, got -3",
        id="usage-negative",
    ),
    pytest.param(
        completion({"content": "hi"}, usage={"prompt_tokens": 2.5}),
        "usage.prompt_tokens must be a non-negative integer, got 2.5",
        id="usage-fraction",
    ),
]


@pytest.mark.parametrize(("answer", "detail"), ODD_ANSWERS)
async def test_an_odd_answer_is_a_model_error(answer: dict[str, Any], detail: str) -> None:
    """A well-formed JSON answer of the wrong shape is a ModelError naming the field."""
    async with raw_server(json_reply(answer)) as server:
        with pytest.raises(ModelError) as caught:
            await server.model().respond(ASK)

    first_line = str(caught.value).splitlines()[0]
    assert first_line == f"model 'gpt-raw' failed (unexpected_response): {detail}"
    assert server.requests == 1


BIG = "1" + "0" * 5000
DEEP = '{"a":' * 100_000 + "1" + "}" * 100_000
ANSWER = '{"choices":[{"index":0,"message":{"content":"hi"},"finish_reason":"stop"}]'
CHUNK = '{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]'

UNDECODABLE = [
    pytest.param(
        raw_reply(ANSWER + ',"usage":{"prompt_tokens":' + BIG + "}}"),
        "failed (unexpected_response): the answer cannot be decoded: Exceeds the limit (4300 "
        "digits) for integer string conversion: value has 5001 digits; use "
        "sys.set_int_max_str_digits() to increase the limit",
        id="int-over-4300-digits",
    ),
    pytest.param(
        raw_reply(ANSWER + ',"extra":' + DEEP + "}"),
        "failed (unexpected_response): the answer is nested too deeply to decode",
        id="nested-too-deep",
    ),
    pytest.param(
        json_reply([1, 2]),
        "failed (incomplete_response): expected a JSON object, got list",
        id="array",
    ),
    pytest.param(
        json_reply({"choices": {"0": {}}}),
        "failed (incomplete_response): the response holds no choices",
        id="choices-object",
    ),
    pytest.param(
        json_reply({"error": {"message": "bad model", "type": "invalid_request_error"}}),
        "failed (error_answer): bad model",
        id="error-object",
    ),
]


@pytest.mark.parametrize(("reply", "detail"), UNDECODABLE)
async def test_an_answer_that_cannot_be_decoded_is_a_model_error(reply: Reply, detail: str) -> None:
    """What the client's decoder raises (ValueError, RecursionError) is a ModelError too."""
    async with raw_server(reply) as server:
        with pytest.raises(ModelError) as caught:
            await server.model().respond(ASK)

    assert str(caught.value).splitlines()[0] == f"model 'gpt-raw' {detail}"


async def test_an_integer_past_4300_digits_in_a_stream_is_a_model_error() -> None:
    """The stream's decoder fails the same way, as a ModelError."""
    event = "data: " + CHUNK + ',"usage":{"total_tokens":' + BIG + "}}\n\n"
    async with raw_server(sse_reply(event)) as server:
        with pytest.raises(ModelError) as caught:
            async for _ in server.model().stream(ASK):
                pass

    assert str(caught.value).splitlines()[0] == (
        "model 'gpt-raw' failed (unexpected_response): the answer cannot be decoded: Exceeds the "
        "limit (4300 digits) for integer string conversion: value has 5001 digits; use "
        "sys.set_int_max_str_digits() to increase the limit"
    )


async def test_a_transient_error_object_is_retried() -> None:
    """An error object that says it is transient (a server error) earns another attempt."""
    busy = json_reply({"error": {"message": "overloaded", "type": "server_error"}})
    async with raw_server(busy, json_reply(completion({"content": "hi"}))) as server:
        response = await server.model(retry=TWO_TRIES).respond(ASK)

    assert response.message.content == "hi"
    assert server.requests == 2


async def test_usage_counted_in_whole_floats_is_accepted() -> None:
    """12.0 tokens is 12 tokens: some servers write counts as JSON floats."""
    answer = completion({"content": "hi"}, usage={"prompt_tokens": 12.0, "total_tokens": 12.0})
    async with raw_server(json_reply(answer)) as server:
        response = await server.model().respond(ASK)

    assert (response.usage.prompt_tokens, response.usage.total_tokens) == (12, 12)


ODD_STREAMS = [
    pytest.param(
        sse_reply({**text_chunk(), "choices": [{"index": 0, "delta": {"content": 5}}]}),
        "failed (unexpected_response): delta.content must be a string or null, got a number",
        id="delta-number",
    ),
    pytest.param(
        sse_reply({**text_chunk(), "choices": [{"index": 0, "delta": {"content": ["a"]}}]}),
        "failed (unexpected_response): delta.content must be a string or null, got a list",
        id="delta-list",
    ),
    pytest.param(
        sse_reply(
            {**text_chunk(), "choices": [{"index": 0, "delta": {"tool_calls": {"index": 0}}}]}
        ),
        "failed (unexpected_response): delta.tool_calls must be a list or null, got an object",
        id="delta-tool_calls-object",
    ),
    pytest.param(
        sse_reply(text_chunk(finish="stop"), {**text_chunk(), "usage": {"total_tokens": "9"}}),
        "failed (unexpected_response): usage.total_tokens must be a non-negative integer, got '9'",
        id="stream-usage-string",
    ),
    pytest.param(
        sse_reply(text_chunk("Hel"), {"error": {"message": "bad input", "type": "invalid"}}),
        "failed (stream_error): bad input",
        id="error-event",
    ),
]


@pytest.mark.parametrize(("reply", "detail"), ODD_STREAMS)
async def test_an_odd_stream_is_a_model_error(reply: Reply, detail: str) -> None:
    """A stream event of the wrong shape, or an error event, is a ModelError."""
    async with raw_server(reply) as server:
        with pytest.raises(ModelError) as caught:
            async for _ in server.model().stream(ASK):
                pass

    assert str(caught.value).splitlines()[0] == f"model 'gpt-raw' {detail}"


STALLS = [
    pytest.param(
        silent,
        False,
        Timeouts(first_byte=30),
        "timeout_first_byte",
        "first-byte deadline of 30 s",
        id="silent",
    ),
    pytest.param(
        trickle,
        False,
        Timeouts(total=60),
        "timeout_total",
        "whole-response deadline of 60 s",
        id="trickle",
    ),
    pytest.param(
        silent,
        True,
        Timeouts(first_byte=30),
        "timeout_first_byte",
        "first-byte deadline of 30 s",
        id="silent-stream",
    ),
    pytest.param(
        keep_alive_only,
        True,
        Timeouts(stream_gap=15),
        "timeout_stream_gap",
        "stream-gap deadline of 15 s",
        id="keep-alive-stream",
    ),
    pytest.param(
        keep_alive_only,
        True,
        Timeouts(total=60),
        "timeout_total",
        "whole-response deadline of 60 s",
        id="keep-alive-stream-total",
    ),
]


@pytest.mark.parametrize("api", [OpenAIModel, OpenAIResponsesModel])
@pytest.mark.parametrize(("reply", "stream", "timeouts", "reason", "detail"), STALLS)
async def test_a_stalled_server_fails_each_attempt_at_its_deadline(
    reply: Reply,
    stream: bool,
    timeouts: Timeouts,
    reason: str,
    detail: str,
    api: type[OpenAIModel],
) -> None:
    """A server that never answers, trickles, or sends only keep-alives is retried, then fails,
    through either OpenAI API: each attempt at its deadline on the model's runtime clock."""
    async with raw_server(reply) as server:
        model = server.model(
            timeouts=timeouts, retry=TWO_TRIES, api=api, runtime=server.stalled_time()
        )
        first_line = await failure(model, ASK, stream=stream)

    expected = f"failed after 2 attempts ({reason}): no answer within the {detail}"
    assert first_line == f"model 'gpt-raw' {expected}"
    assert (server.requests, server.deadlines_passed) == (2, 2)


async def test_a_transient_error_event_is_retried_and_its_text_discarded() -> None:
    """An in-stream error that says it is transient is retried; the final text is the retry's."""
    broken = sse_reply(text_chunk("Hel"), {"error": {"message": "busy", "type": "server_error"}})
    whole = sse_reply(text_chunk("Hel"), text_chunk("lo"), text_chunk(finish="stop"))
    async with raw_server(broken, whole) as server:
        items = [item async for item in server.model(retry=TWO_TRIES).stream(ASK)]

    assert items[:2] == [
        ModelTextDelta(text="Hel"),
        AttemptDiscarded(attempt=1, reason="stream_error"),
    ]
    texts = [i.text for i in items[2:] if isinstance(i, ModelTextDelta)]
    assert "".join(texts) == "Hello"
    assert isinstance(items[-1], ModelResponse) and items[-1].message.content == "Hello"


async def test_a_retried_stream_tells_listeners_to_drop_the_partial_text(tmp_path: Path) -> None:
    """The run's events mark the failed attempt; its deltas after the mark join to the output."""
    cut = sse_reply(text_chunk("Hel"), text_chunk("lo wor"), done=False)
    whole = sse_reply(text_chunk("Hello"), text_chunk(" world"), text_chunk(finish="stop"))
    async with raw_server(cut, whole) as server:
        swarm = Swarm(
            [Agent(name="a", instructions="Be brief.")], "a", model=server.model(retry=TWO_TRIES)
        )
        with SQLiteJournal(tmp_path / "j.sqlite") as journal:
            events = [e async for e in swarm.stream("hi", journal=journal)]
            sessions = await journal.sessions()

    marks = [i for i, e in enumerate(events) if isinstance(e, ModelAttemptDiscarded)]
    assert len(marks) == 1
    mark = events[marks[0]]
    assert isinstance(mark, ModelAttemptDiscarded)
    assert (mark.agent, mark.turn, mark.attempt, mark.reason) == ("a", 1, 1, "incomplete_response")
    after = "".join(e.text for e in events[marks[0] :] if isinstance(e, TextDelta))
    result = events[-1].result  # type: ignore[union-attr]
    assert after == result.final_output == "Hello world"
    assert [s.status for s in sessions] == ["finished"]


@tool
def lookup() -> str:
    """Look the order up."""
    return "shipped"


async def test_the_live_view_shows_only_the_retried_attempts_text() -> None:
    """`swarmkit run`'s view drops a discarded attempt's text: it says "Checking." once."""
    call = {"index": 0, "id": "c1", "function": {"name": "lookup", "arguments": "{}"}}
    calling = {**text_chunk(), "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}
    cut = sse_reply(text_chunk("Chec"), text_chunk("king and"), done=False)
    whole = sse_reply(text_chunk("Checking."), calling, text_chunk(finish="tool_calls"))
    answer = sse_reply(text_chunk("It shipped."), text_chunk(finish="stop"))
    out = io.StringIO()
    async with raw_server(cut, whole, answer) as server:
        agent = Agent(name="a", instructions="Be brief.", tools=[lookup])
        swarm = Swarm([agent], "a", model=server.model(retry=TWO_TRIES))
        result = await LiveView(out, swarm).follow(swarm.stream("where is my order?"))

    says = [line for line in out.getvalue().splitlines() if "| says" in line]
    assert says == ["  a | says    Checking."]
    assert result.final_output == "It shipped."


JOURNALED_FAULTS = [
    pytest.param(
        json_reply(completion({"content": None, "tool_calls": "lookup"})),
        False,
        "failed (unexpected_response): message.tool_calls must be a list or null, got a string",
        id="odd-answer",
    ),
    pytest.param(
        trickle,
        False,
        "failed after 2 attempts (timeout_total): no answer within the whole-response "
        "deadline of 60 s",
        id="trickle",
    ),
    pytest.param(
        keep_alive_only,
        True,
        "failed after 2 attempts (timeout_stream_gap): no answer within the stream-gap "
        "deadline of 15 s",
        id="keep-alive-stream",
    ),
    pytest.param(
        sse_reply(text_chunk("Hel"), {"error": {"message": "quota", "type": "insufficient_quota"}}),
        True,
        "failed (stream_error): quota",
        id="error-event",
    ),
]


@pytest.mark.parametrize(("reply", "stream", "detail"), JOURNALED_FAULTS)
async def test_a_server_fault_ends_a_journaled_run_with_an_error_and_an_intact_journal(
    tmp_path: Path, reply: Reply, stream: bool, detail: str
) -> None:
    """The ModelError ends the run as "error" with its message; the journal reads back whole."""
    timeouts = Timeouts(total=60) if reply is trickle else Timeouts(stream_gap=15)
    async with raw_server(reply) as server:
        runtime = server.stalled_time()
        model = server.model(timeouts=timeouts, retry=TWO_TRIES, runtime=runtime)
        swarm = Swarm([Agent(name="a", instructions="Be brief.")], "a", model=model)
        with SQLiteJournal(tmp_path / "j.sqlite") as journal:
            if stream:
                events = [e async for e in swarm.stream("hi", journal=journal)]
                result = events[-1].result  # type: ignore[union-attr]
            else:
                result = await swarm.run("hi", journal=journal)
            records = await journal.read(result.session_id)
            sessions = await journal.sessions()

    assert result.stop_reason == "error"
    assert str(result.error).splitlines()[0] == f"model 'gpt-raw' {detail}"
    assert records[0].kind == "run_started"
    assert records[-1].kind == "run_finished" and records[-1].data["stop_reason"] == "error"
    assert [(s.status, s.stop_reason) for s in sessions] == [("finished", "error")]


@pytest.mark.parametrize("seconds", [0, -1.0, float("nan"), float("inf"), "5", True, None])
def test_a_timeout_that_is_not_a_positive_number_is_refused(seconds: object) -> None:
    """Timeouts(...) and timeout= take positive finite seconds only."""
    with pytest.raises(ValueError, match=r"must be a positive finite number of seconds"):
        Timeouts(total=seconds)  # type: ignore[arg-type]


@tool
def shout(text: str) -> str:
    """Repeat the text with a lone surrogate appended, as a tool decoding bad bytes might."""
    return text.upper() + "\udc80"


async def test_text_that_is_not_valid_unicode_is_journaled_exactly_and_replays(
    tmp_path: Path,
) -> None:
    """Lone surrogates in the prompt, a tool result and the answer: sent as U+FFFD, kept exact."""
    calling = completion({"content": None, "tool_calls": [_call("shout", '{"text": "a"}')]})
    answer = completion({"content": "done \udfff"})
    async with raw_server(json_reply(calling), json_reply(answer)) as server:
        swarm = Swarm(
            [Agent(name="a", instructions="Be brief.", tools=[shout])], "a", model=server.model()
        )
        with SQLiteJournal(tmp_path / "j.sqlite") as journal:
            result = await swarm.run("why \ud800?", journal=journal)
            replayed = await swarm.replay(result.session_id, journal)
            text = export_jsonl(await journal.read(result.session_id))

    assert result.final_output == replayed.final_output == "done \udfff"
    assert server.requests == 2
    second = json.loads(server.bodies[1])
    assert second["messages"][1]["content"] == "why \ufffd?"
    assert second["messages"][-1]["content"] == "A\ufffd"
    assert "why \\ud800?" in text and "A\\udc80" in text
    assert import_jsonl(text)[0].data["prompt"] == "why \ud800?"
