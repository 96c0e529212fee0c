"""Every benchmark in bench/ still runs: each once, at its tiny size, in a fresh interpreter.

The figures of a tiny run mean nothing; this only keeps the scripts from rotting between the
releases that measure with them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"

ARGUMENTS: dict[str, list[str]] = {
    "against.py": ["--against", str(ROOT), "--rounds", "1"],
    "cli_start.py": ["--against", "HEAD", "--rounds", "1"],
    "durable_chaos.py": ["--sessions", "12", "--kills", "2", "--workers", "2"],
    "durable_scale.py": ["--sessions", "4", "--workers", "2", "--warmup", "1"],
    "evals.py": ["--rounds", "1"],
    "import_time.py": ["--rounds", "1"],
    "journal.py": ["--flat"],
    "providers.py": ["--rounds", "1", "--calls", "2"],
    "route.py": ["--rounds", "1", "--calls", "5"],
    "rules.py": ["50"],
    "rules_shadow.py": ["20"],
    "rules_suggest.py": ["--sessions", "50"],
    "tracing.py": ["--rounds", "1"],
}
"""What each script takes to run small, beside ``SWARMKIT_BENCH_TINY=1``."""

LEFT_OUT = {
    "a2a_tck.py": "needs a checkout of the A2A conformance kit and a venv with its requirements",
    "dbos_sessions.py": "starts an embedded Postgres and DBOS; tests/dbos runs the same paths",
    "temporal.py": "starts Temporal's dev server and workers; tests/temporal runs those paths",
    "ui.py": "drives a browser; tests/ui runs the viewer",
}
"""Benchmarks whose set-up alone outlasts this test; their paths are tested elsewhere."""

SCRIPTS = sorted(
    path.name
    for path in BENCH.glob("*.py")
    if not path.name.startswith("_") and path.name not in LEFT_OUT
)


def test_every_benchmark_is_run_or_left_out_with_a_reason() -> None:
    """A new benchmark is run here, or named in LEFT_OUT with why."""
    assert set(SCRIPTS) | set(LEFT_OUT) == {
        path.name for path in BENCH.glob("*.py") if not path.name.startswith("_")
    }
    assert set(ARGUMENTS) <= set(SCRIPTS)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_benchmark_runs_at_its_tiny_size(script: str) -> None:
    """The script ends cleanly and prints its figures."""
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *ARGUMENTS.get(script, [])],
        cwd=ROOT,
        env={**os.environ, "SWARMKIT_BENCH_TINY": "1", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), done.stderr[-3000:]
