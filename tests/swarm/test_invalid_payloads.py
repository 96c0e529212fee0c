"""A transfer call whose payload does not validate is journaled, shown, and still replays."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from swarmkit import Agent, Handoff, ModelError, Swarm
from swarmkit.cli import main
from swarmkit.journal import InMemoryJournal, JournalRecord, SQLiteJournal
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, transfer


class Refund(BaseModel):
    """A refund."""

    amount: int


class Login(BaseModel):
    """Credentials handed on (a payload a redactor must hide)."""

    api_key: int


def _support(model: object, payload: type[BaseModel] = Refund) -> Swarm:
    agents = [Agent(name="triage", handoffs=[Handoff("billing", payload)]), Agent(name="billing")]
    return Swarm(agents, "triage", model=model)  # type: ignore[arg-type]


def _script() -> ScriptedModel:
    """Triage first sends a payload that does not validate, then a valid one."""
    return ScriptedModel(
        transfer("billing", amount="lots"),
        transfer("billing", amount=5),
        text("Refunded 5.", for_agent="billing"),
    )


async def refused_then_retried(journal: InMemoryJournal | SQLiteJournal) -> None:
    """Session ``s``: triage's first transfer is refused (invalid payload), its second taken."""
    model = _script()
    result = await _support(model).run("refund please", session_id="s", journal=journal)
    assert result.trail == ("triage", "billing")
    model.assert_exhausted()


async def test_an_invalid_payload_is_journaled_with_its_validation_error() -> None:
    """The refused call's record names the agents, the tool, what the model sent and why."""
    journal = InMemoryJournal()
    await refused_then_retried(journal)

    records = await journal.read("s")
    kinds = [r.kind for r in records]
    assert kinds.index("handoff_invalid") < kinds.index("handoff")
    refused = next(r for r in records if r.kind == "handoff_invalid").data
    assert refused["source"] == "triage" and refused["target"] == "billing"
    assert refused["tool_name"] == "transfer_to_billing"
    assert refused["arguments"] == '{"amount": "lots"}'
    assert "amount: Input should be a valid integer" in refused["problem"]


async def test_a_session_with_a_refused_payload_replays_strictly() -> None:
    """Replay matches the journaled refusal and calls no model."""
    journal = InMemoryJournal()
    await refused_then_retried(journal)

    replayed = await _support(NeverCalledModel()).replay("s", journal=journal)

    assert replayed.final_output == "Refunded 5."


async def test_a_session_journaled_before_refusals_were_kept_still_replays() -> None:
    """An older journal (no refusal record) replays strictly with no divergence."""
    journal = InMemoryJournal()
    await refused_then_retried(journal)
    older = InMemoryJournal()
    kept = [r for r in await journal.read("s") if r.kind != "handoff_invalid"]
    await older.append(
        [JournalRecord(session_id="s", seq=n, kind=r.kind, data=r.data) for n, r in enumerate(kept)]
    )

    replayed = await _support(NeverCalledModel()).replay("s", journal=older)

    assert replayed.final_output == "Refunded 5."
    assert [r.kind for r in await older.read("s")] == [r.kind for r in kept]


class _DownAfterOneAnswer:
    """Answers once from a script, then its API is down."""

    name = "flaky"

    def __init__(self, script: ScriptedModel) -> None:
        self.script = script
        self.answered = False

    async def respond(self, request: ModelRequest) -> ModelResponse:
        if self.answered:
            raise ModelError("the API is down", model=self.name, attempts=3)
        self.answered = True
        return await self.script.respond(request)


async def test_an_older_failed_session_with_a_refused_payload_resumes() -> None:
    """A failed session journaled before refusals were kept resumes (its refusal is written
    once, where the resumed run goes on) and the whole session then replays strictly."""
    journal = InMemoryJournal()
    flaky = _DownAfterOneAnswer(ScriptedModel(transfer("billing", amount="lots")))
    failed = await _support(flaky).run("refund please", session_id="s", journal=journal)
    assert failed.stop_reason == "error"
    older = InMemoryJournal()
    kept = [r for r in await journal.read("s") if r.kind != "handoff_invalid"]
    await older.append(
        [JournalRecord(session_id="s", seq=n, kind=r.kind, data=r.data) for n, r in enumerate(kept)]
    )

    script = ScriptedModel(transfer("billing", amount=5), text("Refunded 5.", for_agent="billing"))
    resumed = await _support(script).resume("s", journal=older)

    assert (resumed.final_output, resumed.trail) == ("Refunded 5.", ("triage", "billing"))
    kinds = [r.kind for r in await older.read("s")]
    assert kinds.count("handoff_invalid") == 1 and kinds.count("handoff") == 1
    script.assert_exhausted()
    replayed = await _support(NeverCalledModel()).replay("s", journal=older)
    assert replayed.final_output == "Refunded 5."


async def test_a_refused_payload_keeps_no_secret_it_quoted() -> None:
    """A secret field's refused value is not kept in the refusal's record."""
    journal = InMemoryJournal()
    model = ScriptedModel(
        transfer("billing", api_key="sk-live-0123456789"), text("Cannot.", for_agent="triage")
    )
    await _support(model, Login).run("log in", session_id="s", journal=journal)

    refused = next(r for r in await journal.read("s") if r.kind == "handoff_invalid").data
    assert "sk-live-0123456789" not in str(refused)
    assert "api_key: Input should be a valid integer" in refused["problem"]


def test_show_prints_the_refused_handoff_with_its_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`swarmkit show` has a refused line, the model's arguments, and the validation error."""
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as journal:
        asyncio.run(refused_then_retried(journal))

    assert main(["show", "s", "--journal", str(path)]) == 0

    out = capsys.readouterr().out
    assert (
        "refused  triage -> billing (invalid payload), asked by llm with transfer_to_billing "
        '{"amount": "lots"}'
    ) in out
    assert "amount: Input should be a valid integer" in out
    assert out.index("refused  triage") < out.index("handoff  #1 triage -> billing")
