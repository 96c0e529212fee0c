"""Structured log events through structlog, silent until the application configures structlog.

The library never calls ``structlog.configure``: an application that wants swarmkit's events
configures structlog as it likes; one that does not gets no output from swarmkit (structlog's
own default would print every event to stdout).

structlog is not imported here: an application that configured it has imported it, so until
then every event is silent without loading it (it and what it loads cost about 0.06 s).
"""

from __future__ import annotations

import sys
from typing import Any


def log(logger: str, event: str, *, level: str = "info", **fields: Any) -> None:
    """Emit ``event`` (a snake_case fact) with its context as keys, if structlog is configured."""
    structlog = sys.modules.get("structlog")
    if structlog is not None and structlog.is_configured():
        getattr(structlog.get_logger(logger), level)(event, **fields)
