"""The tutorial runs both ways it says it does: pasted into the asyncio REPL, and as one file
with its blocks inside ``async def main()``; each way runs twice, so starting over works."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.docs.snippets import ROOT, snippets

TUTORIAL = ROOT / "docs" / "getting-started" / "tutorial.md"
LAST_LINE = "final_output Done: 900 EUR refunded on INV-10."


def _blocks() -> list[str]:
    return [s.code for s in snippets(TUTORIAL)]


def _python(arguments: list[str], folder: Path, stdin: str | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, *arguments],
        cwd=folder,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_the_tutorial_runs_as_one_file_again_and_again(tmp_path: Path) -> None:
    """The blocks inside ``async def main()`` and ``asyncio.run(main())``, as the page's last
    section says, run as ``python tutorial.py``, twice in one folder."""
    body = textwrap.indent("\n".join(_blocks()), "    ")
    program = f"import asyncio\n\n\nasync def main() -> None:\n{body}\n\nasyncio.run(main())\n"
    (tmp_path / "tutorial.py").write_text(program)
    assert "async def main() -> None:" in TUTORIAL.read_text()
    assert "asyncio.run(main())" in TUTORIAL.read_text()

    for _ in range(2):
        assert LAST_LINE in _python(["tutorial.py"], tmp_path)


def test_the_tutorial_runs_pasted_into_the_asyncio_repl(tmp_path: Path) -> None:
    """``python -m asyncio`` given the blocks one after the other prints every output; a second
    session in the same folder starts over without an error."""
    pasted = "\n\n".join(block + "\n" for block in _blocks()) + "\nexit()\n"
    for _ in range(2):
        out = _python(["-m", "asyncio"], tmp_path, stdin=pasted)
        assert LAST_LINE in out and "Traceback" not in out and "Error" not in out
