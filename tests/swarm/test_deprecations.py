"""What a Swarm offered before config, spec and with_seams still works for a release, and warns."""

from __future__ import annotations

import warnings

import pytest

from swarmkit import Agent, Swarm, approve
from swarmkit.events import RunFinished
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import FixedRuntime, ScriptedModel, text, transfer


def _swarm() -> Swarm:
    return Swarm([Agent(name="a")], "a", model=ScriptedModel(text("hi")), max_handoffs=3)


def test_an_old_attribute_still_reads_and_names_its_new_home() -> None:
    """swarm.max_handoffs reads the spec's value; the warning says until when, and points here."""
    swarm = _swarm()
    with pytest.warns(DeprecationWarning) as caught:
        assert swarm.max_handoffs == 3
    assert str(caught[0].message) == (
        "swarm.max_handoffs is deprecated since 0.1.0 and will be removed in 0.3.0: "
        "read swarm.spec.max_handoffs"
    )
    assert caught[0].filename == __file__


def test_a_renamed_attribute_names_its_new_name() -> None:
    """swarm.limits moved to swarm.spec.usage_limits."""
    with pytest.warns(DeprecationWarning, match=r"swarm\.spec\.usage_limits"):
        assert _swarm().limits is None


def test_an_attribute_a_swarm_never_had_is_an_attribute_error() -> None:
    """Only the moved names are forwarded; a typo is still an AttributeError."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="max_handofs"):
            _swarm().max_handofs  # noqa: B018


async def test_a_seam_passed_to_one_run_is_used_and_warns_at_the_caller() -> None:
    """run(runtime=...) still takes that runtime for the run, and the warning points here."""
    fixed = FixedRuntime()
    with pytest.warns(
        DeprecationWarning, match=r"since 0\.1\.0 .* 0\.3\.0: use swarm\.with_seams"
    ) as caught:
        result = await _swarm().run("x", runtime=fixed.runtime())
    assert caught[0].filename == __file__
    assert result.session_id == FixedRuntime().runtime().new_id()


async def test_a_seam_passed_to_stream_warns_at_the_caller_too() -> None:
    """stream() is one level shallower than run(); its warning also points at the caller."""
    with pytest.warns(DeprecationWarning) as caught:
        events = [e async for e in _swarm().stream("x", runtime=FixedRuntime().runtime())]
    assert caught[0].filename == __file__
    assert isinstance(events[-1], RunFinished)
    assert events[-1].result.final_output == "hi"


def test_a_seam_passed_to_run_sync_warns_at_the_caller_not_in_the_event_loop() -> None:
    """run_sync(runtime=...) takes that runtime, and its warning points here, not into asyncio."""
    with pytest.warns(DeprecationWarning, match=r"swarm\.with_seams") as caught:
        result = _swarm().run_sync("x", runtime=FixedRuntime().runtime())
    assert caught[0].filename == __file__
    assert result.session_id == FixedRuntime().runtime().new_id()


async def test_a_seam_passed_to_resume_is_used_and_warns_at_the_caller() -> None:
    """resume(runtime=...) goes on with the paused session, warning at this line."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("b"), text("done"))
    agents = [Agent(name="a", handoffs=["b"]), Agent(name="b")]
    swarm = Swarm(agents, "a", model=model, interrupt_on_handoff=True, journal=journal)
    assert (await swarm.run("x", session_id="s")).stop_reason == "interrupted"
    with pytest.warns(DeprecationWarning, match="runtime") as caught:
        result = await swarm.resume("s", decision=approve(), runtime=FixedRuntime().runtime())
    assert caught[0].filename == __file__
    assert result.final_output == "done"
    assert result.trail == ("a", "b")


async def test_an_unknown_keyword_is_a_type_error_not_a_seam() -> None:
    """A misspelt keyword is refused as Python refuses one, not taken for a deprecated seam."""
    with pytest.raises(TypeError, match="runtim"):
        await _swarm().run("x", runtim=None)  # type: ignore[call-arg]
