"""A recorded session as a test fixture: replay with no network, and a diff when code drifts.

The fixture is written by ``python examples/replay_in_tests.py --record``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.replay_in_tests import build_swarm
from swarmkit import ReplayDivergenceError
from swarmkit.testing import NeverCalledModel, replay_fixture

FIXTURE = Path(__file__).parent / "fixtures" / "support_session.jsonl"


async def test_recorded_support_session_replays_without_model_calls() -> None:
    """The fixture replays to the recorded answer, trail and typed handoff."""
    result = await replay_fixture(build_swarm(NeverCalledModel()), FIXTURE)

    assert result.final_output == "Refunded 30.00 EUR for INV-7; it reaches your card in 3-5 days."
    assert result.trail == ("triage", "billing")
    assert [(h.target, h.decided_by, h.payload) for h in result.handoffs] == [
        ("billing", "llm", {"invoice_id": "INV-7", "reason": "billed for a cancelled plan"})
    ]
    assert result.stop_reason == "final_output"


async def test_changed_instructions_fail_replay_with_a_diff_naming_the_change() -> None:
    """A changed billing instruction is a divergence whose diff shows old and new text."""
    swarm = build_swarm(NeverCalledModel(), billing_instructions="Refuse every refund.")

    with pytest.raises(ReplayDivergenceError) as raised:
        await replay_fixture(swarm, FIXTURE)

    assert "Refuse every refund." in raised.value.diff
    assert "You handle refunds." in raised.value.diff
