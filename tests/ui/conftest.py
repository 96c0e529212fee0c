"""Fixtures of the viewer's tests: the demo's journal, viewers served on free loopback ports."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
import pytest

from swarmkit import Swarm
from swarmkit.demo import run_demo, support_swarm
from swarmkit.journal import JournalRecord, SQLiteJournal
from swarmkit.ui import TOKEN_HEADER, Viewer, ViewerServer
from tests.ui.browser import launch
from tests.ui.swarms import pausing_swarm

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

T = TypeVar("T")

SECRET = "sk-live-NEVER-SHOW-4242"
"""A value stored under secret keys in the secret session; no page or reply may hold it."""


def _run(work: Coroutine[object, object, T]) -> T:
    """Run ``work`` on a loop of its own thread: the browser tests' Playwright owns this one's."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, work).result()


@pytest.fixture
def demo_journal(tmp_path: Path) -> Path:
    """A journal holding the demo's three sessions, made in process by the demo itself."""
    path = tmp_path / "demo.sqlite"
    assert _run(run_demo(io.StringIO(), journal_path=path)) == 0
    return path


@pytest.fixture
def paused_journal(demo_journal: Path) -> Path:
    """The demo's journal plus ``paused-refund``: the refund ticket waiting before billing."""
    swarm = pausing_swarm()
    prompt = "Hi, I was charged twice for invoice INV-1042 this month. Please refund it."
    with SQLiteJournal(demo_journal) as journal:
        result = _run(swarm.run(prompt, session_id="paused-refund", journal=journal))
    assert result.stop_reason == "interrupted"
    return demo_journal


@pytest.fixture
def secret_journal(demo_journal: Path) -> Path:
    """The demo's journal plus ``leaky``: a session that journaled secrets in every carrier."""
    # fmt: off
    records: list[tuple[str, dict[str, Any]]] = [
        ("run_started", {"prompt": "hi", "entry_agent": "triage",
                         "context": {"api_key": SECRET, "customer_id": "C-1", "prompt_tokens": 7}}),
        ("agent_started", {"agent": "triage", "handoff_count": 0}),
        ("tool_call", {"agent": "triage", "id": "c1", "name": "login",
                       "arguments": f'{{"user": "dana", "db_password": "{SECRET}"}}',
                       "outcome": {"content": f'{{"accessToken": "{SECRET}"}}', "is_error": False,
                                   "update": {"X-Api-Key": SECRET}}}),
        ("handoff", {"number": 1, "source": "triage", "target": "billing", "decided_by": "llm",
                     "payload": {"invoice_id": "INV-1", "authorization": SECRET},
                     "payload_type": "RefundRequest"}),
        ("agent_started", {"agent": "billing", "handoff_count": 1}),
        ("run_finished", {"stop_reason": "final_output", "final_agent": "billing",
                          "trail": ["triage", "billing"], "turns": 1, "final_output": "done",
                          "pending": None, "error": None}),
    ]
    # fmt: on
    append(demo_journal, "leaky", records)
    return demo_journal


def append(
    path: Path, session_id: str, records: list[tuple[str, dict[str, Any]]], start: int = 0
) -> None:
    """Append ``(kind, data)`` records to a session as one step, from seq ``start``."""
    step = [
        JournalRecord(session_id=session_id, seq=start + n, kind=kind, data=data)
        for n, (kind, data) in enumerate(records)
    ]
    with SQLiteJournal(path) as journal:
        _run(journal.append(step))


ServeViewer = Callable[..., ViewerServer]


@pytest.fixture
def serve() -> Iterator[ServeViewer]:
    """Start a viewer over a journal file on a free loopback port; stopped after the test."""
    started: list[tuple[ViewerServer, SQLiteJournal]] = []

    def start(
        path: Path, *, swarm: Swarm | None = None, allow_decisions: bool = False
    ) -> ViewerServer:
        journal = SQLiteJournal(path)
        server = ViewerServer(Viewer(journal, swarm=swarm, allow_decisions=allow_decisions))
        server.start()
        started.append((server, journal))
        return server

    yield start
    for server, journal in started:
        server.close()
        journal.close()


def client(server: ViewerServer) -> httpx.Client:
    """An HTTP client that sends the token header, as the page's script does."""
    return httpx.Client(
        base_url=f"http://127.0.0.1:{server.port}",
        headers={TOKEN_HEADER: server.token},
        trust_env=False,
    )


@pytest.fixture
def demo_server(demo_journal: Path, serve: ServeViewer) -> ViewerServer:
    """A viewer over the demo's journal, with the demo's swarm."""
    return serve(demo_journal, swarm=support_swarm())


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for a module's tests (Debian's, never a download)."""
    yield from launch()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context (no cookies) and page."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()
