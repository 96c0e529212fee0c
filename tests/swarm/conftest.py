"""Helpers shared by the swarm loop tests."""

from __future__ import annotations

from swarmkit.models import ModelRequest


def tool_names(request: ModelRequest) -> list[str]:
    """The names of the tools a request offered."""
    return [spec.name for spec in request.tools]
