"""Typed final output: an agent's answer validated into its output_type, or sent back."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from swarmkit import Agent, ConfigurationError, Swarm
from swarmkit.journal import InMemoryJournal
from swarmkit.messages import UserMessage
from swarmkit.testing import ScriptedModel, text, transfer
from tests.models.fake_openai import completion, fake_api
from tests.models.fake_responses import answer, fake_responses_api


class Verdict(BaseModel):
    """A refund decision."""

    approved: bool
    amount: float
    reason: str | None = None


VALID = '{"approved": true, "amount": 12.5, "reason": null}'


def typed_swarm(model: ScriptedModel, **agent_fields: object) -> Swarm:
    """One agent whose answer must be a Verdict."""
    agent = Agent(name="judge", instructions="Decide.", output_type=Verdict, **agent_fields)  # type: ignore[arg-type]
    return Swarm([agent], "judge", model=model)


async def test_a_valid_answer_is_the_validated_value() -> None:
    """final_output holds the Verdict; final_output_text the JSON the model wrote."""
    model = ScriptedModel(text(VALID))

    result = await typed_swarm(model).run("Refund?")

    assert result.stop_reason == "final_output"
    assert result.final_output == Verdict(approved=True, amount=12.5)
    assert result.final_output_text == VALID
    model.assert_exhausted()


async def test_the_request_carries_the_strict_schema_unless_turned_off() -> None:
    """The output type's strict schema goes out as structured output; the flag turns it off."""
    on, off = ScriptedModel(text(VALID)), ScriptedModel(text(VALID))

    await typed_swarm(on).run("Refund?")
    await typed_swarm(off, structured_output=False).run("Refund?")

    schema = on.requests[0].output_schema
    assert schema is not None and schema.name == "Verdict" and schema.strict
    assert schema.schema["required"] == ["approved", "amount", "reason"]
    assert schema.schema["additionalProperties"] is False
    assert off.requests[0].output_schema is None


async def test_an_answer_in_a_code_fence_is_accepted() -> None:
    """A model without structured output often fences its JSON; the fence is not the answer."""
    model = ScriptedModel(text(f"```json\n{VALID}\n```"))

    result = await typed_swarm(model, structured_output=False).run("Refund?")

    assert result.final_output == Verdict(approved=True, amount=12.5)


async def test_an_invalid_answer_goes_back_with_the_error_then_validates() -> None:
    """The model is told what was wrong and answers again; the second answer is the output."""
    model = ScriptedModel(text('{"approved": "maybe"}'), text(VALID))

    result = await typed_swarm(model).run("Refund?")

    assert result.final_output == Verdict(approved=True, amount=12.5)
    retry = model.requests[1].messages[-1]
    assert isinstance(retry, UserMessage)
    assert "not a valid Verdict" in retry.content
    assert "approved" in retry.content and "amount" in retry.content
    assert result.turns == 2


async def test_answers_that_never_validate_stop_the_run_keeping_the_text() -> None:
    """After max_output_retries the run stops with invalid_output and the last raw text."""
    model = ScriptedModel(text("no idea"), text("still no idea"))

    result = await typed_swarm(model, max_output_retries=1).run("Refund?")

    assert result.stop_reason == "invalid_output"
    assert result.final_output is None
    assert result.final_output_text == "still no idea"
    model.assert_exhausted()


async def test_a_handoff_targets_output_type_applies_when_it_answers() -> None:
    """Triage answers in text nowhere; billing's typed answer is the run's output."""
    billing = Agent(name="billing", output_type=Verdict)
    triage = Agent(name="triage", handoffs=[billing])
    model = ScriptedModel(transfer("billing"), text(VALID))

    result = await Swarm([triage, billing], "triage", model=model).run("Refund?")

    assert result.final_agent == "billing"
    assert result.final_output == Verdict(approved=True, amount=12.5)


async def test_the_journal_records_the_output_and_replay_reproduces_it() -> None:
    """run_finished holds the value as JSON and the raw text; replay validates to the same value."""
    journal = InMemoryJournal()
    model = ScriptedModel(text("nope"), text(VALID))
    swarm = Swarm([Agent(name="judge", output_type=Verdict)], "judge", model=model, journal=journal)

    result = await swarm.run("Refund?", session_id="typed")
    replayed = await swarm.replay("typed")

    records = await journal.read("typed")
    finished = records[-1].data
    assert finished["final_output"] == {"approved": True, "amount": 12.5, "reason": None}
    assert finished["final_output_text"] == VALID
    assert [r.kind for r in records].count("output_rejected") == 1
    assert replayed.final_output == result.final_output


async def test_chat_completions_sends_the_schema_as_response_format() -> None:
    """Through the real client, OpenAIModel asks for json_schema structured output."""
    api = fake_api(completion(VALID))
    swarm = Swarm([Agent(name="judge", output_type=Verdict)], "judge", model=api.model)

    result = await swarm.run("Refund?")

    response_format = api.body()["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Verdict"
    assert response_format["json_schema"]["strict"] is True
    assert result.final_output == Verdict(approved=True, amount=12.5)


async def test_the_responses_api_sends_the_schema_as_text_format() -> None:
    """Through the real client, OpenAIResponsesModel asks for a json_schema text format."""
    api = fake_responses_api(answer(VALID))
    swarm = Swarm([Agent(name="judge", output_type=Verdict)], "judge", model=api.model)

    result = await swarm.run("Refund?")

    text_format = api.body()["text"]["format"]
    assert (text_format["type"], text_format["name"]) == ("json_schema", "Verdict")
    assert json.loads(result.final_output_text or "") == json.loads(VALID)
    assert result.final_output == Verdict(approved=True, amount=12.5)


@pytest.mark.parametrize(
    "fields",
    [
        {"output_type": dict},
        {"output_type": Verdict(approved=True, amount=1)},
        {"max_output_retries": -1},
    ],
)
def test_a_wrong_output_setting_is_a_configuration_error(fields: dict[str, object]) -> None:
    """output_type must be a Pydantic model class; retries a non-negative int."""
    with pytest.raises(ConfigurationError):
        Agent(name="a", **fields)  # type: ignore[arg-type]
