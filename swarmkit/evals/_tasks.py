"""Domains and tasks: tools over a JSON database, and what each task expects of a swarm."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from swarmkit.exceptions import ConfigurationError
from swarmkit.tools import FunctionTool

Database = dict[str, Any]
"""A domain's state: plain JSON data that the domain's tools read and write (``ctx.deps``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Domain:
    """The world a swarm is evaluated in: tools over a JSON database, and a policy text."""

    name: str
    """A short name, shown in reports."""
    tools: Sequence[FunctionTool] = ()
    """The tools reference actions may call; each reads and writes ``ctx.deps``, the database."""
    database: Mapping[str, Any] = field(default_factory=dict)
    """The database a task starts from when it names none of its own."""
    policy: str = ""
    """The rules the agents work under, for their instructions (and a model-driven user's)."""

    def tool(self, name: str) -> FunctionTool:
        """The domain tool called ``name``; ConfigurationError naming the known ones otherwise."""
        for candidate in self.tools:
            if candidate.name == name:
                return candidate
        known = ", ".join(t.name for t in self.tools) or "none"
        raise ConfigurationError(f"domain {self.name!r} has no tool {name!r}; its tools: {known}")


@dataclass(frozen=True, kw_only=True, slots=True)
class Action:
    """One reference tool call: what a correct swarm does to the database."""

    tool: str
    """The domain tool's name."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    """Its arguments."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    """The database a trial must end with; at most one of the three ways is given."""

    actions: tuple[Action, ...] | None = None
    """Reference actions, replayed on a fresh copy of the initial database."""
    database: Mapping[str, Any] | None = None
    """The whole expected database."""
    subset: Mapping[str, Any] | None = None
    """Only these keys (recursively) must hold these values."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Route:
    """The route a trial must take through the swarm, read from its journal."""

    visits: tuple[str, ...] = ()
    """Agents that must appear on the trail."""
    rule_handoffs: tuple[tuple[str, str], ...] = ()
    """Handoffs (source, target) that a HandoffGraph rule, not a model, must decide."""
    max_hops: int | None = None
    """The most handoffs the whole dialogue may perform."""
    stop_reason: str | None = None
    """How the dialogue's last run must stop (``final_output``, ``interrupted`` ...)."""
    final_agent: str | None = None
    """The agent that must be active at the end."""
    refusals_allowed: bool = True
    """Whether a refused handoff (a limit, a cycle, a human) is acceptable."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Milestone:
    """A sub-goal worth partial credit; reached when every condition given holds."""

    name: str
    """What it is, e.g. ``"invoice looked up"``."""
    tool: str | None = None
    """A tool that must have been called."""
    agent: str | None = None
    """An agent that must have taken a turn."""
    said: str | None = None
    """Text an agent must have said (case-insensitive)."""
    subset: Mapping[str, Any] | None = None
    """Values the end database must hold."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Reply:
    """A scripted user's turn: said when ``when`` appears in the agent's last answer, or in
    order when ``when`` is None."""

    say: str
    """What the user says."""
    when: str | None = None
    """Text (case-insensitive) the agent's last answer must contain for this reply."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Task:
    """One thing a swarm must get done, and how to tell that it did."""

    id: str
    """A stable id, unique in its task set."""
    scenario: str
    """Who the user is and what they want; a model-driven user plays it."""
    turns: tuple[Reply, ...] = ()
    """A scripted user's turns; the first without ``when`` opens the dialogue."""
    database: Mapping[str, Any] | None = None
    """The initial database (None: the domain's)."""
    context: Mapping[str, Any] = field(default_factory=dict)
    """The runs' context (seen by rules, tools and instructions)."""
    outcome: Outcome | None = None
    """The expected database; None skips the database grader."""
    communicate: tuple[str, ...] = ()
    """Statements the agents must have said (case-insensitive substrings)."""
    route: Route = field(default_factory=Route)
    """The expected route."""
    milestones: tuple[Milestone, ...] = ()
    """Sub-goals for partial credit (they never fail a trial)."""
    approvals: Literal["approve", "reject"] = "approve"
    """How the simulated human answers a pause for approval."""
    max_tokens: int | None = None
    """The most tokens a trial may use and still pass."""

    def initial_database(self, domain: Domain) -> Database:
        """A fresh, private copy of the database this task starts from."""
        source = self.database if self.database is not None else domain.database
        return copy.deepcopy(dict(source))


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskSet:
    """A domain and its tasks: what ``swarmkit eval TASKS`` runs."""

    domain: Domain
    """The domain every task runs in."""
    tasks: tuple[Task, ...]
    """The tasks, ids unique."""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for task in self.tasks:
            if task.id in seen:
                raise ConfigurationError(f"two tasks have the id {task.id!r}; ids must be unique")
            seen.add(task.id)

    def get(self, task_id: str) -> Task | None:
        """The task with this id, if the set has it."""
        return next((t for t in self.tasks if t.id == task_id), None)

    def task(self, task_id: str) -> Task:
        """The task with this id; ConfigurationError naming the ids the set has otherwise."""
        found = self.get(task_id)
        if found is None:
            known = ", ".join(t.id for t in self.tasks)
            raise ConfigurationError(f"no task {task_id!r} in this task set; it has: {known}")
        return found
