"""The evaluation guide's Python blocks run as they are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "evaluation.md"


def test_the_guide_code_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every python block of docs/guides/evaluation.md runs, in order, in one namespace, in a
    scratch folder (the blocks write files)."""
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.DOTALL)
    assert len(blocks) >= 4
    namespace: dict[str, object] = {"__name__": "guide"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), namespace)
