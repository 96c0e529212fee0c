"""The viewer's JSON API over a real journal, through a real HTTP server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from swarmkit import Agent, Swarm
from swarmkit.demo import support_swarm
from swarmkit.journal import SQLiteJournal
from swarmkit.testing import ScriptedModel, text, tool_call, transfer
from swarmkit.ui import ViewerServer
from tests.swarm.test_invalid_payloads import refused_then_retried
from tests.swarm.test_seed_parity import _billing_swarm
from tests.ui.conftest import SECRET, ServeViewer, append, client
from tests.ui.swarms import changed_swarm, pausing_swarm


def test_sessions_list_shows_the_demos_three_sessions_with_their_figures(
    demo_server: ViewerServer,
) -> None:
    """Each row has status, stop reason, agents, handoffs, model calls and tokens."""
    rows = client(demo_server).get("/api/sessions").json()["rows"]

    by_id = {row["session_id"]: row for row in rows}
    assert set(by_id) == {"demo-outage-1", "demo-refund-1", "demo-escalation-1"}
    refund = by_id["demo-refund-1"]
    assert (refund["status"], refund["stop_reason"]) == ("finished", "final_output")
    assert refund["agents"] == ["triage", "billing"]
    assert (refund["handoffs"], refund["model_calls"]) == (1, 4)
    assert refund["tokens"] > 0


def test_sessions_list_filters_by_agent_and_status_and_searches_ids(
    paused_journal: Path, serve: ServeViewer
) -> None:
    """agent=, status= and q= narrow the rows; the total counts what matched."""
    http = client(serve(paused_journal))

    by_agent = http.get("/api/sessions", params={"agent": "tech_support"}).json()
    paused = http.get("/api/sessions", params={"status": "interrupted"}).json()
    searched = http.get("/api/sessions", params={"q": "refund"}).json()

    assert [r["session_id"] for r in by_agent["rows"]] == ["demo-outage-1"]
    assert [r["session_id"] for r in paused["rows"]] == ["paused-refund"]
    assert {r["session_id"] for r in searched["rows"]} == {"paused-refund", "demo-refund-1"}
    assert searched["total"] == 2


def test_sessions_list_pages_with_offset_and_limit(demo_server: ViewerServer) -> None:
    """A page of one row says there are more, and the next page holds the next row."""
    http = client(demo_server)

    first = http.get("/api/sessions", params={"limit": 1}).json()
    second = http.get("/api/sessions", params={"limit": 1, "offset": 1}).json()

    assert (len(first["rows"]), first["total"], first["more"]) == (1, 3, True)
    assert second["rows"][0]["session_id"] != first["rows"][0]["session_id"]


def test_session_shows_the_rule_decision_with_why_earlier_edges_did_not_match(
    demo_server: ViewerServer,
) -> None:
    """The outage session's rule step says which condition fired and what the first one read."""
    steps = client(demo_server).get("/api/sessions/demo-outage-1").json()["steps"]

    rule = next(step for step in steps if step["kind"] == "rule")
    assert rule["data"]["condition"] == "category == 'outage'"
    first, fired = rule["explain"]["trials"]
    assert (first["when"], first["matched"]) == ("category == 'billing'", False)
    assert first["values"] == [{"path": "category", "value": "outage", "found": True}]
    assert (fired["target"], fired["matched"]) == ("tech_support", True)


def test_session_shows_the_typed_payload_of_an_llm_handoff(demo_server: ViewerServer) -> None:
    """The refund handoff carries its RefundRequest payload and says the LLM decided."""
    steps = client(demo_server).get("/api/sessions/demo-refund-1").json()["steps"]

    handoff = next(step for step in steps if step["kind"] == "handoff")
    assert handoff["data"]["decided_by"] == "llm"
    assert handoff["data"]["payload_type"] == "RefundRequest"
    assert handoff["data"]["payload"]["invoice_id"] == "INV-1042"


def test_session_shows_a_refused_payload_with_its_validation_error(
    tmp_path: Path, serve: ServeViewer
) -> None:
    """A transfer call whose payload did not validate is a known step, before the handoff."""
    path = tmp_path / "refused.sqlite"
    with SQLiteJournal(path) as journal:
        asyncio.run(refused_then_retried(journal))

    steps = client(serve(path)).get("/api/sessions/s").json()["steps"]

    kinds = [step["kind"] for step in steps]
    refused = steps[kinds.index("handoff_invalid")]
    assert kinds.index("handoff_invalid") < kinds.index("handoff")
    assert "unknown" not in refused
    assert refused["data"]["tool_name"] == "transfer_to_billing"
    assert "amount: Input should be a valid integer" in refused["data"]["problem"]


def test_drawing_highlights_the_edges_of_the_sessions_path(demo_server: ViewerServer) -> None:
    """The outage session's drawing marks the dashed rule edge triage -> tech_support only."""
    view = client(demo_server).get("/api/sessions/demo-outage-1").json()

    assert view["path"] == [
        {"source": "triage", "target": "tech_support", "number": 1, "decided_by": "rule"}
    ]
    on_path = [part for part in view["drawing"].split("<g ") if "on-path" in part]
    assert len(on_path) == 1
    assert 'class="edge rule on-path" data-source="triage" data-target="tech_support"' in (
        "<g " + on_path[0]
    )


def test_missing_session_is_a_404_that_names_it(demo_server: ViewerServer) -> None:
    """An unknown id answers 404 with the id in the message."""
    reply = client(demo_server).get("/api/sessions/nope")

    assert reply.status_code == 404
    assert "nope" in reply.json()["error"]


def test_replay_reproduces_a_session_with_the_current_code(demo_server: ViewerServer) -> None:
    """Replaying the refund session with unchanged code reproduces its trail."""
    reply = client(demo_server).post("/api/sessions/demo-refund-1/replay", json={})

    assert reply.json()["outcome"] == "reproduced"
    assert reply.json()["trail"] == ["triage", "billing"]


def test_replay_with_changed_instructions_shows_a_side_by_side_diff(
    demo_journal: Path, serve: ServeViewer
) -> None:
    """The diverging step and rows pairing the journaled and the current instructions."""
    http = client(serve(demo_journal, swarm=changed_swarm()))

    result = http.post("/api/sessions/demo-refund-1/replay", json={}).json()

    assert result["outcome"] == "diverged"
    assert result["step"] == 2
    changed = [row for row in result["rows"] if row["change"] == "changed"]
    assert any("Route every ticket to billing" in row["right"] for row in changed)
    assert any("You are the triage agent" in row["left"] for row in changed)


def test_replay_without_a_swarm_says_how_to_give_one(
    demo_journal: Path, serve: ServeViewer
) -> None:
    """No --swarm: replay answers 409 and names the option."""
    reply = client(serve(demo_journal)).post("/api/sessions/demo-refund-1/replay", json={})

    assert reply.status_code == 409
    assert "--swarm" in reply.json()["error"]


def test_paused_session_shows_what_waits_and_an_approval_resumes_it(
    paused_journal: Path, serve: ServeViewer
) -> None:
    """The pending handoff's payload is shown; approve resumes the run to its answer."""
    http = client(serve(paused_journal, swarm=pausing_swarm(), allow_decisions=True))
    pending = http.get("/api/sessions/paused-refund").json()["pending"]

    outcome = http.post("/api/sessions/paused-refund/decision", json={"action": "approve"})
    after = http.get("/api/sessions/paused-refund").json()

    assert (pending["kind"], pending["target"]) == ("handoff", "billing")
    assert pending["payload"]["invoice_id"] == "INV-1042"
    assert outcome.json()["stop_reason"] == "final_output"
    assert after["status"] == "finished"
    assert after["trail"] == ["triage", "billing"]


def test_invalid_edit_shows_the_validation_error_and_the_session_keeps_waiting(
    paused_journal: Path, serve: ServeViewer
) -> None:
    """An edited payload that is not a RefundRequest is refused with the field's error."""
    http = client(serve(paused_journal, swarm=pausing_swarm(), allow_decisions=True))
    payload = {"invoice_id": "INV-1042", "amount_eur": "lots", "reason": "duplicate_charge"}

    reply = http.post(
        "/api/sessions/paused-refund/decision", json={"action": "edit", "payload": payload}
    )
    after = http.get("/api/sessions/paused-refund").json()

    assert reply.status_code == 422
    assert [error["field"] for error in reply.json()["errors"]] == ["amount_eur"]
    assert after["status"] == "interrupted"


def test_a_rejection_gives_the_agent_the_reason(paused_journal: Path, serve: ServeViewer) -> None:
    """reject with a reason resumes the run with the handoff refused."""
    http = client(serve(paused_journal, swarm=pausing_swarm(), allow_decisions=True))

    http.post("/api/sessions/paused-refund/decision", json={"action": "reject", "reason": "fraud"})
    steps = http.get("/api/sessions/paused-refund").json()["steps"]

    resumed = next(step for step in steps if step["kind"] == "resumed")
    assert resumed["data"] == {"kind": "reject", "reason": "fraud"}


def test_decisions_are_off_unless_allowed(paused_journal: Path, serve: ServeViewer) -> None:
    """Without --allow-decisions a decision is refused and the session keeps waiting."""
    http = client(serve(paused_journal, swarm=support_swarm()))

    reply = http.post("/api/sessions/paused-refund/decision", json={"action": "approve"})

    assert reply.status_code == 403
    assert "--allow-decisions" in reply.json()["error"]
    assert http.get("/api/sessions/paused-refund").json()["status"] == "interrupted"


def test_no_reply_holds_a_value_stored_under_a_secret_key(
    secret_journal: Path, serve: ServeViewer
) -> None:
    """Context, tool arguments and results (JSON text too), updates and payloads are redacted;
    usage-like keys are not."""
    http = client(serve(secret_journal, swarm=support_swarm()))

    listing = http.get("/api/sessions").text
    session = http.get("/api/sessions/leaky")

    assert SECRET not in listing
    assert SECRET not in session.text
    context = session.json()["steps"][0]["data"]["context"]
    assert context == {"api_key": "[redacted]", "customer_id": "C-1", "prompt_tokens": 7}
    arguments = json.loads(session.json()["steps"][2]["data"]["arguments"])
    assert arguments == {"user": "dana", "db_password": "[redacted]"}


def test_a_replay_the_session_does_not_allow_answers_with_the_reason(
    demo_journal: Path, serve: ServeViewer
) -> None:
    """A session with no run_started cannot be replayed: 409 with the journal's message."""
    append(demo_journal, "headless", [("agent_started", {"agent": "triage"})])
    http = client(serve(demo_journal, swarm=support_swarm()))

    reply = http.post("/api/sessions/headless/replay", json={})

    assert reply.status_code == 409
    assert "run_started" in reply.json()["error"]


def test_a_refused_mapped_handoff_shows_its_validation_error(
    tmp_path: Path, serve: ServeViewer
) -> None:
    """The viewer's refusal step carries the journaled validation error as its detail."""
    path = tmp_path / "refused.db"
    with SQLiteJournal(path) as journal:
        swarm = _billing_swarm(journal, tool_call("fetch_ticket", number=0), text("Amount?"))
        asyncio.run(swarm.run("refund please", session_id="refused"))
    steps = client(serve(path)).get("/api/sessions/refused").json()["steps"]
    refused = [step["data"] for step in steps if step["kind"] == "handoff_refused"]
    assert refused[0]["reason"] == "payload"
    assert "amount_eur" in refused[0]["detail"]


def test_a_conversation_s_turns_are_one_thread_in_the_list_and_the_session(
    tmp_path: Path, serve: ServeViewer
) -> None:
    """Rows name their conversation and turn; a turn's page lists the whole thread."""
    path = tmp_path / "chat.db"
    model = ScriptedModel(transfer("billing"), text("refunded"), text("hello again"))
    with SQLiteJournal(path) as journal:
        swarm = Swarm(
            [Agent(name="triage", handoffs=["billing"]), Agent(name="billing", handoffs=[])],
            "triage",
            model=model,
            next_turn="entry",
            journal=journal,
        )
        swarm.run_sync("Refund me", session_id="chat", continue_session=True)
        swarm.run_sync("Hello", session_id="chat", continue_session=True)
    http = client(serve(path))

    rows = {r["session_id"]: r for r in http.get("/api/sessions").json()["rows"]}
    turn = http.get("/api/sessions/chat__turn_2").json()

    assert (rows["chat__turn_2"]["conversation"], rows["chat__turn_2"]["turn"]) == ("chat", 2)
    assert (rows["chat"]["conversation"], rows["chat"]["turn"]) == ("chat", 1)
    assert turn["thread"] == {"conversation": "chat", "turn": 2, "turns": ["chat", "chat__turn_2"]}
    started = turn["steps"][0]["data"]
    assert started["next_turn"] == {
        "policy": "entry",
        "agent": "triage",
        "last_agent": "billing",
        "condition": None,
    }


def test_a_supervisors_delegation_step_links_its_sub_run(
    tmp_path: Path, serve: ServeViewer
) -> None:
    """A delegation's tool step names the sub-run's session, which the viewer then shows."""
    path = tmp_path / "boss.db"
    helper = Agent(name="helper", handoffs=[], model=ScriptedModel(text("42")))
    boss_model = ScriptedModel(tool_call("ask_helper", input="the answer?"), text("It is 42."))
    boss = Agent(name="boss", tools=[helper.as_tool()], handoffs=[], model=boss_model)
    swarm = Swarm([boss, helper], "boss")
    with SQLiteJournal(path) as journal:
        swarm.run_sync("go", session_id="boss", journal=journal)
    http = client(serve(path, swarm=swarm))

    steps = http.get("/api/sessions/boss").json()["steps"]
    linked = [s["data"].get("sub_session") for s in steps if s["kind"] == "tool_call"]
    sub_run = http.get("/api/sessions/boss__swarm_helper_0_call_1").json()

    assert linked == ["boss__swarm_helper_0_call_1"]
    assert sub_run["trail"] == ["helper"]


async def test_a_word_rule_is_explained_with_the_words_it_read(
    tmp_path: Path, serve: ServeViewer
) -> None:
    """A rule on swarm.user_words shows, in the session's steps, the message's words it saw."""
    from swarmkit import HandoffGraph  # noqa: PLC0415

    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="'refund' in swarm.user_words")
    agents = [Agent(name="triage", handoffs=["billing"]), Agent(name="billing")]
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as journal:
        swarm = Swarm(agents, "triage", graph=graph, journal=journal, model=ScriptedModel())
        await swarm.with_model(ScriptedModel(text("Done."))).run("A Refund!", session_id="w")
    http = client(serve(path, swarm=swarm))
    steps = (await asyncio.to_thread(http.get, "/api/sessions/w")).json()["steps"]

    rule = next(step for step in steps if step["kind"] == "rule")
    (trial,) = rule["explain"]["trials"]
    assert trial["matched"] is True
    assert trial["values"] == [
        {"path": "swarm.user_words", "value": ["a", "refund"], "found": True}
    ]
