"""What the model saw, in full: the viewer's API and page for each model call's whole request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic import BaseModel

from swarmkit import Agent, Handoff, Swarm, tool
from swarmkit.demo import support_swarm
from swarmkit.filters import remove_tool_calls
from swarmkit.journal import SQLiteJournal
from swarmkit.models import Model
from swarmkit.testing import NeverCalledModel, ScriptedModel, raw_tool_call, text, transfer
from swarmkit.ui import ViewerServer
from tests.ui.browser import screenshot_path
from tests.ui.conftest import SECRET, ServeViewer, _run, append, client
from tests.ui.swarms import changed_swarm

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


class Unlock(BaseModel):
    """What the vault agent needs to open an account."""

    account: str
    api_key: str


@tool
def login(user: str, db_password: str) -> str:
    """Log in to the accounts database."""
    return json.dumps({"user": user, "accessToken": SECRET, "accounts": ["A-7"]})


def _vault_swarm(model: Model) -> Swarm:
    """Desk (with a login tool) hands off to vault by a typed handoff that drops tool calls."""
    vault = Agent(name="vault", instructions="Open the account you are given.")
    handoff = Handoff(vault, input_type=Unlock, input_filter=remove_tool_calls)
    desk = Agent(
        name="desk", instructions="Log in, then hand off.", tools=[login], handoffs=[handoff]
    )
    return Swarm([desk, vault], "desk", model=model)


@pytest.fixture
def vault_journal(tmp_path: Path) -> Path:
    """Session "vault": the model logs in with a password, a tool returns a token, a handoff."""
    path = tmp_path / "vault.sqlite"
    model = ScriptedModel(
        raw_tool_call("login", json.dumps({"user": "dana", "db_password": SECRET})),
        transfer("vault", account="A-7", api_key=SECRET),
        text("Account A-7 is open."),
    )
    with SQLiteJournal(path) as journal:
        _run(_vault_swarm(model).run("Open my account", session_id="vault", journal=journal))
    return path


def _model_calls(server: ViewerServer, session_id: str) -> list[int]:
    view = client(server).get(f"/api/sessions/{session_id}").json()
    return [step["seq"] for step in view["steps"] if step["kind"] == "model_call"]


def test_the_api_gives_a_calls_whole_request_when_the_swarm_is_known(
    vault_journal: Path, serve: ServeViewer
) -> None:
    """Vault's call: messages after the filter, no tool result; the payload; desk's call: the
    login tool with its JSON schema."""
    server = serve(vault_journal, swarm=_vault_swarm(NeverCalledModel()))
    first, second, last = _model_calls(server, "vault")
    http = client(server)

    desk = http.get(f"/api/sessions/vault/requests/{second}").json()
    vault = http.get(f"/api/sessions/vault/requests/{last}").json()

    assert [m["kind"] for m in desk["messages"]] == ["user", "assistant", "tool"]
    assert [m["kind"] for m in vault["messages"]] == ["user"]
    assert vault["instructions"].startswith("Open the account you are given.")
    assert vault["payload"] == {"account": "A-7", "api_key": "[redacted]"}
    assert vault["agent"] == "vault"
    login_tool = next(t for t in desk["tools"] if t["name"] == "login")
    assert login_tool["parameters"]["properties"]["user"] == {"title": "User", "type": "string"}
    assert "transfer_to_vault" in [t["name"] for t in desk["tools"]]
    assert first < second < last


def test_no_secret_reaches_the_json_api_of_a_whole_request(
    vault_journal: Path, serve: ServeViewer
) -> None:
    """The password the model sent, the token a tool returned and the key in the handoff's
    payload (also quoted in the instructions) are redacted in the reply."""
    server = serve(vault_journal, swarm=_vault_swarm(NeverCalledModel()))
    http = client(server)
    replies = [
        http.get(f"/api/sessions/vault/requests/{seq}") for seq in _model_calls(server, "vault")
    ]

    assert all(reply.status_code == 200 for reply in replies)
    assert all(SECRET not in reply.text for reply in replies)
    assert "[redacted]" in replies[1].text
    assert '"api_key\\": \\"[redacted]\\"' in replies[2].text  # in the instructions' note


def test_without_the_swarm_the_api_says_how_to_see_the_whole_request(
    vault_journal: Path, serve: ServeViewer
) -> None:
    """No swarm: 409 naming --swarm; the session page still carries the journal's summary."""
    server = serve(vault_journal)
    seq = _model_calls(server, "vault")[0]

    reply = client(server).get(f"/api/sessions/vault/requests/{seq}")

    assert reply.status_code == 409 and "--swarm module:attribute" in reply.json()["error"]


def test_a_session_the_swarm_no_longer_reproduces_says_it_diverged(
    demo_journal: Path, serve: ServeViewer
) -> None:
    """Changed instructions: 409 with the replay's divergence, so the page keeps the summary."""
    server = serve(demo_journal, swarm=changed_swarm())
    seq = _model_calls(server, "demo-refund-1")[0]

    reply = client(server).get(f"/api/sessions/demo-refund-1/requests/{seq}")

    assert reply.status_code == 409
    assert "diverged at step" in reply.json()["error"]
    assert "journal's summary is shown" in reply.json()["error"]


def test_a_record_that_is_no_model_call_is_refused(vault_journal: Path, serve: ServeViewer) -> None:
    """Asking for the run_started record's request: 409 saying it is no model call."""
    server = serve(vault_journal, swarm=_vault_swarm(NeverCalledModel()))

    reply = client(server).get("/api/sessions/vault/requests/0")

    assert reply.status_code == 409 and "no model call" in reply.json()["error"]


# -- the page ---------------------------------------------------------------------------------


def _page(browser: Browser, server: ViewerServer, path: str, width: int) -> Page:
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.goto(server.url)
    page.wait_for_selector("body[data-ready=true]")
    page.goto(f"http://127.0.0.1:{server.port}{path}")
    page.wait_for_selector("body[data-ready=true]")
    return page


def _open_saw(page: Page, index: int) -> str:
    """Open the ``index``-th model call's "what the model saw"; its text once loaded."""
    saw = page.locator(".step-model_call details.saw").nth(index)
    saw.locator("summary").click()
    page.wait_for_selector(
        f".step-model_call details.saw[data-seq='{saw.get_attribute('data-seq')}'][data-loaded]"
    )
    return saw.inner_text()


def test_the_page_shows_the_whole_request_without_secrets_at_800_px(
    browser: Browser, vault_journal: Path, serve: ServeViewer
) -> None:
    """At 800 px: desk's call lists the messages as sent and the tools with schemas (folded);
    vault's shows the payload; no secret in the page; nothing overflows sideways."""
    page = _page(
        browser, serve(vault_journal, swarm=_vault_swarm(NeverCalledModel())), "/session/vault", 800
    )

    desk = _open_saw(page, 1)
    vault = _open_saw(page, 2)
    page.locator(".step-model_call details.saw").nth(1).locator(
        "details.saw-tool[data-tool=login] summary"
    ).click()
    schema = page.locator("details.saw-tool[data-tool=login] pre.schema").inner_text()
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    page.screenshot(path=screenshot_path("what-the-model-saw-800"), full_page=True)

    assert "messages as sent (3)" in desk and "tool result login" in desk
    assert "assistant (desk)" in desk and "tools offered (2)" in desk
    assert '"db_password"' in schema and '"type": "string"' in schema
    assert "handoff payload" in vault and '"account": "A-7"' in vault
    assert "messages as sent (1)" in vault
    assert SECRET not in page.content()
    assert widths[0] <= widths[1]


def test_without_the_swarm_the_page_keeps_the_summary_and_says_how(
    browser: Browser, vault_journal: Path, serve: ServeViewer
) -> None:
    """No swarm: the summary, and a note to start the viewer with --swarm."""
    page = _page(browser, serve(vault_journal), "/session/vault", 1280)
    page.locator(".step-model_call details.saw summary").first.click()

    shown = page.locator(".step-model_call details.saw").first.inner_text()

    assert "latest messages" in shown and "--swarm module:attribute" in shown


def test_a_diverged_session_shows_why_and_the_summary(
    browser: Browser, demo_journal: Path, serve: ServeViewer
) -> None:
    """A swarm changed since the run: the page says the replay diverged and shows the summary."""
    page = _page(
        browser, serve(demo_journal, swarm=changed_swarm()), "/session/demo-refund-1", 1280
    )

    shown = _open_saw(page, 0)

    assert "diverged at step" in shown and "latest messages" in shown


def test_the_docs_screenshot_shows_the_demos_refund_with_what_the_model_saw(
    browser: Browser, demo_journal: Path, serve: ServeViewer
) -> None:
    """The viewer guide's screenshot: the refund ticket's page, billing's call opened in full."""
    page = _page(
        browser, serve(demo_journal, swarm=support_swarm()), "/session/demo-refund-1", 1280
    )
    calls = page.locator(".step-model_call details.saw")
    billing = next(
        i
        for i in range(calls.count())
        if "billing call" in page.locator(".step-model_call").nth(i).inner_text()
    )

    shown = _open_saw(page, billing)
    page.locator("details.saw-tool[data-tool=issue_refund] summary").click()
    # Copied to docs/assets/session-page.png for the viewer guide.
    page.screenshot(path=screenshot_path("session-what-the-model-saw"), full_page=True)

    assert "messages as sent (5)" in shown and "handoff payload" in shown
    assert (
        '"reason"'
        in page.locator("details.saw-tool[data-tool=issue_refund] pre.schema").inner_text()
    )


def test_an_opened_request_stays_open_as_a_running_session_grows(
    browser: Browser, demo_journal: Path, serve: ServeViewer
) -> None:
    """A running session's page is drawn again as steps come in; an opened call stays open."""
    with SQLiteJournal(demo_journal) as journal:
        records = _run(journal.read("demo-refund-1"))
    copied = [(r.kind, dict(r.data)) for r in records]
    cut = next(n for n, (kind, _) in enumerate(copied) if kind == "handoff")
    append(demo_journal, "live", copied[:cut])
    page = _page(browser, serve(demo_journal, swarm=support_swarm()), "/session/live", 1280)
    first = _open_saw(page, 0)

    append(demo_journal, "live", copied[cut:], start=cut)
    page.wait_for_selector(".step-handoff")
    page.wait_for_selector(".step-model_call details.saw[open][data-loaded=full]")

    assert "messages as sent (1)" in first
    assert page.locator(".step-model_call details.saw[open]").count() == 1
