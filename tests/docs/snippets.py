"""The Python blocks of the README and of every page under docs/, found and run as a reader would.

A block is a fence opened by a line that is exactly three backticks and ``python``. Blocks of
one page run in order in one namespace (a later block may use what an earlier one defined),
on one event loop, so a block may ``await`` at top level. A page whose blocks need servers
names them in a line ``<!-- servers: postgres temporal -->``; the test starts them as the other
tests do and hands their addresses to the blocks in ``DATABASE_URL`` and ``TEMPORAL_ADDRESS``.
A block that needs a live API key is marked by a line ``<!-- not run: REASON -->`` just before
its fence; it is counted, never run.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NOT_RUN_MARKER = "<!-- not run: "
_SERVERS = re.compile(r"^<!-- servers: ([a-z ]+) -->$", re.MULTILINE)
_FENCE = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)
# Words of our own process that never reach a user: reference-document and issue numbers.
PROCESS_WORDS = re.compile(r"\bseeds?\s+00\d|\bissue #?\d+|\bseed-00\d", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class Snippet:
    """One Python block of a page."""

    page: Path
    """The Markdown file, relative to the repository."""
    line: int
    """The line of its opening fence (1-based)."""
    code: str
    """The block's text."""
    live: bool
    """Marked as needing a live key or a server: counted, not run."""


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def servers(page: Path) -> list[str]:
    """The servers a page's blocks need (``<!-- servers: ... -->``), by name."""
    found = _SERVERS.search(page.read_text(encoding="utf-8"))
    return found.group(1).split() if found else []


def snippets(page: Path) -> list[Snippet]:
    """The page's Python blocks, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        found.append(
            Snippet(
                page=page.relative_to(ROOT),
                line=text.count("\n", 0, match.start()) + 1,
                code=match.group(1),
                live=before.strip().startswith(NOT_RUN_MARKER),
            )
        )
    return found


def run_page(page: Path, workdir: Path) -> dict[str, Any]:
    """Run the page's blocks in order, in ``workdir``; return the namespace they built."""
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    loop = asyncio.new_event_loop()
    cwd = Path.cwd()
    os.chdir(workdir)
    try:
        for snippet in snippets(page):
            if not snippet.live:
                _run(snippet, namespace, loop)
    finally:
        os.chdir(cwd)
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    return namespace


def _run(snippet: Snippet, namespace: dict[str, Any], loop: asyncio.AbstractEventLoop) -> None:
    where = f"{snippet.page}:{snippet.line}"
    code = compile(snippet.code, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    try:
        outcome = eval(code, namespace)
        if asyncio.iscoroutine(outcome):
            loop.run_until_complete(outcome)
    except Exception as exc:
        raise AssertionError(f"the block at {where} failed: {exc!r}") from exc
