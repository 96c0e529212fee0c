"""The viewer's spend page: the ledger's spend and budgets, from the API and in Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from swarmkit import Agent, Budget, Ledger, Swarm
from swarmkit.journal import SQLiteJournal
from swarmkit.models import Usage
from swarmkit.testing import ScriptedModel, text
from swarmkit.ui import ViewerServer
from tests.ui.browser import screenshot_path
from tests.ui.conftest import ServeViewer, _run, client

if TYPE_CHECKING:
    from playwright.sync_api import Browser


def _spent(tmp_path: Path) -> tuple[Path, Swarm]:
    """A journal of two tenants' runs and the swarm whose ledger charged them."""
    ledger = Ledger(
        tmp_path / "spend.sqlite",
        [Budget(name="daily", limit=10_000, tenant="*")],
        tenant="tenant",
    )
    path = tmp_path / "journal.sqlite"
    usage = Usage(prompt_tokens=30, completion_tokens=12, total_tokens=42)
    swarm = Swarm([Agent(name="desk")], "desk", model=ScriptedModel(), ledger=ledger)
    with SQLiteJournal(path) as journal:
        for tenant in ("acme", "globex"):
            model = ScriptedModel(text("hello", usage=usage))
            run = swarm.with_model(model).run("hi", context={"tenant": tenant}, journal=journal)
            assert _run(run).stop_reason == "final_output"
    return path, swarm


def test_the_spend_api_reports_the_ledger(tmp_path: Path, serve: ServeViewer) -> None:
    """/api/spend groups the settled calls and shows each budget's room; no ledger is a 404."""
    path, swarm = _spent(tmp_path)
    with client(serve(path, swarm=swarm)) as http:
        report = http.get("/api/spend", params={"by": "tenant"}).json()
        assert http.get("/api/config").json()["spend"] is True
    assert [(r["tenant"], r["total_tokens"]) for r in report["spend"]] == [
        ("acme", 42),
        ("globex", 42),
    ]
    assert [(b["scope"], b["left"]) for b in report["budgets"]] == [
        ("tenant=acme", 10_000 - 42),
        ("tenant=globex", 10_000 - 42),
    ]
    with client(serve(path)) as http:
        answer = http.get("/api/spend")
    assert answer.status_code == 404
    assert "no spend ledger" in answer.json()["error"]


def test_the_spend_page_shows_spend_and_budgets(
    tmp_path: Path, serve: ServeViewer, browser: Browser
) -> None:
    """The header links to the page; it lists each tenant's calls and each budget's left."""
    path, swarm = _spent(tmp_path)
    server: ViewerServer = serve(path, swarm=swarm)
    page = browser.new_page()
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-ready=true]")
        page.click("#spend-link")
        page.wait_for_selector("#budgets")
        page.screenshot(path=screenshot_path("spend"), full_page=True)
        tenants = page.locator("#spend td[data-column=tenant]").all_inner_texts()
        left = page.locator("#budgets td[data-column=left]").all_inner_texts()
    finally:
        page.close()
    assert tenants == ["acme", "globex"]
    assert left == ["9958", "9958"]
