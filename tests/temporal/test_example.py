"""examples/temporal_support.py runs the demo tickets on Temporal as they run in process."""

from __future__ import annotations

from examples import temporal_support
from swarmkit.demo import TICKETS, DemoModel, build_support_swarm


async def test_the_temporal_example_answers_every_ticket_as_in_process(
    temporal_address: str,
) -> None:
    """Same trails, stop reasons and answers as the demo swarm run in process."""
    results = await temporal_support.main(temporal_address)

    swarm = build_support_swarm(DemoModel())
    local = [await swarm.run(t.prompt, context=dict(t.context)) for t in TICKETS]
    assert [r.trail for r in results] == [r.trail for r in local]
    assert [r.final_output for r in results] == [r.final_output for r in local]
    assert [r.stop_reason for r in results] == ["final_output"] * len(TICKETS)
    assert "triage" not in results[0].usage  # the outage ticket went by rule
