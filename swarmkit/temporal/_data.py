"""What crosses between a workflow and its activities, as JSON data and back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from swarmkit.journal import JournalRecord
from swarmkit.models import ModelRequest

_REQUEST = TypeAdapter(ModelRequest)


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
    """For a continued session: the journal records of the steps done before."""
    fingerprint: dict[str, Any] | None = None
    """For a continued session: the configuration fingerprint the session started with."""
    runs: int = 0
    """How many times the session has continued as new."""


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
    """The session's records so far; the ones the journal already holds are skipped."""
