"""``python -m swarmkit.dbos worker ...``: the same as ``swarmkit dbos worker ...``."""

from __future__ import annotations

import sys

from swarmkit.dbos._worker import module_main

if __name__ == "__main__":
    sys.exit(module_main())
