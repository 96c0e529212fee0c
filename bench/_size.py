"""How big a benchmark runs: its full size, or tiny when ``SWARMKIT_BENCH_TINY=1`` is set.

The tiny size only checks that a benchmark still runs (``tests/test_benchmarks_run.py`` runs
each one so in CI); its figures mean nothing.
"""

from __future__ import annotations

import os

TINY = os.environ.get("SWARMKIT_BENCH_TINY") == "1"
"""Whether this run is the tiny one."""


def size(full: int, tiny: int = 1) -> int:
    """``full``, or ``tiny`` on a tiny run."""
    return tiny if TINY else full
