"""The viewer's rules page: suggestions with evidence, shadow rules' agreement per day, the
rules log, through its API and in Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from swarmkit.journal import SQLiteJournal
from swarmkit.rules import wilson
from swarmkit.shadow import DEMOTED, PROMOTED, log_rule_change
from swarmkit.testing import FixedRuntime
from swarmkit.ui import ViewerServer
from tests.rules.shadow_swarm import script, shadow_rules, swarm
from tests.ui.browser import screenshot_path
from tests.ui.conftest import SECRET, ServeViewer, _run, client

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

BILLING = "triage -> billing if category == 'billing'"
OVER_50 = "triage -> sales if amount > 50"
DAY = 86_400.0
START = 1_700_006_400.0
"""2023-11-15 00:00:00 UTC."""


@pytest.fixture
def rules_journal(tmp_path: Path) -> Path:
    """Two days of 30 tickets under shadow rules (billing to billing, the model agreeing on
    day one and disagreeing on every sixth billing ticket on day two); then the billing rule
    promoted, and demoted by a record that holds a secret."""
    path = tmp_path / "rules.sqlite"
    fixed = FixedRuntime(start=START + 3600)

    async def make() -> None:
        with SQLiteJournal(path) as journal:
            shadowed = swarm(journal, shadow_rules()).with_seams(runtime=fixed.runtime())
            for day in range(2):
                for index in range(30):
                    billing = index % 2 == 0
                    wrong = day == 1 and index % 12 == 0
                    target = "billing" if billing and not wrong else "sales"
                    context = {
                        "category": "billing" if billing else "sales",
                        "amount": index * 3,
                    }
                    await shadowed.with_model(script(target)).run(
                        "help", context=context, session_id=f"d{day}-{index:02d}"
                    )
                fixed.now += DAY
            evidence = {"fired": 30, "agreements": 27}
            await log_rule_change(
                journal, PROMOTED, {"rule": BILLING, "evidence": evidence}, at=fixed.now
            )
            await log_rule_change(
                journal,
                DEMOTED,
                {"rule": BILLING, "why": "drift", "auth_token": SECRET},
                at=fixed.now + 1,
            )

    _run(make())
    return path


@pytest.fixture
def rules_server(rules_journal: Path, serve: ServeViewer) -> ViewerServer:
    """A viewer over the rules journal, with the shadowed swarm."""
    return serve(rules_journal, swarm=swarm(shadow=shadow_rules()))


def test_rules_api_shows_each_rules_agreement_per_day_with_wilson_bounds(
    rules_server: ViewerServer,
) -> None:
    """Day one: 15 of 15 billing verdicts agree; day two: 12 of 15 (three went to sales)."""
    with client(rules_server) as http:
        data = http.get("/api/rules").json()
    assert data["sessions"] == 60
    rules = {rule["rule"]: rule for rule in data["rules"]}
    billing = rules[BILLING]
    assert (billing["mode"], billing["fired"], billing["agreements"]) == ("shadow", 30, 27)
    assert [p["day"] for p in billing["series"]] == ["2023-11-15", "2023-11-16"]
    first, second = billing["series"]
    assert (first["agreements"], first["fired"]) == (15, 15)
    assert (second["agreements"], second["fired"]) == (12, 15)
    assert (second["lower"], second["upper"]) == pytest.approx(wilson(12, 15))
    assert rules[OVER_50]["mode"] == "shadow"


def test_rules_api_lists_promotions_and_demotions_with_their_records(
    rules_server: ViewerServer,
) -> None:
    """The rules log, oldest first, each change with its evidence."""
    with client(rules_server) as http:
        log = http.get("/api/rules").json()["log"]
    assert [(r["kind"], r["rule"]) for r in log] == [(PROMOTED, BILLING), (DEMOTED, BILLING)]
    assert log[0]["evidence"] == {"fired": 30, "agreements": 27}
    assert log[1]["why"] == "drift"


def test_rules_api_suggests_with_held_out_evidence_and_never_a_secret(
    rules_server: ViewerServer,
) -> None:
    """With thresholds the corpus can meet, sales tickets to sales is suggested with its
    held-out figures and bounds, and a rule the model sometimes overrode with its counter
    examples (day two's sessions); the secret in the demotion record is nowhere in the reply."""
    with client(rules_server) as http:
        reply = http.get("/api/rules", params={"min_support": "5", "min_precision": "0.8"})
    assert reply.status_code == 200 and SECRET not in reply.text
    suggest = reply.json()["suggest"]
    assert suggest["held_out_sessions"] > 0
    [sales] = [s for s in suggest["suggestions"] if s["when"] == "category == 'sales'"]
    assert sales["target"] == "sales" and sales["agreed"] == sales["support"] >= 5
    assert sales["bounds"] == pytest.approx(list(wilson(sales["agreed"], sales["support"])))
    assert sales["line"].startswith("graph.add_edge('triage', 'sales'")
    overridden = [c for s in suggest["suggestions"] for c in s["counter_examples"]]
    assert {c["session_id"][:2] for c in overridden} <= {"d1"}


def test_rules_api_answers_from_its_cache_until_the_journal_changes(
    rules_server: ViewerServer, rules_journal: Path
) -> None:
    """A second read is the cached one; a new session makes the next read fresh."""
    with client(rules_server) as http:
        first = http.get("/api/rules").json()
        assert http.get("/api/rules").json()["computed_at"] == first["computed_at"]
        with SQLiteJournal(rules_journal) as journal:
            _run(
                swarm(journal, shadow_rules())
                .with_model(script("billing"))
                .run("help", context={"category": "billing"}, session_id="late")
            )
        fresh = http.get("/api/rules").json()
    assert fresh["sessions"] == 61


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"min_support": "many"}, "min_support"),
        ({"min_support": "0"}, "min_support"),
        ({"min_precision": "1.5"}, "min_precision"),
        ({"min_precision": "nan"}, "min_precision"),
    ],
)
def test_rules_api_refuses_bad_thresholds(
    rules_server: ViewerServer, params: dict[str, str], message: str
) -> None:
    """A threshold out of range is a 400 that names it."""
    with client(rules_server) as http:
        reply = http.get("/api/rules", params=params)
    assert reply.status_code == 400 and message in reply.json()["error"]


def test_rules_page_and_api_need_the_token(rules_server: ViewerServer) -> None:
    """Without the token, neither the page nor its data is served."""
    import httpx  # noqa: PLC0415

    with httpx.Client(base_url=f"http://127.0.0.1:{rules_server.port}", trust_env=False) as http:
        assert http.get("/api/rules").status_code == 403
        assert http.get("/rules").status_code == 403


def test_rules_page_without_a_swarm_shows_the_journals_rule_decisions(
    demo_journal: Path, serve: ServeViewer
) -> None:
    """The demo's journal holds one graph rule's decision and no shadow verdict: it is listed
    as journaled, with nothing fired to chart, and the log is empty."""
    with client(serve(demo_journal)) as http:
        data = http.get("/api/rules").json()
    [rule] = data["rules"]
    assert (rule["mode"], rule["decided"], rule["fired"], rule["series"]) == ("journaled", 1, 0, [])
    assert data["log"] == []


def test_rules_page_in_chromium_shows_rules_days_and_the_log(
    browser: Browser, rules_server: ViewerServer
) -> None:
    """From the header's link: both shadow rules, the billing rule's two days with their
    bounds, the promotion and demotion; no secret on the page."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page: Page = context.new_page()
        page.goto(rules_server.url)
        page.wait_for_selector("body[data-ready=true]")
        page.click("#nav-rules")
        page.wait_for_selector("#rules")
        rows = page.locator("#rules tbody tr").evaluate_all("rs => rs.map(r => r.dataset.rule)")
        assert set(rows) >= {BILLING, OVER_50}
        billing = page.locator(f'#rules tr[data-rule="{BILLING}"]')
        billing.locator("summary").click()
        days = billing.locator("table.series tbody tr").all_inner_texts()
        assert len(days) == 2 and "12 / 15" in days[1] and "2023-11-16" in days[1]
        assert billing.locator(".agreement .interval").count() == 2
        kinds = page.locator("#rules-log tbody tr").evaluate_all(
            "rs => rs.map(r => r.dataset.kind)"
        )
        assert kinds == [PROMOTED, DEMOTED]
        page.screenshot(path=screenshot_path("rules"), full_page=True)
        assert SECRET not in page.content()
    finally:
        context.close()
