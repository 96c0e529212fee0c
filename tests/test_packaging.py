"""The distribution: a free name in the package index, an MIT licence shipped with it."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import swarmkit

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "swarmkit-agents"


def test_distribution_is_swarmkit_agents_and_the_import_name_stays_swarmkit() -> None:
    """`pip install swarmkit-agents` installs the package that `import swarmkit` loads."""
    assert importlib.metadata.version(DISTRIBUTION) == swarmkit.__version__
    files = importlib.metadata.files(DISTRIBUTION) or []
    assert any(str(f).startswith("swarmkit") for f in files)


def test_the_licence_is_declared_mit_and_shipped() -> None:
    """The metadata says MIT and names the LICENSE file, which holds the MIT text."""
    metadata = importlib.metadata.metadata(DISTRIBUTION)
    assert metadata["License-Expression"] == "MIT"
    assert "LICENSE" in (metadata.get_all("License-File") or [])
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_every_install_line_in_the_docs_uses_the_distribution_name() -> None:
    """No README or example doc tells anyone to `pip install swarmkit` (someone else's code)."""
    docs = [ROOT / "README.md", *sorted((ROOT / "examples").glob("*.md"))]
    docs += sorted((ROOT / "docs").rglob("*.md"))
    lines = [
        line
        for doc in docs
        for line in doc.read_text(encoding="utf-8").splitlines()
        if re.search(r"pip install\s+['\"]?swarmkit", line)
    ]
    assert lines
    assert all(re.search(r"pip install\s+['\"]?swarmkit-agents", line) for line in lines)
