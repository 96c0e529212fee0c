"""Named tool_choice, the limit's own "none", required tools answered in text, truncation."""

from __future__ import annotations

import pytest

from swarmkit import Agent, ConfigurationError, Swarm, tool
from swarmkit.console import tokens
from swarmkit.events import ModelCallFinished, RunFinished
from swarmkit.journal import InMemoryJournal
from swarmkit.messages import UserMessage
from swarmkit.models import ModelSettings
from swarmkit.testing import ScriptedModel, text, tool_call
from tests.models.fake_openai import (
    chunk,
    completion,
    fake_api,
    sse,
    tool_call_json,
)
from tests.models.fake_responses import answer, fake_responses_api


@tool
def ping(host: str) -> str:
    """Ping a host."""
    return f"{host} is up"


def pinger(**settings: object) -> Agent:
    """An agent with the ping tool and the given model settings."""
    return Agent(name="a", tools=[ping], model_settings=ModelSettings(**settings))  # type: ignore[arg-type]


async def test_a_named_tool_choice_forces_that_tool_over_the_wire() -> None:
    """tool_choice="ping" goes out as the forced-function choice; once called, "auto" again."""
    api = fake_api(
        completion(None, tool_calls=[tool_call_json("c1", "ping", '{"host": "db"}')]),
        completion("db is up"),
    )
    swarm = Swarm([pinger(tool_choice="ping")], "a", model=api.model)

    result = await swarm.run("is db up?")

    assert api.body(0)["tool_choice"] == {"type": "function", "function": {"name": "ping"}}
    assert api.body(1)["tool_choice"] == "auto"
    assert result.final_output == "db is up"


def test_a_tool_choice_naming_no_tool_of_the_agent_is_a_configuration_error() -> None:
    """A typo in a named tool_choice is caught when the agent is built."""
    with pytest.raises(ConfigurationError, match="tool_choice 'pong' is neither a mode nor one"):
        pinger(tool_choice="pong")


def test_a_tool_choice_that_is_no_mode_is_refused_naming_the_allowed_values() -> None:
    """tool_choice='sometimes' is refused when the agent is built, naming what it may be."""
    with pytest.raises(ConfigurationError) as caught:
        pinger(tool_choice="sometimes")

    assert str(caught.value) == (
        "agent 'a': tool_choice 'sometimes' is neither a mode nor one of its tools; use 'auto', "
        "'required', 'none' or the name of one of its tools ('ping')"
    )


def test_a_tool_choice_naming_a_handoff_tool_is_checked_by_the_swarm() -> None:
    """A transfer tool the swarm adds may be named; one to no peer is refused by the swarm."""
    forcing = ModelSettings(tool_choice="transfer_to_c")
    agents = [Agent(name="a", model_settings=forcing), Agent(name="b")]

    with pytest.raises(ConfigurationError, match="tool_choice 'transfer_to_c' is not one of"):
        Swarm(agents, "a", model=ScriptedModel())


async def test_the_limits_none_wins_on_the_last_call_also_over_extra_body() -> None:
    """On the call max_turns makes last, tool_choice is "none" whatever the agent asked for."""
    api = fake_api(
        completion(None, tool_calls=[tool_call_json("c1", "ping", '{"host": "db"}')]),
        completion("done"),
    )
    agent = pinger(tool_choice="ping", extra_body={"tool_choice": "required", "store": False})
    swarm = Swarm([agent], "a", model=api.model, max_turns=2)

    result = await swarm.run("ping db")

    assert api.body(1)["tool_choice"] == "none"
    assert api.body(1)["store"] is False
    assert result.stop_reason == "max_turns"


async def test_a_named_transfer_withdrawn_by_a_limit_becomes_required() -> None:
    """When the named tool is no longer offered, the model must still call one it has."""
    model = ScriptedModel(text("x"), text("y"))
    agent = Agent(
        name="a",
        tools=[ping],
        handoffs=["b"],
        model_settings=ModelSettings(tool_choice="transfer_to_b"),
    )
    swarm = Swarm([agent, Agent(name="b")], "a", model=model, max_handoffs=0)

    await swarm.run("go")

    assert model.requests[0].settings.tool_choice == "required"


async def test_a_required_tool_answered_in_text_is_asked_again_once() -> None:
    """The model is told it had to call a tool; a second text answer is accepted."""
    model = ScriptedModel(text("I think it is up."), text("It is up, I am sure."))
    swarm = Swarm([pinger(tool_choice="required")], "a", model=model)

    result = await swarm.run("is db up?")

    reminder = model.requests[1].messages[-1]
    assert isinstance(reminder, UserMessage)
    assert "had to call one of your tools" in reminder.content
    assert result.final_output == "It is up, I am sure."
    model.assert_exhausted()


async def test_a_forced_tool_called_then_answered_needs_no_reminder_after_a_reminder() -> None:
    """Once reminded, the run does not remind again: a tool call then text ends it."""
    model = ScriptedModel(text("no"), tool_call("ping", host="db"), text("db is up"))
    swarm = Swarm([pinger(tool_choice="ping")], "a", model=model)

    result = await swarm.run("is db up?")

    assert "the tool 'ping'" in str(model.requests[1].messages[-1])
    assert result.final_output == "db is up"
    model.assert_exhausted()


async def test_an_answer_cut_by_the_output_limit_is_reported_as_truncated() -> None:
    """finish_reason "length" sets RunResult.truncated, shows in the event and the journal."""
    cut = sse(chunk(content="The answer is forty"), chunk(finish_reason="length"))
    api = fake_api(cut)
    journal = InMemoryJournal()
    swarm = Swarm([Agent(name="a")], "a", model=api.model, journal=journal)

    events = [e async for e in swarm.stream("answer?", session_id="cut")]

    finished = [e for e in events if isinstance(e, ModelCallFinished)]
    assert finished[0].finish_reason == "length"
    result = events[-1]
    assert isinstance(result, RunFinished) and result.result.truncated
    records = await journal.read("cut")
    assert records[-1].data["truncated"] is True
    assert (await swarm.replay("cut")).truncated


async def test_an_incomplete_responses_answer_is_truncated() -> None:
    """The Responses API's incomplete status (max_output_tokens) is a truncation too."""
    api = fake_responses_api(answer("Half", status="incomplete", incomplete="max_output_tokens"))

    result = await Swarm([Agent(name="a")], "a", model=api.model).run("answer?")

    assert result.truncated
    assert result.stop_reason == "final_output"


async def test_a_normal_answer_is_not_truncated() -> None:
    """A stop finish is no truncation."""
    result = await Swarm([Agent(name="a")], "a", model=ScriptedModel(text("hi"))).run("x")

    assert result.truncated is False


async def test_a_tool_call_cut_by_the_output_limit_is_told_the_cause() -> None:
    """Arguments cut mid-JSON go back as an error that names the output limit."""
    api = fake_api(
        completion(None, tool_calls=[tool_call_json("c1", "ping", '{"ho')], finish_reason="length"),
        completion("sorry"),
    )
    swarm = Swarm([pinger()], "a", model=api.model)

    await swarm.run("ping")

    result = api.body(1)["messages"][-1]
    assert result["role"] == "tool"
    assert "cut by the output limit" in result["content"]


async def test_a_stream_without_usage_records_usage_as_unknown() -> None:
    """No usage chunk: the call's usage is unknown, in the event, the result and a replay."""
    api = fake_api(sse(chunk(content="Hi"), chunk(finish_reason="stop")))
    journal = InMemoryJournal()
    swarm = Swarm([Agent(name="a")], "a", model=api.model, journal=journal)

    events = [e async for e in swarm.stream("x", session_id="u")]

    finished = next(e for e in events if isinstance(e, ModelCallFinished))
    assert finished.usage.reported is False
    result = events[-1]
    assert isinstance(result, RunFinished)
    assert result.result.usage["a"].reported is False
    assert result.result.total_usage.reported is False
    assert (await swarm.replay("u")).usage["a"].reported is False
    assert tokens(finished.usage) == "usage unknown"
