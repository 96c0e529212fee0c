"""What a Swarm used to offer and still does for one release, with a warning naming the new way."""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import fields

from swarmkit.spec import SwarmSpec

DEPRECATED_SINCE = "0.1.0"
"""The release that deprecated what this module still offers."""

REMOVED_IN = "0.3.0"
"""The release that removes it."""

DEPRECATION = (
    f"{{what}} is deprecated since {DEPRECATED_SINCE} and will be removed in {REMOVED_IN}: "
    "{instead}"
)
"""Every deprecation's message: ``DEPRECATION.format(what=..., instead=...)``, where ``instead``
says what to use."""

MOVED = {
    **{f.name: "spec" for f in fields(SwarmSpec) if f.name not in ("plans", "fingerprint")},
    "limits": "spec",
    "peer_handoffs": "spec",
    "runtime": "config",
    "tool_runner": "config",
    "decisions": "config",
    "lease_ttl": "config",
    "observers": "config",
    "redactor": "config",
    "context_type": "spec",
}
"""Attributes a Swarm had before ``config`` and ``spec``, and where each now lives."""

RENAMED = {"limits": "usage_limits", "redactor": "redact_keys"}
"""Those whose name changed in their new home."""


def moved_attribute(name: str, type_name: str) -> tuple[str, str]:
    """Warn that ``swarm.<name>`` moved; where it lives now (``"spec"``/``"config"``, and its
    name there). AttributeError for a name a Swarm never had."""
    owner = MOVED.get(name)
    if owner is None:
        raise AttributeError(f"{type_name!r} object has no attribute {name!r}")
    new_name = RENAMED.get(name, name)
    warnings.warn(
        DEPRECATION.format(what=f"swarm.{name}", instead=f"read swarm.{owner}.{new_name}"),
        DeprecationWarning,
        stacklevel=3,
    )
    return owner, new_name


def check_per_call_seams(*, runtime: object, tool_runner: object, decisions: object) -> None:
    """Warn when one call was given seams of its own (each is None when it was not)."""
    seams = {"runtime": runtime, "tool_runner": tool_runner, "decisions": decisions}
    given = [name for name, seam in seams.items() if seam is not None]
    if not given:
        return
    warnings.warn(
        DEPRECATION.format(
            what=f"passing {', '.join(sorted(given))} to a run",
            instead="use swarm.with_seams(...) and run the swarm it returns",
        ),
        DeprecationWarning,
        stacklevel=_past_the_facade(),
    )


_FACADE = os.path.join(os.path.dirname(__file__), "swarm.py")


def _past_the_facade() -> int:
    """The warning's stacklevel that points at the caller of the facade, however many of the
    facade's own frames are between."""
    level, frame = 2, sys._getframe(2)  # 1: the warning's caller; 2: its caller
    while frame.f_back is not None and frame.f_code.co_filename == _FACADE:
        level, frame = level + 1, frame.f_back
    return level
