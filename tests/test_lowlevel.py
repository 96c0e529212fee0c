"""The extenders' door: every name documented, and opening it loads no HTTP client or extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import swarmkit.lowlevel
from tests.test_architecture import HEAVY

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "lowlevel.md"


def test_every_name_is_in_the_module_docstring_and_on_its_reference_page() -> None:
    """Each name of `swarmkit.lowlevel.__all__` is listed by group and has its own entry."""
    doc = swarmkit.lowlevel.__doc__ or ""
    page = PAGE.read_text(encoding="utf-8")
    assert [name for name in swarmkit.lowlevel.__all__ if f"``{name}``" not in doc] == []
    missing = [
        name for name in swarmkit.lowlevel.__all__ if f"::: swarmkit.lowlevel.{name}\n" not in page
    ]
    assert missing == []


def test_every_name_loads_without_an_http_client_or_an_extra() -> None:
    """Reading every name of the door in a fresh interpreter imports no openai, httpx or extra."""
    probe = (
        "import sys, swarmkit.lowlevel as door\n"
        "for name in door.__all__: getattr(door, name)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
