"""The extenders' door: what people who build engines, stores, tool runners and servers use.

A swarm's users find their names in ``swarmkit`` and ``swarmkit.journal``. This module is for
the people who drive the run loop from somewhere else (a durable engine, a worker, a
server), store its records somewhere new, or show journals to people: it gathers the
engine-level parts from the modules that define them, so nothing becomes public only to be
imported. Like ``swarmkit`` itself, each name loads its module on first use, so ``import
swarmkit.lowlevel`` costs almost nothing.

The compiled swarm and the seams a run reaches the world through:

- ``SwarmSpec``: the frozen compiled swarm a run loop drives; ``AgentPlan``: one agent of it.
- ``RunSeams``: how one run reaches the world beyond its model: a ``Runtime`` (ids, clock,
  sleep, randomness), a ``ToolRunner`` (where function tool calls run), a ``DecisionSource``
  (who decides a pause) and a ``Delegator`` (who runs a delegation's ``SubRun``).

Step writing, the loop's one door to durability:

- ``StepWriter``: the protocol the loop journals every step through, and asks what the journal
  held for a step being replayed; it answers ``Held`` (``NOTHING_HELD`` when it holds none).
- ``RequestHistory``: the messages a model request sends, held by reference so a digest
  hashes only what was appended.

Records into a journal:

- ``RecordSink``: anything a run's records can be written to (a ``mirror=``).
- ``append_mirrored``: copies an engine's mirrored records into a shared journal,
  idempotently, each session under its writer lease for ``MIRROR_LEASE_SECONDS``.
- ``RulesLogElsewhere``: the base of an engine's in-workflow session journal whose rules log
  lives in the shared journal (the engine says how to reach it: a step, an activity).

Codecs, for an engine that keeps a run's steps in a history of its own (each value's
``*_to_data`` is JSON-safe and its ``*_from_data`` gives back an equal value):

- ``response_to_data`` / ``response_from_data``: a model's response.
- ``outcome_to_data`` / ``outcome_from_data``: a tool call's ``ToolOutcome``.
- ``decision_to_data`` / ``decision_from_data``: a person's decision.
- ``event_to_data`` / ``event_from_data``: an event a run streamed.
- ``context_to_data`` / ``context_from_data``: the run context (its ``deps`` stay behind).

Showing journals, for commands and viewers:

- ``journal_label``: a journal's location fit to show (a Postgres password hidden);
  ``mask_locations``: the same for every location in a text; ``is_postgres_location``: whether
  a location is a Postgres URL rather than a file path.
- ``step_times``: each record's step on the session's clock, as ``StepTime`` values.
- ``TURN_MARK``: what separates a conversation's id from a later turn's number in a session id.
- ``EVAL_RUN_MARK``: what an eval run's manifest session id starts with; listings show such a
  session with the state ``EVAL_RUN_STATE``, never as a run.

A run streamed by a server:

- ``stream_written``: ``swarm.stream`` with each piece of the answer written by the server
  in its own wire form where the run makes it, no TextDelta event built (the AG-UI endpoint
  writes its SSE messages so).

A queue of people on an engine, for engines and servers that run conversations a person takes
over (``swarmkit.queues`` is the people's side):

- ``person_pending``: what a session's records leave it waiting for when that is a person.
- ``people_notes``: the claims, replies and escalations among a session's records, which an
  engine copies into its own journal before a hand-back resumes the run.
- ``engine_notes``: the notes a mirror adds after a session parked for a person, naming the
  engine that resumes it; ``check_in_process`` refuses a hand-back in this process of a
  session an engine runs, saying how to send it there.
"""

import typing as _typing

from swarmkit._lazy import lazy_getattr as _lazy_getattr

if _typing.TYPE_CHECKING:
    from swarmkit.context import context_from_data, context_to_data
    from swarmkit.events import event_from_data, event_to_data
    from swarmkit.interrupts import DecisionSource, decision_from_data, decision_to_data
    from swarmkit.journal._codec import response_from_data, response_to_data
    from swarmkit.journal._mirror import MIRROR_LEASE_SECONDS, RulesLogElsewhere, append_mirrored
    from swarmkit.journal._open import is_postgres_location, journal_label, mask_locations
    from swarmkit.journal._records import RecordSink
    from swarmkit.journal._times import StepTime, step_times
    from swarmkit.journal._turns import EVAL_RUN_MARK, EVAL_RUN_STATE, TURN_MARK
    from swarmkit.journal._writer import NOTHING_HELD, Held, RequestHistory, StepWriter
    from swarmkit.plan import AgentPlan
    from swarmkit.queues import check_in_process, engine_notes, people_notes, person_pending
    from swarmkit.runtime import Runtime
    from swarmkit.spec import Delegator, RunSeams, SubRun, SwarmSpec
    from swarmkit.swarm import stream_written
    from swarmkit.tools import ToolOutcome, ToolRunner, outcome_from_data, outcome_to_data

__all__ = [
    "AgentPlan",
    "DecisionSource",
    "Delegator",
    "EVAL_RUN_MARK",
    "EVAL_RUN_STATE",
    "Held",
    "MIRROR_LEASE_SECONDS",
    "NOTHING_HELD",
    "RecordSink",
    "RequestHistory",
    "RulesLogElsewhere",
    "RunSeams",
    "Runtime",
    "StepTime",
    "StepWriter",
    "SubRun",
    "SwarmSpec",
    "TURN_MARK",
    "ToolOutcome",
    "ToolRunner",
    "append_mirrored",
    "check_in_process",
    "context_from_data",
    "context_to_data",
    "decision_from_data",
    "decision_to_data",
    "engine_notes",
    "event_from_data",
    "event_to_data",
    "is_postgres_location",
    "journal_label",
    "mask_locations",
    "outcome_from_data",
    "outcome_to_data",
    "people_notes",
    "person_pending",
    "response_from_data",
    "response_to_data",
    "step_times",
    "stream_written",
]

# Where each name lives: importing this module loads none of them, so a store or a command
# that needs one journal helper does not pay for the model types the codecs import.
_HOMES: dict[str, str] = {
    "AgentPlan": "swarmkit.plan",
    "context_from_data": "swarmkit.context",
    "context_to_data": "swarmkit.context",
    "event_from_data": "swarmkit.events",
    "event_to_data": "swarmkit.events",
    "DecisionSource": "swarmkit.interrupts",
    "decision_from_data": "swarmkit.interrupts",
    "decision_to_data": "swarmkit.interrupts",
    "response_from_data": "swarmkit.journal._codec",
    "response_to_data": "swarmkit.journal._codec",
    "MIRROR_LEASE_SECONDS": "swarmkit.journal._mirror",
    "append_mirrored": "swarmkit.journal._mirror",
    "RulesLogElsewhere": "swarmkit.journal._mirror",
    "is_postgres_location": "swarmkit.journal._open",
    "journal_label": "swarmkit.journal._open",
    "mask_locations": "swarmkit.journal._open",
    "RecordSink": "swarmkit.journal._records",
    "StepTime": "swarmkit.journal._times",
    "step_times": "swarmkit.journal._times",
    "TURN_MARK": "swarmkit.journal._turns",
    "EVAL_RUN_MARK": "swarmkit.journal._turns",
    "EVAL_RUN_STATE": "swarmkit.journal._turns",
    "Held": "swarmkit.journal._writer",
    "NOTHING_HELD": "swarmkit.journal._writer",
    "RequestHistory": "swarmkit.journal._writer",
    "StepWriter": "swarmkit.journal._writer",
    "check_in_process": "swarmkit.queues",
    "engine_notes": "swarmkit.queues",
    "people_notes": "swarmkit.queues",
    "person_pending": "swarmkit.queues",
    "Runtime": "swarmkit.runtime",
    "Delegator": "swarmkit.spec",
    "RunSeams": "swarmkit.spec",
    "SubRun": "swarmkit.spec",
    "SwarmSpec": "swarmkit.spec",
    "stream_written": "swarmkit.swarm",
    "ToolOutcome": "swarmkit.tools",
    "ToolRunner": "swarmkit.tools",
    "outcome_from_data": "swarmkit.tools",
    "outcome_to_data": "swarmkit.tools",
}


__getattr__ = _lazy_getattr(__name__, _HOMES)
