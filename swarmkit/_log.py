"""Structured log events through structlog, silent until the application configures structlog.

The library never calls ``structlog.configure``: an application that wants swarmkit's events
configures structlog as it likes; one that does not gets no output from swarmkit (structlog's
own default would print every event to stdout).
"""

from __future__ import annotations

from typing import Any

import structlog


def log(logger: str, event: str, *, level: str = "info", **fields: Any) -> None:
    """Emit ``event`` (a snake_case fact) with its context as keys, if structlog is configured."""
    if structlog.is_configured():
        getattr(structlog.get_logger(logger), level)(event, **fields)
