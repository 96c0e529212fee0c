"""The viewer stays outside the core: nothing imports it but the command, and only when asked."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "swarmkit"


def test_no_core_module_imports_the_viewer() -> None:
    """Outside swarmkit/ui, only the command's ui handler imports swarmkit.ui."""
    importers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith("ui/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("swarmkit.ui"):
                importers.append(module)
    assert importers == ["cli/_commands.py"]


def test_importing_swarmkit_and_its_command_loads_no_viewer_or_http_server() -> None:
    """A fresh interpreter importing swarmkit and its command has no swarmkit.ui, http.server."""
    code = (
        "import sys, swarmkit, swarmkit.cli; "
        "print(sorted(m for m in sys.modules if m.startswith(('swarmkit.ui', 'http.server'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout

    assert out.strip() == "[]"


def test_the_pages_ship_inside_the_package() -> None:
    """index.html, app.js and app.css are package data, and reference nothing off the machine."""
    static = PACKAGE / "ui" / "static"
    for name in ("index.html", "app.js", "app.css"):
        text = (static / name).read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text, name
