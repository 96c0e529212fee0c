"""The rules on a Postgres journal: suggest (text rules too), promote, audit with a demotion a
second swarm instance sees, ``whatif --live`` and the viewer's rules page."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from swarmkit import Agent, HandoffGraph, Swarm
from swarmkit.cli import main
from swarmkit.journal import InMemoryJournal, Journal, PostgresJournal
from swarmkit.rules import promote, status, suggest_rules
from swarmkit.shadow import DEMOTED, PROMOTED, RuleAudit, read_rules_log
from swarmkit.testing import ScriptedModel, text, transfer
from swarmkit.ui import TOKEN_HEADER, Viewer, ViewerServer
from tests.journal.conftest import fresh_schema
from tests.journal.postgres_server import PostgresServer
from tests.rules import routed, text_corpus
from tests.rules.shadow_swarm import script, shadow_rules, swarm

BILLING = "triage -> billing if category == 'billing'"


@pytest.fixture
def dsn(postgres_server: PostgresServer) -> str:
    """An empty schema of the shared server."""
    return fresh_schema(postgres_server)


async def _moved(made: Journal, journal: PostgresJournal) -> None:
    """Each session of ``made`` appended to ``journal`` as one step: the runs' records as they
    wrote them, in a fraction of the statements the runs would take."""
    for info in await made.sessions():
        await journal.append(await made.read(info.session_id))


async def _shadowed(journal: PostgresJournal, count: int, *, wrong_every: int = 0) -> None:
    """``count`` tickets under shadow rules, alternately billing and sales; the model sends
    every ``wrong_every``-th billing ticket to sales."""
    made = InMemoryJournal()
    shadowed = swarm(made, shadow_rules())
    for index in range(count):
        billing = index % 2 == 0
        wrong = billing and wrong_every > 0 and (index // 2) % wrong_every == 0
        target = "billing" if billing and not wrong else "sales"
        context = {"category": "billing" if billing else "sales", "amount": index}
        await shadowed.with_model(script(target)).run(
            "help", context=context, session_id=f"p{index:03d}"
        )
    await _moved(made, journal)


async def test_suggest_learns_text_rules_from_postgres(dsn: str) -> None:
    """The words of the message, as from any journal (the viewer's test below finds a
    context rule on Postgres)."""
    async with PostgresJournal(dsn) as journal:
        await _moved((await text_corpus.build(60, redact_every=0))[0], journal)
        by_words = await suggest_rules(journal, min_precision=0.9, min_support=4)
    assert by_words.sessions == 60
    assert "'refund' in swarm.user_words" in {s.when for s in by_words.suggestions}


async def test_promote_reads_the_evidence_and_journals_the_promotion(
    dsn: str, tmp_path: Path
) -> None:
    """30 agreeing billing verdicts on Postgres: promoted, the file written, the record in the
    rules log that another journal object on the database reads."""
    out = tmp_path / "rules.json"
    async with PostgresJournal(dsn) as journal:
        await _shadowed(journal, 60)
        await promote(journal, swarm(shadow=shadow_rules()), BILLING, out=out, threshold=0.85)
    async with PostgresJournal(dsn) as other:
        [record] = await read_rules_log(other)
        report = await status(other, swarm(shadow=shadow_rules()))
    assert record.kind == PROMOTED and record.data["evidence"]["fired"] == 30
    assert HandoffGraph.from_dict(json.loads(out.read_text())).edges("triage") == [
        ("billing", "category == 'billing'")
    ]
    assert report.rule(BILLING).evidence.agreements == 30


def _audited(journal: PostgresJournal) -> Swarm:
    """Triage's active billing rule, every decision audited (demoted under 0.9)."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", "category == 'billing'")
    agents = [Agent(name=name) for name in ("triage", "billing", "sales")]
    return Swarm(
        agents,
        "triage",
        graph=graph,
        journal=journal,
        model=ScriptedModel(),
        audit=RuleAudit(share=1.0, threshold=0.9),
    )


async def test_a_demotion_on_postgres_holds_for_a_second_swarm_instance(dsn: str) -> None:
    """10 agreeing audits, then the model drifts: the fourth disagreement demotes the rule,
    and a second swarm on its own connection to the database lets the model decide."""
    async with PostgresJournal(dsn) as journal:
        first = _audited(journal)
        for index in range(14):
            said = "billing" if index < 10 else "sales"
            model = ScriptedModel(transfer(said), text("Done."))
            result = await first.with_model(model).run(
                "help", context={"category": "billing"}, session_id=f"a{index:02d}"
            )
            assert result.handoffs[0].decided_by == "rule"
    async with PostgresJournal(dsn) as other:
        [demotion] = [r for r in await read_rules_log(other) if r.kind == DEMOTED]
        model = ScriptedModel(transfer("sales"), text("Sales here."))
        result = (
            await _audited(other)
            .with_model(model)
            .run("help", context={"category": "billing"}, session_id="b00")
        )
    assert demotion.data["rule"] == BILLING
    assert (demotion.data["evidence"]["audits"], demotion.data["evidence"]["agreements"]) == (
        14,
        10,
    )
    assert result.trail == ("triage", "sales") and result.handoffs[0].decided_by == "llm"
    model.assert_exhausted()


def _billing_rules(tmp_path: Path) -> Path:
    rules = HandoffGraph()
    rules.add_edge("triage", "billing", "category == 'billing'")
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules.to_dict()))
    return path


async def test_whatif_live_on_a_postgres_journal(
    dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command with a Postgres URL: each slipped billing ticket re-run into a new session
    of the same database, read back (not run again) the second time."""

    made = routed.tickets(20, route=lambda i, c, s: "sales" if i % 10 == 0 else str(c["category"]))
    async with PostgresJournal(dsn) as journal:
        await _moved(await routed.journal_tickets(made), journal)
    options = ["--swarm", "tests.rules.routed:answering", "--journal", dsn, "--json"]
    options += ["--rules", str(_billing_rules(tmp_path)), "--live"]
    first = json.loads(await asyncio.to_thread(_command, capsys, "whatif", *options))
    again = json.loads(await asyncio.to_thread(_command, capsys, "whatif", *options))

    slipped = [t.session_id for t in made if t.target != t.context["category"]]
    assert slipped == ["t0000", "t0010"]
    assert [(r["session_id"], r["existing"], r["trail"]) for r in first["reruns"]] == [
        (session_id, False, ["triage", "billing"]) for session_id in slipped
    ]
    assert [r["existing"] for r in again["reruns"]] == [True, True]
    async with PostgresJournal(dsn) as journal:
        held = {info.session_id for info in await journal.sessions()}
    assert {f"{s}__whatif_2" for s in slipped} <= held


def _command(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["rules", *argv]) == 0
    return capsys.readouterr().out


async def test_the_viewers_rules_page_reads_a_postgres_journal(dsn: str, tmp_path: Path) -> None:
    """The page is served, and its data holds the shadow rules' verdicts, the suggestion the
    corpus supports, and the promotion in the rules log."""
    async with PostgresJournal(dsn) as journal:
        await _shadowed(journal, 40, wrong_every=5)
        await promote(
            journal,
            swarm(shadow=shadow_rules()),
            BILLING,
            out=tmp_path / "r.json",
            threshold=0.5,
            min_fired=20,
        )
    viewer_journal = PostgresJournal(dsn)
    server = ViewerServer(Viewer(viewer_journal, swarm=swarm(shadow=shadow_rules())))
    server.start()
    try:
        page, data = await asyncio.to_thread(_rules_page, server)
    finally:
        server.close()
        viewer_journal.close()
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    rules = {rule["rule"]: rule for rule in data["rules"]}
    assert (rules[BILLING]["fired"], rules[BILLING]["agreements"]) == (20, 16)
    assert [(r["kind"], r["rule"]) for r in data["log"]] == [(PROMOTED, BILLING)]
    assert data["sessions"] == 40
    assert "category == 'sales'" in {s["when"] for s in data["suggest"]["suggestions"]}


def _rules_page(server: ViewerServer) -> tuple[httpx.Response, dict[str, Any]]:
    with httpx.Client(
        base_url=f"http://127.0.0.1:{server.port}",
        headers={TOKEN_HEADER: server.token},
        trust_env=False,
    ) as http:
        page = http.get("/rules")
        data = http.get("/api/rules", params={"min_support": "4", "min_precision": "0.9"}).json()
    return page, data
