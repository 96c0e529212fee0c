"""The task file's format as Pydantic models: they validate each file and generate its JSON
Schema (``task_file_schema``), so the format documented is the format read."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_STRICT = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

SCHEMA_ID = "https://swarmkit.invalid/reference/evals/task-file.schema.json"
"""The schema's ``$id``: a name, not an address fetched."""


class ActionModel(BaseModel):
    """One reference tool call: what a correct swarm does to the database."""

    model_config = _STRICT
    tool: str
    """The domain tool's name."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Its arguments."""


class OutcomeModel(BaseModel):
    """The database a trial must end with: reference actions, a whole database, or a subset."""

    model_config = _STRICT
    actions: list[ActionModel] | None = None
    """Reference actions, run on a fresh copy of the initial database; the trial's end database
    must equal the result."""
    database: dict[str, Any] | None = None
    """The whole expected database."""
    subset: dict[str, Any] | None = None
    """Only these keys (recursively) must hold these values."""


class RouteModel(BaseModel):
    """The route a trial must take through the swarm, read from its journal."""

    model_config = _STRICT
    visits: list[str] = Field(default_factory=list)
    """Agents that must appear on the trail."""
    rule_handoffs: list[tuple[str, str]] = Field(default_factory=list)
    """Handoffs [source, target] that a graph rule, not a model, must decide."""
    max_hops: int | None = Field(default=None, ge=0)
    """The most handoffs the whole dialogue may perform."""
    stop_reason: str | None = None
    """How the dialogue's last run must stop: final_output, interrupted, max_handoffs ..."""
    final_agent: str | None = None
    """The agent that must be active at the end."""
    refusals_allowed: bool = True
    """Whether a refused handoff (a limit, a cycle, a person) is acceptable."""


class MilestoneModel(BaseModel):
    """A sub-goal worth partial credit; reached when every condition given holds."""

    model_config = _STRICT
    name: str
    """What it is, e.g. "invoice looked up"."""
    tool: str | None = None
    """A tool that must have been called."""
    agent: str | None = None
    """An agent that must have taken a turn."""
    said: str | None = None
    """Text an agent must have said (any case)."""
    subset: dict[str, Any] | None = None
    """Values the end database must hold."""


class ReplyModel(BaseModel):
    """A scripted user's turn, said when `when` appears in the agent's last answer."""

    model_config = _STRICT
    say: str
    """What the user says."""
    when: str | None = None
    """Text (any case) the agent's last answer must contain for this reply; without it, the
    replies are said in order."""


class TaskModel(BaseModel):
    """One thing a swarm must get done, and how to tell that it did."""

    model_config = _STRICT
    id: str = Field(min_length=1)
    """A stable id, unique in the file; trial sessions are named after it."""
    scenario: str
    """Who the user is and what they want; a model-driven user plays it."""
    turns: list[ReplyModel | str] = Field(default_factory=list)
    """The scripted user's turns (a string is a reply without `when`); the first without
    `when` opens the dialogue, so a task needs one to be run by the scripted user."""
    database: dict[str, Any] | None = None
    """The initial database (absent: the domain's)."""
    context: dict[str, Any] = Field(default_factory=dict)
    """The context of each of the trial's runs: seen by rules, tools and instructions."""
    outcome: OutcomeModel | None = None
    """The expected database; absent skips the database grader."""
    communicate: list[str] = Field(default_factory=list)
    """Statements the agents must have said (any case, as substrings)."""
    route: RouteModel = Field(default_factory=RouteModel)
    """The expected route."""
    milestones: list[MilestoneModel] = Field(default_factory=list)
    """Sub-goals for partial credit (they never fail a trial)."""
    approvals: Literal["approve", "reject"] = "approve"
    """How the simulated person answers every pause for approval during a trial: approve lets
    the tool call or handoff go ahead, reject refuses it and the run goes on without it. A
    trial never stops at a pause."""
    max_tokens: int | None = Field(default=None, ge=0)
    """The most tokens a trial may use and still pass."""


class TaskFileModel(BaseModel):
    """A swarmkit evaluation task file (JSON or YAML); a bare list of tasks is read as
    {"tasks": [...]}."""

    model_config = _STRICT
    domain: str | None = Field(default=None, pattern=r"^([A-Za-z_][\w.]*:)?[A-Za-z_]\w*$")
    """The Domain, as "ATTRIBUTE" or "module:ATTRIBUTE": only a name, never imported; `swarmkit
    eval` looks it up among the modules --swarm loaded, or takes --domain instead."""
    tasks: list[TaskModel]
    """The tasks, ids unique."""


def task_file_schema() -> dict[str, Any]:
    """The JSON Schema of a task file, generated from the models that read one."""
    schema = _unwrapped(TaskFileModel.model_json_schema())
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def _unwrapped(value: Any) -> Any:
    """The schema with each description on one line (docstrings wrap at the column)."""
    if isinstance(value, dict):
        return {
            key: " ".join(item.split()) if key == "description" else _unwrapped(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_unwrapped(item) for item in value]
    return value
