"""The interop guide's Python blocks run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "interop.md"
BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_the_guides_code_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Each Python block of docs/guides/interop.md runs on its own and prints its answer."""
    namespace: dict[str, object] = {"__name__": f"interop_guide_{index}"}
    exec(compile(BLOCKS[index], f"interop.md block {index + 1}", "exec"), namespace)

    assert capsys.readouterr().out
