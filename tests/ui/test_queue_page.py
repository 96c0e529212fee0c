"""The viewer's queue page in a real headless Chromium: claim, reply and hand back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from swarmkit.journal import SQLiteJournal
from swarmkit.ui import ViewerServer
from tests.people.queue_app import support
from tests.ui.browser import screenshot_path
from tests.ui.conftest import ServeViewer, _run, client

if TYPE_CHECKING:
    from playwright.sync_api import Page


@pytest.fixture
def parked_journal(tmp_path: Path) -> Path:
    """A journal whose session ``c1`` waits at the refunds desk."""
    path = tmp_path / "j.sqlite"
    with SQLiteJournal(path) as journal:
        result = _run(support().run("refund order 7", session_id="c1", journal=journal))
    assert result.stop_reason == "interrupted"
    return path


def _open_queue(page: Page, server: ViewerServer) -> None:
    page.goto(server.url)
    page.wait_for_selector("body[data-ready=true]")
    page.goto(f"http://127.0.0.1:{server.port}/queue")
    page.wait_for_selector("body[data-ready=true]")


def test_a_person_claims_replies_and_hands_back_from_the_page(
    page: Page, parked_journal: Path, serve: ServeViewer
) -> None:
    """The parked conversation is listed; claim, reply and hand back run billing to its answer."""
    server = serve(parked_journal, swarm=support(), allow_decisions=True)
    _open_queue(page, server)
    row = page.locator('#queue tr[data-session="c1"]')
    listed = row.inner_text()

    page.fill("#person", "ana")
    row.locator("button.claim").click()
    page.wait_for_selector('#queue tr[data-session="c1"] .claimed-by >> text=ana')
    row.locator("textarea.reply-text").fill("Approved, 30 back.")
    row.locator("button.send-reply").click()
    page.wait_for_selector("#queue-outcome >> text=reply: done")
    row.locator("select.hand-to").select_option("billing")
    page.screenshot(path=screenshot_path("queue"), full_page=True)
    row.locator("button.hand-back").click()
    page.wait_for_selector("#handed-back")

    assert "refunds-desk" in listed
    assert "Your refund of 30 is booked." in page.locator("#handed-back").inner_text()


def test_without_the_decision_switch_the_queue_is_read_only(
    parked_journal: Path, serve: ServeViewer
) -> None:
    """The list shows, but a claim is refused with 403 and nothing is written."""
    server = serve(parked_journal, swarm=support())
    with client(server) as http:
        listed = http.get("/api/queue").json()
        refused = http.post("/api/queue/c1/claim", json={"by": "ana"})
        after = http.get("/api/queue").json()

    assert [c["session_id"] for c in listed] == ["c1"]
    assert refused.status_code == 403
    assert after[0]["claimed_by"] is None


def test_the_queue_api_needs_the_token(parked_journal: Path, serve: ServeViewer) -> None:
    """Without the viewer's token the queue is not shown."""
    server = serve(parked_journal, swarm=support(), allow_decisions=True)

    reply = httpx.get(f"http://127.0.0.1:{server.port}/api/queue", trust_env=False)

    assert reply.status_code in (401, 403)
