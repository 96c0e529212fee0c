"""What crosses between a workflow and its activities, as JSON data and back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import to_json

from swarmkit.journal import JournalRecord
from swarmkit.models import ModelRequest

_REQUEST = TypeAdapter(ModelRequest)


def json_size(data: Any) -> int:
    """How many bytes ``data`` takes as JSON (pydantic-core's encoder: no Python-level walk)."""
    return len(to_json(data))


def request_to_data(request: ModelRequest) -> dict[str, Any]:
    """A model request as JSON-safe data (messages, tools and settings)."""
    data: dict[str, Any] = _REQUEST.dump_python(request, mode="json")
    return data


def request_from_data(data: Mapping[str, Any]) -> ModelRequest:
    """A model request read back from its data."""
    return _REQUEST.validate_python(data)


def record_to_data(record: JournalRecord) -> dict[str, Any]:
    """A journal record as JSON-safe data."""
    return {
        "session_id": record.session_id,
        "seq": record.seq,
        "kind": record.kind,
        "data": dict(record.data),
    }


def record_from_data(data: Mapping[str, Any]) -> JournalRecord:
    """A journal record read back from its data."""
    return JournalRecord(
        session_id=data["session_id"], seq=data["seq"], kind=data["kind"], data=data["data"]
    )


@dataclass(kw_only=True)
class SessionInput:
    """What starts (or continues) a SwarmWorkflow."""

    swarm: str
    """The swarm's name in the workers' registry."""
    prompt: str
    """The user's prompt."""
    context: dict[str, Any] = field(default_factory=dict)
    """The run's initial context (JSON data)."""
    records: list[dict[str, Any]] = field(default_factory=list)
    """For a continued session without a mirror: the journal records of the steps done before."""
    mirrored: dict[str, int] = field(default_factory=dict)
    """For a continued session with a mirror: the cursor into it, each session's (and each
    delegated sub-run's) id and the seq its records there end before; nothing by value."""
    fingerprint: dict[str, Any] | None = None
    """For a continued session: the configuration fingerprint the session started with."""
    runs: int = 0
    """How many times the session has continued as new."""
    resumed: bool = False
    """A session going on after its workflow was cancelled: its records are read back from
    the journal mirror, where the cancelled run left them."""


@dataclass(kw_only=True)
class ModelCallInput:
    """One model call for the model activity."""

    model: str
    """The model's name in the workers' registry."""
    request: dict[str, Any]
    """The request as data."""
    step: str
    """Which step this is (``agent 'triage', turn 2``), for error messages."""


@dataclass(kw_only=True)
class LedgerCallInput:
    """A spend-ledger reservation or settlement for the ledger activities."""

    swarm: str
    """The swarm (in the workers' registry) whose ledger it is."""
    session_id: str = ""
    """The run's session (a reservation)."""
    facts: dict[str, str] | None = None
    """tenant, agent, model and provider (a reservation)."""
    usage: dict[str, Any] | None = None
    """The estimate (a reservation) or the real usage (a settlement), as data."""
    reservation: dict[str, Any] | None = None
    """The reservation being settled, as data."""


@dataclass(kw_only=True)
class ToolCallInput:
    """One function tool call for the tool activity."""

    swarm: str
    """The swarm's name in the workers' registry."""
    agent: str
    """The agent whose tool it is."""
    tool: str
    """The tool's name."""
    arguments: str
    """The model's raw JSON arguments."""
    context: dict[str, Any]
    """The RunContext as data."""


@dataclass(kw_only=True)
class MirrorInput:
    """Journal records for the mirror activity to write."""

    records: list[dict[str, Any]]
    """Records not mirrored yet, in seq order per session; ones the journal holds are skipped."""


@dataclass(kw_only=True)
class MirrorReadInput:
    """A page of one session's records for a continued run to read back from the mirror."""

    session_id: str
    """The session (or delegated sub-run) to read."""
    start: int
    """The first seq to read."""
    stop: int
    """The seq to stop before: the cursor the previous run carried."""
    max_bytes: int
    """Stop a page once its records' JSON passes this many bytes (it holds at least one)."""
