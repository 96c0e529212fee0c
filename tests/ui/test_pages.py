"""The viewer's pages in a real headless Chromium (Debian's), driven by Playwright."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmkit import Agent, Swarm
from swarmkit.demo import support_swarm
from swarmkit.journal import SessionInfo, SQLiteJournal
from swarmkit.testing import ScriptedModel, text, transfer
from swarmkit.ui import Viewer, ViewerServer
from swarmkit.ui._sessions import SessionList
from tests.swarm.test_invalid_payloads import refused_then_retried
from tests.ui.browser import screenshot_path
from tests.ui.conftest import SECRET, ServeViewer, _run, append
from tests.ui.swarms import changed_swarm, pausing_swarm

if TYPE_CHECKING:
    from playwright.sync_api import Page


def _open(page: Page, server: ViewerServer, path: str = "/") -> None:
    """Visit the printed URL (which sets the cookie), then ``path``; wait for the page."""
    page.goto(server.url)
    page.wait_for_selector("body[data-ready=true]")
    if path != "/":
        page.goto(f"http://127.0.0.1:{server.port}{path}")
        page.wait_for_selector("body[data-ready=true]")


def test_sessions_list_shows_the_demos_three_sessions(
    page: Page, demo_server: ViewerServer
) -> None:
    """The list's rows are the demo's sessions, with their agents."""
    _open(page, demo_server)

    ids = page.locator("#sessions tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.session)"
    )
    page.screenshot(path=screenshot_path("sessions"), full_page=True)

    assert sorted(ids) == ["demo-escalation-1", "demo-outage-1", "demo-refund-1"]
    assert "triage → tech_support" in page.locator("tr[data-session=demo-outage-1]").inner_text()


def test_session_page_shows_the_rule_decision_and_the_typed_payload(
    page: Page, demo_server: ViewerServer
) -> None:
    """Following a link opens the session; the outage page shows the rule that fired and why,
    the refund page the RefundRequest payload."""
    _open(page, demo_server)
    page.click("a[href='/session/demo-outage-1']")
    page.wait_for_selector("#timeline")
    rule = page.locator(".step-rule").inner_text()

    _open(page, demo_server, "/session/demo-refund-1")
    payload = page.locator(".step-handoff .payload").inner_text()
    page.screenshot(path=screenshot_path("session"), full_page=True)

    assert "category == 'outage'" in rule
    assert "tech_support" in rule
    assert "category == 'billing'" in rule and "did not match" in rule
    assert "RefundRequest" in payload
    assert '"invoice_id": "INV-1042"' in payload


def test_highlighted_path_matches_the_trail(page: Page, demo_server: ViewerServer) -> None:
    """The highlighted agents and edges of the drawing are the session's trail and handoffs."""
    _open(page, demo_server, "/session/demo-refund-1")

    agents = page.locator("#drawing .node.on-trail").evaluate_all(
        "nodes => nodes.map(n => n.dataset.agent)"
    )
    edges = page.locator("#drawing .edge.on-path").evaluate_all(
        "edges => edges.map(e => "
        "[e.dataset.source, e.dataset.target, e.classList.contains('rule')])"
    )
    trail = page.locator("#trail").inner_text()

    assert trail == "triage → billing"
    assert sorted(agents) == ["billing", "triage"]
    assert edges == [["triage", "billing", False]]


def test_replay_with_changed_instructions_shows_the_divergence_diff(
    page: Page, demo_journal: Path, serve: ServeViewer
) -> None:
    """Against a swarm whose triage instructions changed, replay shows both sides at the step."""
    server = serve(demo_journal, swarm=changed_swarm())
    _open(page, server, "/session/demo-refund-1")

    page.click("#replay")
    page.wait_for_selector("#divergence")
    text = page.locator("#divergence").inner_text()
    left = page.locator("#divergence tr.changed td.left").all_inner_texts()
    right = page.locator("#divergence tr.changed td.right").all_inner_texts()
    page.locator("#divergence").scroll_into_view_if_needed()
    page.screenshot(path=screenshot_path("replay-divergence"), full_page=True)

    assert "diverged" in text and "at step 2" in text
    assert any("You are the triage agent" in line for line in left)
    assert any("Route every ticket to billing" in line for line in right)


def test_approval_from_the_page_resumes_a_paused_session(
    page: Page, paused_journal: Path, serve: ServeViewer
) -> None:
    """The pending handoff and its payload are shown; Approve resumes the run to its answer."""
    server = serve(paused_journal, swarm=pausing_swarm(), allow_decisions=True)
    _open(page, server, "/session/paused-refund")
    waiting = page.locator("#pending").inner_text()
    payload = page.locator("#payload").input_value()
    page.screenshot(path=screenshot_path("pending"), full_page=True)

    page.click("#approve")
    page.wait_for_selector(".step-run_finished >> text=final_output")
    status = page.locator(".summary").inner_text()

    assert "handoff → billing" in waiting
    assert "INV-1042" in payload
    assert "finished" in status
    assert page.locator("#pending").count() == 0


def test_an_invalid_edit_shows_the_error_and_the_session_keeps_waiting(
    page: Page, paused_journal: Path, serve: ServeViewer
) -> None:
    """An edited amount that is not a number is refused with the field's error."""
    server = serve(paused_journal, swarm=pausing_swarm(), allow_decisions=True)
    _open(page, server, "/session/paused-refund")

    page.fill("#payload", '{"invoice_id": "INV-1042", "amount_eur": "lots", "reason": "other"}')
    page.click("#edit")
    page.wait_for_selector("#decision-outcome .errors")
    error = page.locator("#decision-outcome").inner_text()

    assert "amount_eur" in error
    assert page.locator("#pending").count() == 1


def test_no_page_shows_a_value_stored_under_a_secret_key(
    page: Page, secret_journal: Path, serve: ServeViewer
) -> None:
    """Neither the list nor the leaky session's page holds the secret, anywhere in the DOM."""
    server = serve(secret_journal, swarm=support_swarm())
    _open(page, server)
    listing = page.content()
    _open(page, server, "/session/leaky")
    session = page.content()

    assert "leaky" in listing
    assert "[redacted]" in session
    assert SECRET not in listing
    assert SECRET not in session


def test_a_running_session_updates_as_its_steps_are_journaled(
    page: Page, demo_journal: Path, serve: ServeViewer
) -> None:
    """An open session's page shows a step appended after it was opened, without a reload."""
    first: list[tuple[str, dict[str, Any]]] = [
        ("run_started", {"prompt": "hi", "entry_agent": "triage", "context": {}}),
        ("agent_started", {"agent": "triage", "handoff_count": 0}),
    ]
    append(demo_journal, "running", first)
    server = serve(demo_journal, swarm=support_swarm())
    _open(page, server, "/session/running")
    before = page.locator("#timeline > li").count()

    append(demo_journal, "running", [("handoff_refused", _REFUSED)], start=2)
    page.wait_for_selector(".step-handoff_refused")

    assert before == 2
    assert "cycle" in page.locator(".step-handoff_refused").inner_text()


_REFUSED = {"source": "triage", "target": "human", "reason": "cycle", "decided_by": "llm"}


class _HeldListing(SQLiteJournal):
    """The viewer's second connection, for its sessions list: every listing after the first
    waits until the test releases it, as a slow listing of a large journal would."""

    def __init__(self, path: Path, release: threading.Event) -> None:
        super().__init__(path)
        self.release = release
        self.listed = 0

    async def sessions(self) -> tuple[SessionInfo, ...]:
        """The journal's sessions, once the test allows it (the first listing at once)."""
        self.listed += 1
        if self.listed > 1:
            await asyncio.to_thread(self.release.wait, 30)
        return await super().sessions()


def test_the_sessions_list_refreshes_itself(page: Page, demo_journal: Path) -> None:
    """While a stale list's new listing is read, the page shows the previous rows marked
    "refreshing…"; once the listing is in, a session journaled since appears without a
    reload and the mark goes."""
    now, release = [0.0], threading.Event()
    journal, listing = SQLiteJournal(demo_journal), _HeldListing(demo_journal, release)
    viewer = Viewer(journal, swarm=support_swarm(), listing=listing)
    viewer.sessions = SessionList(journal, listing=listing, clock=lambda: now[0])
    server = ViewerServer(viewer)
    server.start()
    try:
        _open(page, server)
        assert page.locator("body").get_attribute("data-list-refreshing") == "false"
        assert page.locator("#refreshing").is_hidden()

        append(demo_journal, "late", [("run_started", {"prompt": "hi", "entry_agent": "triage"})])
        now[0] = 60.0  # the list's snapshot is a minute old: the next page starts a new one
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        assert page.locator("body").get_attribute("data-list-refreshing") == "true"
        assert page.locator("#refreshing").is_visible()
        assert page.locator("tr[data-session=late]").count() == 0
        assert page.locator("tr[data-session]").count() > 0  # the previous rows, meanwhile

        release.set()
        page.wait_for_selector("tr[data-session=late]")
        page.wait_for_selector("body[data-list-refreshing=false]")
        assert page.locator("#refreshing").is_hidden()
    finally:
        release.set()
        server.close()
        listing.close()
        journal.close()


def test_a_later_turn_shows_its_thread_and_next_turn_decision(
    page: Page, tmp_path: Path, serve: ServeViewer
) -> None:
    """The list marks turn 2 of chat; its page lists the thread and who the policy chose."""
    path = tmp_path / "chat.db"
    _run(_chat(path))
    server = serve(path)

    _open(page, server)
    assert "turn 2 of chat" in page.locator("tr[data-session=chat__turn_2]").inner_text()
    _open(page, server, "/session/chat__turn_2")

    assert "Conversation chat: turn 2 of 2" in page.locator("#thread").inner_text()
    assert page.locator("#thread a").inner_text() == "chat"
    decision = page.locator("#timeline .next-turn").inner_text()
    assert "triage" in decision and "entry" in decision and "last was billing" in decision


def test_a_conversations_turns_are_one_expandable_row_in_the_list(
    page: Page, tmp_path: Path, serve: ServeViewer
) -> None:
    """The list shows a conversation once, as its latest turn; its toggle shows the rest."""
    path = tmp_path / "chat.db"
    _run(_chat(path))
    server = serve(path)

    _open(page, server)
    latest, earlier = (
        page.locator("tr[data-session=chat__turn_2]"),
        page.locator("tr[data-session=chat]"),
    )
    assert latest.is_visible() and not earlier.is_visible()
    toggle = latest.locator("button.turns")
    assert toggle.inner_text() == "▸ 2 turns"
    toggle.click()
    assert earlier.is_visible() and toggle.get_attribute("aria-expanded") == "true"
    toggle.click()
    assert not earlier.is_visible()


async def _chat(path: Path) -> None:
    """Two turns of conversation ``chat``, the second started at triage by next_turn="entry"."""
    model = ScriptedModel(transfer("billing"), text("refunded"), text("hello again"))
    with SQLiteJournal(path) as journal:
        swarm = Swarm(
            [Agent(name="triage", handoffs=["billing"]), Agent(name="billing", handoffs=[])],
            "triage",
            model=model,
            next_turn="entry",
            journal=journal,
        )
        await swarm.run("Refund me", session_id="chat", continue_session=True)
        await swarm.run("Hello", session_id="chat", continue_session=True)


def test_a_refused_payload_shows_in_the_timeline_with_its_error(
    page: Page, tmp_path: Path, serve: ServeViewer
) -> None:
    """The refused transfer call is a "refused" step showing what the model sent and why."""
    path = tmp_path / "refused.sqlite"
    with SQLiteJournal(path) as journal:
        _run(refused_then_retried(journal))

    _open(page, serve(path), "/session/s")
    step = page.locator("#timeline .step-handoff_invalid")
    shown = step.inner_text()

    assert step.locator(".kind").inner_text() == "refused"
    assert "triage → billing refused (invalid payload)" in shown
    assert '{"amount": "lots"}' in shown or '"amount": "lots"' in shown
    assert "amount: Input should be a valid integer" in step.locator("pre.errors").inner_text()


def test_a_foreign_record_kind_renders_as_an_unknown_step(
    page: Page, demo_journal: Path, serve: ServeViewer
) -> None:
    """A `__proto__` record and a damaged model call show as labelled steps, and the steps
    around them and the sessions list still render (issue 33)."""
    append(demo_journal, "bad", [("agent_started", {"agent": "triage", "handoff_count": 0})])
    append(
        demo_journal,
        "bad",
        [
            ("__proto__", {"__proto__": {"x": 1}}),
            ("model_call", {"agent": "triage", "response": 5}),
        ],
        start=1,
    )
    append(demo_journal, "bad", [("agent_started", {"agent": "billing"})], start=3)
    server = serve(demo_journal)

    _open(page, server)
    listed = page.locator("#sessions tbody tr").count()
    _open(page, server, "/session/bad")
    labels = page.locator("#timeline .step .kind").all_inner_texts()

    assert listed == 4
    assert labels == [
        "agent",
        "unknown record (__proto__)",
        "model",
        "agent",
    ]
