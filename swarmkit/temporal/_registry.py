"""The registry a worker holds: swarms by name, real models by name, and how calls run."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from swarmkit.exceptions import ConfigurationError
from swarmkit.journal import Journal
from swarmkit.models import Model
from swarmkit.swarm import Swarm
from swarmkit.temporal._options import ActivityOptions

DEFAULT_STEPS_PER_RUN = 200
"""Model and tool steps a workflow run takes before it continues as new."""

TEMPORAL_PAYLOAD_LIMIT = 2 * 1024 * 1024
"""Temporal's default limit on one payload (bytes)."""

_T = TypeVar("_T")


@dataclass(frozen=True, kw_only=True)
class Registry:
    """Everything a worker needs to run sessions; the same on every worker of a task queue."""

    swarms: Mapping[str, Swarm]
    """The swarms sessions may name, loaded from ``module:attribute`` on this worker."""
    models: Mapping[str, Model]
    """The real models by name; they are only ever called inside activities."""
    model_options: ActivityOptions = field(default_factory=ActivityOptions)
    """How model calls run."""
    tool_options: ActivityOptions = field(default_factory=ActivityOptions)
    """How function tool calls run."""
    journal: Journal | None = None
    """Where the mirror activity writes each session's records, if anywhere."""
    steps_per_run: int = DEFAULT_STEPS_PER_RUN
    """Model and tool steps per workflow run before it continues as new."""
    max_payload_bytes: int = TEMPORAL_PAYLOAD_LIMIT
    """The largest model request or answer a step may carry."""

    def swarm(self, name: str) -> Swarm:
        """The swarm registered as ``name``; ConfigurationError naming the known ones."""
        return _registered(self.swarms, "swarm", name)

    def model(self, name: str) -> Model:
        """The real model registered as ``name``; ConfigurationError naming the known ones."""
        return _registered(self.models, "model", name)


def _registered(table: Mapping[str, _T], kind: str, name: str) -> _T:
    """``table[name]``, or a ConfigurationError naming the known ones and how to add one."""
    found = table.get(name)
    if found is None:
        known = ", ".join(sorted(table)) or "none"
        raise ConfigurationError(
            f"{kind} {name!r} is not registered on this worker (registered: {known}); "
            f"add it to SwarmPlugin({kind}s={{...}})"
        )
    return found


def load_swarm(name: str, target: str | Swarm) -> Swarm:
    """The Swarm a registry entry names: a Swarm, or ``"package.module:attribute"`` naming a
    Swarm or a function without arguments that builds one."""
    if isinstance(target, Swarm):
        return target
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(f"swarm {name!r}: {target!r} must read 'package.module:attribute'")
    value: Any = getattr(importlib.import_module(module_name), attribute, None)
    if callable(value) and not isinstance(value, Swarm):
        value = value()
    if not isinstance(value, Swarm):
        raise ConfigurationError(
            f"swarm {name!r}: {target!r} is {type(value).__name__}, not a Swarm"
        )
    return value


def model_name(model: Model) -> str | None:
    """The name a model is registered under: its ``name`` attribute (OpenAIModel, ScriptedModel)."""
    name = getattr(model, "name", None)
    return name if isinstance(name, str) and name else None


REPLAY = "*replay*"
"""The key a Replayer's registry is activated under."""

_ACTIVE: dict[str, Registry] = {}
"""The registry of the worker serving each task queue in this process (the latest one wins)."""


def activate(task_queue: str, registry: Registry) -> None:
    """Make ``registry`` the one workflows on ``task_queue`` in this process use."""
    _ACTIVE[task_queue] = registry


def active(task_queue: str) -> Registry:
    """The registry of the worker serving ``task_queue``."""
    # A Replayer has no task queue of its own; it activates its registry under REPLAY.
    registry = _ACTIVE.get(task_queue) or _ACTIVE.get(REPLAY)
    if registry is None:
        raise ConfigurationError(
            f"no SwarmPlugin serves task queue {task_queue!r} in this process; "
            "pass plugins=[SwarmPlugin(...)] to the Worker"
        )
    return registry
