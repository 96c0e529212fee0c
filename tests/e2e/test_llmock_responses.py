"""Swarms on OpenAIResponsesModel end to end against llmock, a third-party Responses server."""

from __future__ import annotations

from pydantic import BaseModel

from swarmkit import Agent, Handoff, Swarm, tool
from swarmkit.events import RunFinished, TextDelta
from swarmkit.models import OpenAIResponsesModel, RetryPolicy
from tests.e2e.conftest import LLMockServer
from tests.models.fake_openai import RecordingSleep

POLICY = RetryPolicy(max_attempts=3, initial_backoff=0.5, jitter=0.0)


def responses_model(
    server: LLMockServer, sleep: RecordingSleep | None = None
) -> OpenAIResponsesModel:
    """An adapter pointed at the server, its waits recorded instead of slept."""
    return OpenAIResponsesModel(
        "gpt-4o",
        base_url=server.base_url,
        api_key="sk-llmock-key",
        retry=POLICY,
        sleep=sleep or RecordingSleep(),
    )


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"21C in {city}"


class RefundRequest(BaseModel):
    """A refund billing should process."""

    order_id: str
    amount: float


async def test_a_tool_round_trip_runs_the_tool_then_answers(llmock_api: LLMockServer) -> None:
    """llmock calls the offered tool; its result goes back; the second call answers in text."""
    agent = Agent(name="weather", instructions="Help with the weather.", tools=[get_weather])
    swarm = Swarm([agent], "weather", model=responses_model(llmock_api))

    result = await swarm.run("What's the weather in Paris?")

    assert result.stop_reason == "final_output"
    assert result.final_output
    assert result.turns == 2
    tool_result = result.messages[2]
    assert tool_result.kind == "tool" and tool_result.content.startswith("21C in ")
    assert result.usage["weather"].total_tokens > 0
    assert not _failures(llmock_api)


async def test_a_typed_handoff_carries_its_payload(llmock_api: LLMockServer) -> None:
    """A scripted transfer call with a payload hands off; billing answers over the same API."""
    billing = Agent(name="billing", instructions="You are billing.")
    triage = Agent(
        name="triage",
        instructions="You are triage.",
        handoffs=[Handoff(agent=billing, input_type=RefundRequest)],
    )
    payload = {"order_id": "A-17", "amount": 12.5}
    llmock_api.script(
        {"type": "reply", "tool_calls": [{"name": "transfer_to_billing", "arguments": payload}]}
    )
    swarm = Swarm([triage, billing], "triage", model=responses_model(llmock_api))

    result = await swarm.run("Refund order A-17, please.")

    assert result.trail == ("triage", "billing")
    assert result.handoffs[0].payload == payload
    assert result.handoffs[0].payload_type == "RefundRequest"
    assert result.final_agent == "billing"
    assert result.final_output


async def test_a_rate_limit_is_waited_out_then_the_run_succeeds(llmock_api: LLMockServer) -> None:
    """A 429 with Retry-After costs one wait of what the server asked, then the answer comes."""
    sleep = RecordingSleep()
    llmock_api.script({"type": "fail", "status": 429, "retry_after": 2})
    agent = Agent(name="a", instructions="Answer.")
    swarm = Swarm([agent], "a", model=responses_model(llmock_api, sleep))

    result = await swarm.run("Hello?")

    assert result.stop_reason == "final_output"
    assert sleep.delays == [2.0]
    assert len(llmock_api.requests()) == 2


async def test_a_bad_request_is_not_retried(llmock_api: LLMockServer) -> None:
    """A 400 ends the run with an error after exactly one request."""
    sleep = RecordingSleep()
    llmock_api.script({"type": "fail", "status": 400, "message": "bad input item"})
    swarm = Swarm([Agent(name="a")], "a", model=responses_model(llmock_api, sleep))

    result = await swarm.run("Hello?")

    assert result.stop_reason == "error"
    assert "bad input item" in str(result.error)
    assert sleep.delays == []
    assert len(llmock_api.requests()) == 1


async def test_a_truncated_stream_is_not_accepted(llmock_api: LLMockServer) -> None:
    """A stream that stops early without completing is retried; the run gets the whole answer."""
    llmock_api.script({"type": "stream_fault", "kind": "truncate", "after_chunks": 3})
    swarm = Swarm([Agent(name="a")], "a", model=responses_model(llmock_api))

    events = [event async for event in swarm.stream("Hello?")]

    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.result.stop_reason == "final_output"
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed.endswith(finished.result.final_output or "")
    assert len(llmock_api.requests()) == 2
    assert not _failures(llmock_api)


def _failures(server: LLMockServer) -> list[object]:
    """The findings llmock judged as failures of the client."""
    verdict = server.verdict()
    findings = verdict.get("findings") or []
    return [
        f
        for f in findings
        if isinstance(f, dict) and f.get("severity") in ("FAIL", "fail", "error")
    ]


class Ticket(BaseModel):
    """A support ticket."""

    title: str
    priority: int


async def test_a_typed_answer_comes_back_as_the_value(llmock_api: LLMockServer) -> None:
    """The strict schema goes out as structured output; the server's JSON validates."""
    agent = Agent(name="a", instructions="File a ticket.", output_type=Ticket)
    swarm = Swarm([agent], "a", model=responses_model(llmock_api))

    result = await swarm.run("My printer is on fire.")

    assert result.stop_reason == "final_output"
    assert isinstance(result.final_output, Ticket)
