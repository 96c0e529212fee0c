"""The `swarmkit` command."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `swarmkit` command; returns the exit code."""
    args = sys.argv[1:] if argv is None else argv
    print(f"swarmkit: nothing to do yet for {args}")
    return 0
