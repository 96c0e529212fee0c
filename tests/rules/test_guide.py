"""The guide "Find the rules your model is paying for" runs as written and prints what it says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "rules-from-decisions.md"


def test_the_guide_runs_and_prints_its_documented_output() -> None:
    """Each Python block runs in order; the printed suggestion matches the text block."""
    text = GUIDE.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    namespace: dict[str, object] = {"__name__": "guide"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for block in blocks:
            exec(block, namespace)
    shown = re.findall(r"```text\n(.*?)```", text, re.DOTALL)[0]
    assert printed.getvalue().startswith(shown)
