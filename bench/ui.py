"""Viewer speed: the sessions-list API over 100,000 sessions, and a 1,000-step session page.

The list API pages over a snapshot of ``Journal.sessions()``; the snapshot's first build
(``sessions()`` itself, which derives each summary at read time on SQLite) is timed apart
from the requests that page over it. The session page is timed in Debian's chromium from
navigation to the rendered timeline. Run: ``make bench`` or ``.venv/bin/python bench/ui.py``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import sync_playwright

from swarmkit.journal import JournalRecord, SQLiteJournal
from swarmkit.ui import TOKEN_HEADER, Viewer, ViewerServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.ui.browser import CHROMIUM, LAUNCH_ARGS

SESSIONS = 100_000
STEPS = 1_000
REQUESTS = 30
PAGE_LOADS = 7
AGENTS = ("triage", "billing", "tech_support", "human")


def _session(number: int) -> list[JournalRecord]:
    """A short finished session: start, two agents, a handoff, two model calls, the end."""
    target = AGENTS[1 + number % 3]
    usage = {"prompt_tokens": 400, "completion_tokens": 20, "total_tokens": 420}
    call = {"agent": "triage", "turn": 1, "digest": "d" * 64,
            "response": {"content": None, "tool_calls": [], "usage": usage}}  # fmt: skip
    kinds: list[tuple[str, dict[str, Any]]] = [
        ("run_started", {"prompt": f"ticket {number}", "entry_agent": "triage", "context": {}}),
        ("agent_started", {"agent": "triage", "handoff_count": 0}),
        ("model_call", call),
        ("handoff", {"number": 1, "source": "triage", "target": target, "decided_by": "llm"}),
        ("agent_started", {"agent": target, "handoff_count": 1}),
        ("model_call", {**call, "agent": target}),
        ("run_finished", {"stop_reason": "final_output", "final_agent": target,
                          "trail": ["triage", target], "turns": 2}),
    ]  # fmt: skip
    session_id = f"s-{number:06d}"
    return [
        JournalRecord(session_id=session_id, seq=seq, kind=kind, data=data)
        for seq, (kind, data) in enumerate(kinds)
    ]


def _long_session() -> list[JournalRecord]:
    records = _session(0)[:3]
    for seq in range(3, STEPS - 1):
        arguments = f'{{"invoice_id": "A-{seq}"}}'
        outcome = {"content": f'{{"invoice_id": "A-{seq}", "status": "paid"}}', "is_error": False}
        data = {"agent": "triage", "id": f"c{seq}", "name": "lookup", "arguments": arguments,
                "outcome": outcome}  # fmt: skip
        records.append(JournalRecord(session_id="s-000000", seq=seq, kind="tool_call", data=data))
    end = {"stop_reason": "final_output", "final_agent": "triage", "trail": ["triage"], "turns": 1}
    records.append(
        JournalRecord(session_id="s-000000", seq=STEPS - 1, kind="run_finished", data=end)
    )
    return [JournalRecord(session_id="long", seq=r.seq, kind=r.kind, data=r.data) for r in records]


async def _fill(path: Path) -> None:
    with SQLiteJournal(path) as journal:
        for number in range(SESSIONS):
            await journal.append(_session(number))
        await journal.append(_long_session())


def _median_ms(http: httpx.Client, path: str, params: dict[str, Any]) -> float:
    times = []
    for _ in range(REQUESTS):
        start = time.perf_counter()
        reply = http.get(path, params=params)
        times.append((time.perf_counter() - start) * 1000)
        reply.raise_for_status()
    return statistics.median(times)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def list_api(server: ViewerServer, listing: SQLiteJournal) -> None:
    """Time sessions() itself, then the list API's pages over the snapshot."""
    start = time.perf_counter()
    asyncio.run(listing.sessions())
    print(f"Journal.sessions() at {SESSIONS + 1:,} sessions: {time.perf_counter() - start:.2f} s")
    http = httpx.Client(
        base_url=f"http://127.0.0.1:{server.port}",
        headers={TOKEN_HEADER: server.token},
        trust_env=False,
        timeout=120,
    )
    start = time.perf_counter()
    http.get("/api/sessions").raise_for_status()
    print(f"first list request (builds the snapshot): {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    http.get("/api/sessions", params={"offset": 90_000}).raise_for_status()
    print(f"list API, a page not seen before (50 sessions read): {_ms(start):.1f} ms")
    cases: dict[str, dict[str, Any]] = {
        "first page (50 rows)": {},
        "page 1,000 (offset 50,000)": {"offset": 50_000},
        "status=finished": {"status": "finished"},
        "search q=s-09": {"q": "s-09"},
        "agent=human (rows read lazily)": {"agent": "human"},
    }
    for name, params in cases.items():
        print(f"list API, {name}: median {_median_ms(http, '/api/sessions', params):.1f} ms")
    session = _median_ms(http, "/api/sessions/long", {})
    print(f"session API, {STEPS:,}-step session: median {session:.1f} ms")


def page_render(server: ViewerServer) -> None:
    """Time the 1,000-step session page from navigation to its rendered timeline."""
    if not CHROMIUM.is_file():
        print("session page: skipped (apt-get install chromium)")
        return
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        page = browser.new_page()
        page.goto(server.url)
        url = f"http://127.0.0.1:{server.port}/session/long"
        times = []
        for _ in range(PAGE_LOADS):
            start = time.perf_counter()
            page.goto(url)
            page.wait_for_selector("body[data-ready=true]")
            times.append(time.perf_counter() - start)
            assert page.locator("#timeline > li").count() == STEPS
        browser.close()
    print(f"session page, {STEPS:,} steps, navigation to rendered: median "
          f"{statistics.median(times) * 1000:.0f} ms (min {min(times) * 1000:.0f})")  # fmt: skip


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.sqlite"
        start = time.perf_counter()
        asyncio.run(_fill(path))
        print(f"wrote {SESSIONS:,} sessions in {time.perf_counter() - start:.0f} s")
        with SQLiteJournal(path) as journal, SQLiteJournal(path) as listing:
            viewer = Viewer(journal, listing=listing)
            with ViewerServer(viewer) as server:
                list_api(server, listing)
                page_render(server)


if __name__ == "__main__":
    main()
