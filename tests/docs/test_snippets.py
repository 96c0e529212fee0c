"""Every Python block of the README and the docs runs as it is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.snippets import ROOT, pages, run_page, snippets

LIVE_BLOCKS = 7
"""Blocks marked ``<!-- not run: ... -->``: the Postgres and Temporal guide (4: they need
those servers), the MCP guide (1: a server and a live model) and openai-agents' run on the
migration page (1: a live key; its agents and handoff are built and checked), the models
guide's live calls (1: three providers' keys; the swarms are built offline). Raise it only
for a block that truly cannot run offline in a moment."""


@pytest.mark.parametrize("page", pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_the_python_blocks_of_the_page_run(page: Path, tmp_path: Path) -> None:
    """Each page's blocks run in order in one namespace, offline, in a scratch folder."""
    run_page(page, tmp_path)


def test_the_runner_finds_the_readme_and_every_docs_page() -> None:
    """A new page under docs/ is picked up without being listed anywhere."""
    found = {str(page.relative_to(ROOT)) for page in pages()}
    assert "README.md" in found
    assert {str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")} <= found


def test_only_the_counted_blocks_skip_running() -> None:
    """Blocks marked live are few and counted, so skipping one is a deliberate choice."""
    live = [s for page in pages() for s in snippets(page) if s.live]
    assert len(live) == LIVE_BLOCKS, [f"{s.page}:{s.line}" for s in live]
