"""The distribution: a free name in the package index, an MIT licence shipped with it."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import tomllib
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


def _extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return set(project["optional-dependencies"])


def test_the_install_page_lists_every_extra() -> None:
    """Each extra pyproject.toml declares has its row on the install page."""
    page = (ROOT / "docs" / "getting-started" / "install.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([\w-]+)` \|", page, re.MULTILINE))
    assert rows == _extras()


def test_the_wheel_check_covers_every_extra() -> None:
    """tools/wheel_check.py imports an entry for each extra but dev (the test toolchain)."""
    spec = importlib.util.spec_from_file_location("wheel_check", ROOT / "tools/wheel_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert set(module.EXTRA_ENTRIES) == _extras() - {"dev"} == module.declared_extras()


def test_the_release_version_is_one_and_the_docs_name_its_wheel() -> None:
    """pyproject, swarmkit.__version__ and the wheel the README and install page name agree."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == swarmkit.__version__ == "0.2.0"
    wheel = f"swarmkit_agents-{swarmkit.__version__}-py3-none-any.whl"
    for doc in (ROOT / "README.md", ROOT / "docs" / "getting-started" / "install.md"):
        named = set(re.findall(r"swarmkit_agents-[\w.]+-py3-none-any\.whl", doc.read_text()))
        assert named == {wheel}, doc
