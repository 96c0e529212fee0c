"""``python -m swarmkit.dbos worker ...``: a DBOS worker serving swarms."""

from __future__ import annotations

import sys

from swarmkit.dbos._worker import main

if __name__ == "__main__":
    sys.exit(main())
