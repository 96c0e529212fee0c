"""Temporal refuses a swarm with a spend ledger when it is registered, not mid-run."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmkit import Agent, Budget, ConfigurationError, Ledger, Swarm
from swarmkit.testing import ScriptedModel


def _swarm(tmp_path: Path) -> Swarm:
    ledger = Ledger(tmp_path / "spend.db", [Budget(name="calls", limit=5, unit="calls")])
    return Swarm([Agent(name="a")], "a", model=ScriptedModel(), ledger=ledger)


def test_a_temporal_worker_refuses_a_swarm_with_a_ledger(tmp_path: Path) -> None:
    """Reservations are not activities yet: the registry says so and how to go on."""
    from swarmkit.temporal import Registry  # noqa: PLC0415 - the temporal extra

    with pytest.raises(ConfigurationError, match="swarm 'desk' has a spend ledger"):
        Registry(swarms={"desk": _swarm(tmp_path)}, models={})
