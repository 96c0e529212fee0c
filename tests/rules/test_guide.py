"""The guide "Find the rules your model is paying for" runs as written and prints what it says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "rules-from-decisions.md"


def test_the_guide_runs_and_prints_its_documented_output() -> None:
    """Each Python block runs in order; it prints the suggestions first, and every output the
    guide shows (each text block but the command lines)."""
    text = GUIDE.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    namespace: dict[str, object] = {"__name__": "guide"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for block in blocks:
            exec(block, namespace)
    shown = [
        block
        for block in re.findall(r"```text\n(.*?)```", text, re.DOTALL)
        if not block.startswith("swarmkit ")
    ]
    assert len(shown) == 6
    assert printed.getvalue().startswith(shown[0])
    assert all(block in printed.getvalue() for block in shown)
