"""The models guide's code blocks run as written, offline (the blocks needing a key skip it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "models.md"
BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_guide_block_runs_offline(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each block runs with no API key set and makes no network call."""
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    namespace: dict[str, object] = {"__name__": f"guide_block_{index}"}
    exec(compile(BLOCKS[index], f"{GUIDE.name}[{index}]", "exec"), namespace)


def test_the_guide_has_a_block_per_provider() -> None:
    """Model strings, Anthropic, Gemini, Responses and a mixed swarm each have a block."""
    assert len(BLOCKS) == 5
