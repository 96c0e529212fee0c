"""The viewer's audit trail, states, times and layout: through its API and in Chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from swarmkit import Agent, Swarm, edit, tool
from swarmkit.journal import JournalRecord, SQLiteJournal
from swarmkit.testing import FixedRuntime, ScriptedModel, text, tool_call
from swarmkit.ui import ViewerServer
from tests.ui.browser import screenshot_path
from tests.ui.conftest import ServeViewer, _run, append, client

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


def _shop(model: ScriptedModel, fixed: FixedRuntime) -> Swarm:
    """Billing whose refund tool needs a person's approval."""

    @tool(needs_approval=True)
    def refund(amount: float) -> str:
        """Refund money."""
        return f"refunded {amount}"

    swarm = Swarm([Agent(name="billing", tools=[refund])], "billing", model=model)
    return swarm.with_seams(runtime=fixed.runtime())


@pytest.fixture
def audit_journal(tmp_path: Path) -> Path:
    """Session "edited": a refund of 80 that dana edited to 40 five seconds later; "broken":
    a failed session."""
    path = tmp_path / "audit.sqlite"
    fixed = FixedRuntime()

    async def make() -> None:
        with SQLiteJournal(path) as journal:
            first = _shop(ScriptedModel(tool_call("refund", amount=80)), fixed)
            await first.run("refund me", session_id="edited", journal=journal)
            fixed.now += 5
            decision = edit(payload={"amount": 40}, by="dana", note="half")
            then = _shop(ScriptedModel(text("Done.")), fixed)
            await then.resume("edited", journal, decision=decision)

    _run(make())
    append(
        path,
        "broken",
        [
            ("run_started", {"prompt": "why did it fail", "entry_agent": "billing"}),
            ("run_finished", {"stop_reason": "error", "error": "the model server said no"}),
        ],
    )
    return path


def _tool_step(server: ViewerServer) -> dict[str, object]:
    view = client(server).get("/api/sessions/edited").json()
    return next(step for step in view["steps"] if step["kind"] == "tool_call")


def test_the_api_shows_the_executed_arguments_beside_the_proposal(
    audit_journal: Path, serve: ServeViewer
) -> None:
    """The session's tool step holds 40 as run, 80 as proposed, and dana's decision."""
    step = _tool_step(serve(audit_journal))
    data = step["data"]

    assert isinstance(data, dict)
    assert json.loads(data["arguments"]) == {"amount": 40}
    assert json.loads(data["proposed_arguments"]) == {"amount": 80}
    assert data["decision"]["decided_by"] == "dana" and data["decision"]["edited"] == ["amount"]
    assert data["outcome"]["content"] == "refunded 40.0"


def test_the_api_gives_states_times_and_what_the_model_saw(
    audit_journal: Path, serve: ServeViewer
) -> None:
    """Rows and pages carry the one vocabulary; steps carry times; model calls their request."""
    http = client(serve(audit_journal))
    rows = {row["session_id"]: row for row in http.get("/api/sessions").json()["rows"]}
    view = http.get("/api/sessions/edited").json()

    assert (rows["broken"]["state"], rows["edited"]["state"]) == ("failed", "finished")
    assert (rows["edited"]["started_at"], rows["edited"]["duration"]) == (1_700_000_000.0, 5.0)
    assert http.get("/api/sessions/broken").json()["state"] == "failed"
    assert view["started_at"] == 1_700_000_000.0 and view["duration"] == 5.0
    assert all("at" in step and "duration" in step for step in view["steps"])
    saw = next(step["saw"] for step in view["steps"] if step["kind"] == "model_call")
    assert saw["tools"] == ["refund"] and saw["latest"]


def test_search_finds_sessions_by_prompt_and_agent(audit_journal: Path, serve: ServeViewer) -> None:
    """q= matches prompts and agents as well as ids, in any case."""
    http = client(serve(audit_journal))

    by_prompt = http.get("/api/sessions", params={"q": "WHY DID"}).json()["rows"]
    by_agent = http.get("/api/sessions", params={"q": "billing"}).json()["rows"]

    assert [row["session_id"] for row in by_prompt] == ["broken"]
    assert {row["session_id"] for row in by_agent} == {"edited"}


def test_a_conversations_turns_are_one_thread(tmp_path: Path, serve: ServeViewer) -> None:
    """Each turn's page lists the conversation's turns, first to last."""
    path = tmp_path / "chat.sqlite"
    for session_id in ("chat", "chat__turn_2"):
        append(path, session_id, [("run_started", {"prompt": "hi", "entry_agent": "a"})])
    http = client(serve(path))

    first = http.get("/api/sessions/chat").json()["thread"]
    second = http.get("/api/sessions/chat__turn_2").json()["thread"]

    assert first["turns"] == second["turns"] == ["chat", "chat__turn_2"]


def _page(browser: Browser, server: ViewerServer, path: str, width: int) -> Page:
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.goto(server.url)
    page.wait_for_selector("body[data-ready=true]")
    if path != "/":
        page.goto(f"http://127.0.0.1:{server.port}{path}")
        page.wait_for_selector("body[data-ready=true]")
    return page


def test_a_failed_session_is_red_and_failed_in_the_list_and_on_its_page(
    browser: Browser, audit_journal: Path, serve: ServeViewer
) -> None:
    """The failed session's badge says failed, in red, on the list and on its page."""
    server = serve(audit_journal)
    page = _page(browser, server, "/", 1280)
    badge = page.locator("tr[data-session=broken] [data-state]")
    colour = badge.evaluate("node => getComputedStyle(node).backgroundColor")
    listed = badge.inner_text()
    page.goto(f"http://127.0.0.1:{server.port}/session/broken")
    page.wait_for_selector("body[data-ready=true]")
    shown = page.locator(".summary [data-state]").inner_text()

    assert (listed, shown) == ("failed", "failed")
    assert colour == "rgb(207, 34, 46)"


def test_the_page_shows_what_ran_who_decided_and_the_waterfall(
    browser: Browser, audit_journal: Path, serve: ServeViewer
) -> None:
    """The tool step shows 40 as run, 80 crossed out as proposed, dana's edit; a waterfall."""
    page = _page(browser, serve(audit_journal), "/session/edited", 1280)
    tool = page.locator(".step-tool_call").inner_text()
    page.screenshot(path=screenshot_path("audit"), full_page=True)

    assert '"amount": 40' in page.locator(".step-tool_call .executed").inner_text()
    assert '"amount": 80' in page.locator(".step-tool_call .proposed").inner_text()
    assert "edited by dana" in tool and "changed amount" in tool
    assert page.locator("#waterfall .lane").count() >= 1
    assert "what the model saw" in page.locator(".step-model_call details.saw").first.inner_text()


def test_the_list_fits_an_800_pixel_window(
    browser: Browser, audit_journal: Path, serve: ServeViewer
) -> None:
    """At 800 px wide the sessions list does not overflow sideways."""
    page = _page(browser, serve(audit_journal), "/", 800)
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    page.screenshot(path=screenshot_path("sessions-800"), full_page=True)

    assert widths[0] <= widths[1]


def test_replay_as_if_asked_otherwise_stops_where_it_first_matters(
    demo_journal: Path, serve: ServeViewer
) -> None:
    """The page's what-if prompt replays up to the first request it changes, not step 0."""
    from swarmkit.demo import support_swarm  # noqa: PLC0415

    http = client(serve(demo_journal, swarm=support_swarm()))
    body = {"prompt": "Is the API down?"}

    reply = http.post("/api/sessions/demo-outage-1/replay", json=body).json()

    assert reply["outcome"] == "diverged" and reply["step"] > 0
    assert any("Is the API down?" in row["right"] for row in reply["rows"])


@pytest.fixture
def timed_journal(tmp_path: Path) -> Path:
    """Session "timed": 10 s in all; a 6 s model call, a 2 s tool call, a 2 s model call."""
    path = tmp_path / "timed.sqlite"
    # fmt: off
    steps: list[tuple[float, str, dict[str, object]]] = [
        (0.0, "run_started", {"prompt": "refund me", "entry_agent": "billing"}),
        (0.0, "agent_started", {"agent": "billing", "handoff_count": 0}),
        (6.0, "model_call", {"agent": "billing"}),
        (8.0, "tool_call", {"agent": "billing", "id": "c1", "name": "refund", "arguments": "{}"}),
        (10.0, "model_call", {"agent": "billing"}),
        (10.0, "run_finished", {"stop_reason": "final_output", "final_output": "Done."}),
    ]
    # fmt: on
    records = [
        JournalRecord(session_id="timed", seq=n, kind=kind, data=data, at=1_700_000_000.0 + at)
        for n, (at, kind, data) in enumerate(steps)
    ]
    with SQLiteJournal(path) as journal:
        _run(journal.append(records))
    return path


def test_waterfall_bars_are_as_wide_as_their_share_of_the_session(
    browser: Browser, timed_journal: Path, serve: ServeViewer
) -> None:
    """In Chromium, under the page's own CSP, each bar spans its step's share of the lane:
    the 6 s call 60 % from 0 %, the tool 20 % from 60 %, and no inline style is refused."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text))
    server = serve(timed_journal)
    page.goto(server.url)
    page.wait_for_selector("body[data-ready=true]")
    page.goto(f"http://127.0.0.1:{server.port}/session/timed")
    page.wait_for_selector("#waterfall .bar")
    shares = page.evaluate(
        """() => [...document.querySelectorAll('#waterfall .bar')].map((bar) => {
            const lane = bar.parentElement.getBoundingClientRect();
            const box = bar.getBoundingClientRect();
            return [bar.classList[1], (box.left - lane.left) / lane.width, box.width / lane.width];
        })"""
    )
    page.screenshot(path=screenshot_path("waterfall"), full_page=True)

    spans = {(kind, round(left, 2), round(width, 2)) for kind, left, width in shares}
    assert {("bar-model_call", 0.0, 0.6), ("bar-tool_call", 0.6, 0.2)} <= spans
    assert ("bar-model_call", 0.8, 0.2) in spans
    assert not [text for text in refused if "Content Security Policy" in text]
