"""Every Python block of the README and the docs runs as it is written."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.docs.snippets import ROOT, pages, run_page, servers, snippets

LIVE_BLOCKS = 2
"""Blocks marked ``<!-- not run: ... -->``: openai-agents' run on the migration page (a live
key; its agents and handoff are built and checked) and the models guide's live calls (three
providers' keys; the swarms are built offline). Raise it only for a block that needs a key."""


@pytest.mark.parametrize("page", pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_the_python_blocks_of_the_page_run(
    page: Path, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page's blocks run in order in one namespace, in a scratch folder, with the servers
    the page names started on loopback (and nothing else reachable)."""
    with contextlib.ExitStack() as started:
        for name in servers(page):
            variable, address = _start(name, request, started)
            monkeypatch.setenv(variable, address)
        run_page(page, tmp_path)


def _start(
    name: str, request: pytest.FixtureRequest, started: contextlib.ExitStack
) -> tuple[str, str]:
    """Start a server a page needs, as the other tests do; its variable and address."""
    if name == "postgres":
        return "DATABASE_URL", request.getfixturevalue("postgres_server").dsn
    if name == "temporal":
        from swarmkit.temporal import dev_server  # noqa: PLC0415 - only this page needs it

        return "TEMPORAL_ADDRESS", started.enter_context(dev_server())
    raise AssertionError(f"unknown server {name!r} in a <!-- servers: --> line")


def test_the_runner_finds_the_readme_and_every_docs_page() -> None:
    """A new page under docs/ is picked up without being listed anywhere."""
    found = {str(page.relative_to(ROOT)) for page in pages()}
    assert "README.md" in found
    assert {str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")} <= found


def test_only_the_counted_blocks_skip_running() -> None:
    """Blocks marked live are few and counted, so skipping one is a deliberate choice."""
    live = [s for page in pages() for s in snippets(page) if s.live]
    assert len(live) == LIVE_BLOCKS, [f"{s.page}:{s.line}" for s in live]
