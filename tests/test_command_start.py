"""The command starts at once: help and journal listings load no model client and no Pydantic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from swarmkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("openai", "httpx", "pydantic", "tenacity", "swarmkit.swarm")


def _loaded_after(argv: list[str]) -> list[str]:
    code = (
        f"import json, sys\nfrom swarmkit.cli import main\nmain({argv!r})\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_help_loads_no_model_client_nor_the_swarm() -> None:
    """`swarmkit --help` imports neither openai, httpx, Pydantic nor the run machinery."""
    assert _loaded_after(["--help"]) == []


def test_listing_sessions_loads_no_model_client_nor_the_swarm(tmp_path: Path) -> None:
    """`swarmkit sessions` reads the journal without loading what a run needs."""
    journal = tmp_path / "j.sqlite"
    assert main(["demo", "--offline", "--journal", str(journal)]) == 0

    assert _loaded_after(["sessions", "--journal", str(journal)]) == []


def test_import_swarmkit_loads_no_module_of_its_own_until_a_name_is_used() -> None:
    """`import swarmkit` resolves public names on first use; using one loads its module."""
    code = (
        "import sys, swarmkit\nbefore = 'swarmkit.swarm' in sys.modules\n"
        "swarmkit.Swarm\nprint(before, 'swarmkit.swarm' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "True"]
