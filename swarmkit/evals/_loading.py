"""Task files (JSON, YAML) and Python targets become a TaskSet; mistakes name file, task, field."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from swarmkit.evals._tasks import Action, Domain, Milestone, Outcome, Reply, Route, Task, TaskSet
from swarmkit.exceptions import TaskFileError

_STRICT = ConfigDict(extra="forbid", frozen=True)


class _Action(BaseModel):
    model_config = _STRICT
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class _Outcome(BaseModel):
    model_config = _STRICT
    actions: list[_Action] | None = None
    database: dict[str, Any] | None = None
    subset: dict[str, Any] | None = None


class _Route(BaseModel):
    model_config = _STRICT
    visits: list[str] = Field(default_factory=list)
    rule_handoffs: list[tuple[str, str]] = Field(default_factory=list)
    max_hops: int | None = Field(default=None, ge=0)
    stop_reason: str | None = None
    final_agent: str | None = None
    refusals_allowed: bool = True


class _Milestone(BaseModel):
    model_config = _STRICT
    name: str
    tool: str | None = None
    agent: str | None = None
    said: str | None = None
    subset: dict[str, Any] | None = None


class _Reply(BaseModel):
    model_config = _STRICT
    say: str
    when: str | None = None


class _Task(BaseModel):
    model_config = _STRICT
    id: str = Field(min_length=1)
    scenario: str
    turns: list[_Reply | str] = Field(default_factory=list)
    database: dict[str, Any] | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    outcome: _Outcome | None = None
    communicate: list[str] = Field(default_factory=list)
    route: _Route = Field(default_factory=_Route)
    milestones: list[_Milestone] = Field(default_factory=list)
    approvals: Literal["approve", "reject"] = "approve"
    max_tokens: int | None = Field(default=None, ge=0)


def load_tasks(source: str | os.PathLike[str], *, domain: Domain | None = None) -> TaskSet:
    """The TaskSet in a JSON or YAML file, or that a ``module:attribute`` names.

    A file holds ``{"domain": "module:attribute", "tasks": [...]}`` or a bare list of tasks
    (then pass ``domain=``). A mistake raises TaskFileError naming the file, task and field.
    """
    text = os.fspath(source)
    if ":" in text and not Path(text).exists():
        return _from_target(text, domain)
    path = Path(text)
    data = _read(path)
    if isinstance(data, list):
        data = {"tasks": data}
    if not isinstance(data, Mapping):
        raise TaskFileError(
            "expected an object with 'tasks', or a list", source=text, task=None, field=None
        )
    chosen = domain or _domain_named(data.get("domain"), text)
    unknown = sorted(set(data) - {"domain", "tasks"})
    if unknown:
        raise TaskFileError(
            f"unknown keys {unknown}; a task file holds 'domain' and 'tasks'",
            source=text,
            task=None,
            field=unknown[0],
        )
    raw = data.get("tasks")
    if not isinstance(raw, list):
        raise TaskFileError(
            "'tasks' must be a list of tasks", source=text, task=None, field="tasks"
        )
    tasks = tuple(task_from_data(item, source=text, position=i) for i, item in enumerate(raw))
    try:
        return TaskSet(domain=chosen, tasks=tasks)
    except ValueError as exc:
        raise TaskFileError(str(exc), source=text, task=None, field="id") from None


def task_from_data(data: object, *, source: str = "<data>", position: int = 0) -> Task:
    """One task from plain data (a JSON object), validated."""
    name = (
        str(data.get("id")) if isinstance(data, Mapping) and data.get("id") else f"#{position + 1}"
    )
    try:
        raw = _Task.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or None
        raise TaskFileError(error["msg"], source=source, task=name, field=where) from None
    return _task(raw)


def _task(raw: _Task) -> Task:
    outcome = None
    if raw.outcome is not None:
        o = raw.outcome
        actions = (
            None
            if o.actions is None
            else tuple(Action(tool=a.tool, arguments=a.arguments) for a in o.actions)
        )
        outcome = Outcome(actions=actions, database=o.database, subset=o.subset)
    r = raw.route
    return Task(
        id=raw.id,
        scenario=raw.scenario,
        turns=tuple(
            Reply(say=t) if isinstance(t, str) else Reply(say=t.say, when=t.when) for t in raw.turns
        ),
        database=raw.database,
        context=raw.context,
        outcome=outcome,
        communicate=tuple(raw.communicate),
        route=Route(
            visits=tuple(r.visits),
            rule_handoffs=tuple(r.rule_handoffs),
            max_hops=r.max_hops,
            stop_reason=r.stop_reason,
            final_agent=r.final_agent,
            refusals_allowed=r.refusals_allowed,
        ),
        milestones=tuple(Milestone(**m.model_dump()) for m in raw.milestones),
        approvals=raw.approvals,
        max_tokens=raw.max_tokens,
    )


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFileError(
            f"cannot read it: {exc.strerror or exc}", source=str(path), task=None, field=None
        ) from None
    if path.suffix.lower() in (".yaml", ".yml"):
        return _yaml(text, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskFileError(
            f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            source=str(path),
            task=None,
            field=None,
        ) from None


def _yaml(text: str, path: Path) -> Any:
    try:
        import yaml  # type: ignore[import-untyped]  # noqa: PLC0415 - only YAML files need it
    except ImportError:
        raise TaskFileError(
            "YAML task files need PyYAML: pip install 'swarmkit-agents[evals]'",
            source=str(path),
            task=None,
            field=None,
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TaskFileError(f"not YAML: {exc}", source=str(path), task=None, field=None) from None


def _domain_named(target: object, source: str) -> Domain:
    if not isinstance(target, str):
        raise TaskFileError(
            "name the domain as 'domain': 'module:attribute' (or pass domain=)",
            source=source,
            task=None,
            field="domain",
        )
    value = _attribute(target, source)
    if not isinstance(value, Domain):
        raise TaskFileError(
            f"{target} is a {type(value).__name__}, not a Domain",
            source=source,
            task=None,
            field="domain",
        )
    return value


def _from_target(target: str, domain: Domain | None) -> TaskSet:
    value = _attribute(target, target)
    if isinstance(value, TaskSet):
        return value
    if (
        isinstance(value, Sequence)
        and domain is not None
        and all(isinstance(t, Task) for t in value)
    ):
        return TaskSet(domain=domain, tasks=tuple(value))
    raise TaskFileError(
        f"expected a TaskSet, got {type(value).__name__}", source=target, task=None, field=None
    )


def _attribute(target: str, source: str) -> Any:
    module_name, _, attribute = target.rpartition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attribute)
    except (ImportError, AttributeError, ValueError) as exc:
        raise TaskFileError(
            f"cannot load {target}: {exc}", source=source, task=None, field=None
        ) from None
