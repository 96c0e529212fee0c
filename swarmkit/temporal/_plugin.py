"""SwarmPlugin: registers the workflow and activities, the data converter and the sandbox rules."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, DefaultPayloadConverter
from temporalio.plugin import SimplePlugin
from temporalio.worker import ReplayerConfig, WorkerConfig, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from swarmkit.exceptions import ConfigurationError
from swarmkit.journal import Journal
from swarmkit.models import Model
from swarmkit.swarm import Swarm
from swarmkit.temporal._activities import SwarmActivities
from swarmkit.temporal._options import ActivityOptions
from swarmkit.temporal._registry import (
    DEFAULT_STEPS_PER_RUN,
    REPLAY,
    TEMPORAL_PAYLOAD_LIMIT,
    Registry,
    activate,
    load_swarm,
)
from swarmkit.temporal._workflow import SwarmWorkflow

PASSTHROUGH = ("swarmkit", "pydantic", "pydantic_core", "annotated_types", "structlog")
"""Modules the workflow sandbox shares with the worker instead of re-importing them per run:
the loop is deterministic by construction, and its I/O goes through activities."""


class SwarmPlugin(SimplePlugin):
    """Runs swarm sessions on Temporal; pass it to ``Client.connect`` and to ``Worker``.

    ``swarms`` maps names to ``"package.module:attribute"`` (or Swarm objects), the same code
    on every worker; ``models`` maps the models' names (``OpenAIModel("gpt-4o")`` is
    ``"gpt-4o"``) to the real models, which only activities call. Build OpenAI models with
    ``retry=RetryPolicy(max_attempts=1)``: Temporal's retry policy is the one retry layer.
    """

    def __init__(
        self,
        *,
        swarms: Mapping[str, str | Swarm] | None = None,
        models: Mapping[str, Model] | None = None,
        model_options: ActivityOptions | None = None,
        tool_options: ActivityOptions | None = None,
        journal: Journal | None = None,
        steps_per_run: int = DEFAULT_STEPS_PER_RUN,
        max_payload_bytes: int = TEMPORAL_PAYLOAD_LIMIT,
    ) -> None:
        if steps_per_run < 1:
            raise ConfigurationError(f"steps_per_run must be at least 1, got {steps_per_run}")
        _check_single_retry_layer(models or {})
        self._swarms = dict(swarms or {})
        self._settings: dict[str, Any] = {
            "models": dict(models or {}),
            "model_options": model_options or ActivityOptions(),
            "tool_options": tool_options or ActivityOptions(),
            "journal": journal,
            "steps_per_run": steps_per_run,
            "max_payload_bytes": max_payload_bytes,
        }
        self._registry: Registry | None = None
        super().__init__(
            "swarmkit.SwarmPlugin",
            data_converter=_data_converter,
            workflows=[SwarmWorkflow],
            activities=self._activities,
            workflow_runner=_passthrough,
        )

    @property
    def registry(self) -> Registry:
        """The worker's registry; swarms are imported the first time a worker needs them."""
        if self._registry is None:
            swarms = {name: load_swarm(name, target) for name, target in self._swarms.items()}
            self._registry = Registry(swarms=swarms, **self._settings)
        return self._registry

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        """Register the workflow and activities, and make the registry the task queue's."""
        config = super().configure_worker(config)
        activate(config["task_queue"], self.registry)
        return config

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        """Register the workflow for replaying histories against this registry."""
        config = super().configure_replayer(config)
        activate(REPLAY, self.registry)
        return config

    def _activities(
        self, existing: Sequence[Callable[..., Any]] | None
    ) -> list[Callable[..., Any]]:
        return [*(existing or []), *SwarmActivities(self.registry).all()]


def _check_single_retry_layer(models: Mapping[str, Model]) -> None:
    """Inside an activity Temporal retries; a model that also retries would multiply attempts."""
    for name, model in models.items():
        attempts = getattr(getattr(model, "retry", None), "max_attempts", 1)
        if isinstance(attempts, int) and attempts > 1:
            raise ConfigurationError(
                f"model {name!r} retries on its own ({attempts} attempts); on Temporal the "
                "activity's retry policy is the one retry layer: build it with "
                "retry=RetryPolicy(max_attempts=1) and set ActivityOptions(retry_policy=...)"
            )


def _data_converter(existing: DataConverter | None) -> DataConverter:
    """Pydantic's JSON converter, unless the application chose a payload converter of its own."""
    if existing is None or existing.payload_converter_class is DefaultPayloadConverter:
        base = existing or pydantic_data_converter
        return dataclasses.replace(
            base, payload_converter_class=pydantic_data_converter.payload_converter_class
        )
    return existing


def _passthrough(runner: WorkflowRunner | None) -> WorkflowRunner:
    if runner is None:
        raise ConfigurationError("SwarmPlugin needs a workflow runner on the Worker")
    if isinstance(runner, SandboxedWorkflowRunner):
        restrictions = runner.restrictions.with_passthrough_modules(*PASSTHROUGH)
        return dataclasses.replace(runner, restrictions=restrictions)
    return runner
