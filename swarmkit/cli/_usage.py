"""How the command is called: usage errors, exit codes and default paths.

Standard library only, so the parser and ``--help`` load nothing else.
"""

from __future__ import annotations

import sys
from pathlib import Path

from swarmkit.lowlevel import mask_locations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

DEFAULT_JOURNAL = Path(".swarmkit") / "journal.sqlite"
DEMO_JOURNAL = DEFAULT_JOURNAL
"""The demo journals where every other command reads by default (fresh session ids each run)."""
DEFAULT_DEMO_MODEL = "gpt-4o-mini"
DRAWING_FORMATS = ("mermaid", "dot", "ascii")  # swarmkit.drawing.FORMATS, checked by a test
MISSING_KEY = "set OPENAI_API_KEY or pass --model with --base-url for a local server"

TARGET_HELP = (
    "a Swarm, or a function marked @swarmkit.swarm_factory that returns one, named as "
    "module:attribute (a dotted module name importable from the current folder, not a path)"
)


class UsageError(Exception):
    """The command was called wrong; shown as one line on stderr, exit code 2."""


class RunStopped(Exception):
    """A run was stopped by Ctrl-C after it was journaled; the message says how to resume."""


def fail(message: str, code: int) -> int:
    """Print the one-line error and return the exit code."""
    print(f"swarmkit: error: {mask_locations(message)}", file=sys.stderr)
    return code
