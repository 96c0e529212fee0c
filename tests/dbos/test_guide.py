"""The DBOS guide's Python blocks run as written, in order, offline on SQLite."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from swarmkit import RunResult

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "dbos.md"


def test_the_guides_examples_run_as_written() -> None:
    """Each python block runs in one namespace: a session, a replay, a client, a decision."""
    text = GUIDE.read_text(encoding="utf-8")
    found = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    blocks = [textwrap.dedent(block) for block in found]
    assert len(blocks) >= 5
    namespace: dict[str, object] = {"__name__": "guide"}
    for number, block in enumerate(blocks):
        exec(compile(block, f"{GUIDE.name} block {number}", "exec"), namespace)
    assert isinstance(namespace["replayed"], RunResult)
