"""The audit trail: what a tool ran with, who decided and when, beside the model's proposal."""

from __future__ import annotations

import json

from swarmkit import Agent, Swarm, approve, edit, reject, tool
from swarmkit.journal import InMemoryJournal, JournalRecord, export_jsonl, import_jsonl
from swarmkit.testing import FixedRuntime, NeverCalledModel, ScriptedModel, text, tool_call


def _shop(
    refunds: list[float], journal: InMemoryJournal, model: object, fixed: FixedRuntime
) -> Swarm:
    """Billing with a refund tool that needs a person's approval."""

    @tool(needs_approval=True)
    def refund(amount: float, reason: str = "") -> str:
        """Refund money."""
        refunds.append(amount)
        return f"refunded {amount}"

    swarm = Swarm([Agent(name="billing", tools=[refund])], "billing", model=model, journal=journal)  # type: ignore[arg-type]
    return swarm.with_seams(runtime=fixed.runtime())


async def _edited_session(journal: InMemoryJournal, refunds: list[float]) -> FixedRuntime:
    """Session "s": the model proposes a refund of 80; dana edits it to 40 at t0+5."""
    fixed = FixedRuntime()
    model = ScriptedModel(tool_call("refund", amount=80, reason="late"))
    await _shop(refunds, journal, model, fixed).run("refund me", session_id="s")
    fixed.now += 5
    decision = edit(payload={"amount": 40, "reason": "late"}, by="dana", note="half, per policy")
    await _shop(refunds, journal, ScriptedModel(text("Done.")), fixed).resume(
        "s", decision=decision
    )
    return fixed


def _tool_record(records: tuple[JournalRecord, ...]) -> JournalRecord:
    return next(r for r in records if r.kind == "tool_call")


async def test_an_edited_approval_journals_the_executed_arguments_beside_the_proposal() -> None:
    """Amount 80 edited to 40: the record says 40 ran, keeps 80 as proposed, and who/why/when."""
    journal, refunds = InMemoryJournal(), list[float]()
    fixed = await _edited_session(journal, refunds)
    record = _tool_record(await journal.read("s"))

    assert refunds == [40]
    assert json.loads(record.data["arguments"]) == {"amount": 40, "reason": "late"}
    assert json.loads(record.data["proposed_arguments"]) == {"amount": 80, "reason": "late"}
    assert record.data["outcome"]["content"] == "refunded 40.0"
    assert record.data["decision"] == {
        "kind": "edit",
        "decided_by": "dana",
        "note": "half, per policy",
        "at": fixed.now,
        "edited": ["amount"],
    }


async def test_the_resumed_record_holds_the_author_and_the_time() -> None:
    """The resumed record names who decided and carries the runtime clock's time."""
    journal = InMemoryJournal()
    fixed = await _edited_session(journal, [])
    resumed = next(r for r in await journal.read("s") if r.kind == "resumed")

    assert resumed.data["decided_by"] == "dana" and resumed.data["note"] == "half, per policy"
    assert resumed.at == fixed.now


async def test_every_record_carries_the_runtime_clock_and_replay_ignores_it() -> None:
    """A fixed runtime gives fixed times; a replay at another time reproduces the session."""
    journal = InMemoryJournal()
    await _edited_session(journal, [])
    records = await journal.read("s")

    assert {r.at for r in records} == {1_700_000_000.0, 1_700_000_005.0}
    later = FixedRuntime(start=1_800_000_000.0)
    replayed = await _shop([], journal, NeverCalledModel(), later).replay("s")
    assert replayed.final_output == "Done."


async def test_an_approval_and_a_rejection_name_who_decided() -> None:
    """approve(by=) and reject(by=, note=) reach the tool call's record and the resumed record."""
    for decision, kind in (
        (approve(by="ana"), "approve"),
        (reject("no", by="bo", note="fraud"), "reject"),
    ):
        journal, fixed = InMemoryJournal(), FixedRuntime()
        await _shop([], journal, ScriptedModel(tool_call("refund", amount=5)), fixed).run(
            "x", session_id="s"
        )
        done = _shop([], journal, ScriptedModel(text("ok")), fixed)
        await done.resume("s", decision=decision)
        records = await journal.read("s")
        resumed = next(r for r in records if r.kind == "resumed")
        assert resumed.data["kind"] == kind and resumed.data["decided_by"] == decision.by
        if kind == "approve":
            assert _tool_record(records).data["decision"]["decided_by"] == "ana"
            assert "proposed_arguments" not in _tool_record(records).data


async def test_a_session_summary_carries_its_state() -> None:
    """sessions() names each session's state in the one vocabulary."""
    journal = InMemoryJournal()
    await _edited_session(journal, [])
    fixed = FixedRuntime()
    await _shop([], journal, ScriptedModel(tool_call("refund", amount=5)), fixed).run(
        "x", session_id="paused"
    )

    states = {info.session_id: info.state for info in await journal.sessions()}

    assert states == {"s": "finished", "paused": "waiting"}


async def test_export_and_import_keep_the_audit_trail_and_the_times() -> None:
    """The JSONL export holds executed arguments, decision and times; import gives them back."""
    journal = InMemoryJournal()
    await _edited_session(journal, [])
    records = await journal.read("s")

    back = import_jsonl(export_jsonl(records))

    assert [(r.kind, dict(r.data), r.at) for r in back] == [
        (r.kind, dict(r.data), r.at) for r in records
    ]
    copy = InMemoryJournal()
    await copy.append(back)
    assert [r.at for r in await copy.read("s")] == [r.at for r in records]
    replayed = await _shop([], copy, NeverCalledModel(), FixedRuntime()).replay("s")
    assert replayed.final_output == "Done."


async def test_the_proposal_is_redacted_like_the_executed_arguments() -> None:
    """A secret in the model's proposed arguments never reaches the journal."""

    @tool(needs_approval=True)
    def connect(host: str, api_key: str) -> str:
        """Connect."""
        return f"connected to {host}"

    journal, fixed = InMemoryJournal(), FixedRuntime()
    model = ScriptedModel(tool_call("connect", host="a", api_key="sk-SECRET-1"), text("ok"))
    swarm = Swarm([Agent(name="a", tools=[connect])], "a", model=model, journal=journal)
    swarm = swarm.with_seams(runtime=fixed.runtime())
    await swarm.run("x", session_id="r")
    await swarm.resume("r", decision=edit(payload={"host": "b", "api_key": "sk-SECRET-2"}))

    record = _tool_record(await journal.read("r"))
    assert "sk-SECRET" not in json.dumps(dict(record.data))
    assert json.loads(record.data["proposed_arguments"])["host"] == "a"
