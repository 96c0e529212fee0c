"""Task files (JSON, YAML) and Python targets become a TaskSet; mistakes name file, task, field."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from swarmkit.bounds import value_problem
from swarmkit.evals._file_models import TaskModel
from swarmkit.evals._task_files import MAX_TASK_FILE_DEPTH, read_task_file
from swarmkit.evals._tasks import Action, Domain, Milestone, Outcome, Reply, Route, Task, TaskSet
from swarmkit.exceptions import TaskFileError


def load_tasks(source: str | os.PathLike[str], *, domain: Domain | None = None) -> TaskSet:
    """The TaskSet in a JSON or YAML file, or that a ``module:attribute`` names.

    A file holds ``{"domain": "DOMAIN", "tasks": [...]}`` or a bare list of tasks. A file is
    data: nothing it says is imported, so its tasks get the Domain you pass as ``domain=``
    (`swarmkit eval` takes ``--domain``, or finds the one the file names beside ``--swarm``).
    ``domain=`` also replaces the domain of a TaskSet a ``module:attribute`` names. A mistake
    raises TaskFileError naming the file, task and field.
    """
    text = os.fspath(source)
    if is_target(text):
        return _from_target(text, domain)
    read = read_tasks(Path(text))
    if domain is None:
        raise TaskFileError(
            "a task file does not import its domain: pass domain= (the Domain object), or run "
            "it with `swarmkit eval`, which takes --domain or finds it beside --swarm",
            source=text,
            task=None,
            field="domain",
        )
    return read.with_domain(domain)


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskFile:
    """A task file's tasks, and the domain it names as text (never imported)."""

    source: str
    """The file's path, for errors."""
    domain: str | None
    """The file's ``domain``: ``"ATTRIBUTE"`` or ``"module:ATTRIBUTE"``, resolved by
    ``find_domain`` among modules already loaded; None when the file names none."""
    tasks: tuple[Task, ...]
    """The tasks, ids unique."""

    def with_domain(self, domain: Domain) -> TaskSet:
        """The file's tasks in ``domain``."""
        return TaskSet(domain=domain, tasks=self.tasks)


def read_tasks(path: Path) -> TaskFile:
    """A task file's tasks and the domain it names, bounded and validated."""
    source = str(path)
    data = read_task_file(path)
    if isinstance(data, list):
        data = {"tasks": data}
    if not isinstance(data, Mapping):
        raise TaskFileError(
            "expected an object with 'tasks', or a list", source=source, task=None, field=None
        )
    unknown = sorted(str(key) for key in set(data) - {"domain", "tasks"})
    if unknown:
        raise TaskFileError(
            f"unknown keys {unknown}; a task file holds 'domain' and 'tasks'",
            source=source,
            task=None,
            field=unknown[0],
        )
    named = data.get("domain")
    if named is not None and not (isinstance(named, str) and _is_domain_name(named)):
        raise TaskFileError(
            f'\'domain\' names the Domain by its attribute, as "DOMAIN" or "module:DOMAIN" '
            f"(dotted Python names), got {repr(named)[:80]}",
            source=source,
            task=None,
            field="domain",
        )
    return TaskFile(source=source, domain=named, tasks=_tasks(data.get("tasks"), source))


def _tasks(raw: object, source: str) -> tuple[Task, ...]:
    if not isinstance(raw, list):
        raise TaskFileError(
            "'tasks' must be a list of tasks", source=source, task=None, field="tasks"
        )
    tasks = tuple(task_from_data(item, source=source, position=i) for i, item in enumerate(raw))
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise TaskFileError(
                f"two tasks have the id {task.id!r}; ids must be unique",
                source=source,
                task=task.id,
                field="id",
            )
        seen.add(task.id)
    return tasks


def task_from_data(data: object, *, source: str = "<data>", position: int = 0) -> Task:
    """One task from plain data (a JSON object), validated."""
    name = (
        str(data.get("id")) if isinstance(data, Mapping) and data.get("id") else f"#{position + 1}"
    )
    problem = value_problem(data, max_depth=MAX_TASK_FILE_DEPTH)
    if problem is not None:
        raise TaskFileError(problem, source=source, task=name, field=None)
    try:
        raw = TaskModel.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or None
        raise TaskFileError(error["msg"], source=source, task=name, field=where) from None
    return _task(raw)


def _task(raw: TaskModel) -> Task:
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


def is_target(text: str) -> bool:
    """Whether ``text`` is meant as ``module:attribute`` rather than a file's path."""
    return ":" in text and not Path(text).exists()


def _is_domain_name(text: str) -> bool:
    module_name, _, attribute = text.rpartition(":")
    modules_ok = not module_name or all(p.isidentifier() for p in module_name.split("."))
    return attribute.isidentifier() and modules_ok


def find_domain(named: str | None, home: str, *, source: str) -> Domain:
    """The Domain a task file's ``domain`` names, looked up among the modules already loaded
    in the package of ``home`` (the swarm's module): ``home``, the packages above it, and the
    loaded modules beside it. Nothing is imported; with no name, the one Domain found there."""
    scope = _scope(home)
    if named is None:
        return _only_domain(scope, home, source)
    module_name, _, attribute = named.rpartition(":")
    if module_name and module_name not in scope:
        raise TaskFileError(
            f"'domain' names the module {module_name!r}, which is not {home!r} (the swarm's "
            f"module) nor loaded in its package; a task file never imports code: name the "
            f"domain with --domain {named}",
            source=source,
            task=None,
            field="domain",
        )
    for module in [scope[module_name]] if module_name else scope.values():
        value = vars(module).get(attribute)
        if isinstance(value, Domain):
            return value
    where = module_name or f"{home} and its package"
    raise TaskFileError(
        f"no Domain {attribute!r} in {where}", source=source, task=None, field="domain"
    )


def _scope(home: str) -> dict[str, ModuleType]:
    """``home``, the packages above it, then the loaded modules of its package, by name."""
    module = sys.modules.get(home)
    package = home if hasattr(module, "__path__") else home.rpartition(".")[0]
    parts = home.split(".")
    names = [".".join(parts[:n]) for n in range(len(parts), 0, -1)]
    names += sorted(n for n in list(sys.modules) if package and n.startswith(package + "."))
    found = {name: sys.modules.get(name) for name in names}
    return {name: m for name, m in found.items() if isinstance(m, ModuleType)}


def _only_domain(scope: Mapping[str, ModuleType], home: str, source: str) -> Domain:
    found: dict[int, tuple[str, Domain]] = {}
    for name, module in scope.items():
        for attribute, value in list(vars(module).items()):
            if isinstance(value, Domain):
                found.setdefault(id(value), (f"{name}:{attribute}", value))
    if len(found) == 1:
        return next(iter(found.values()))[1]
    named = ", ".join(sorted(label for label, _ in found.values()))
    problem = f"several Domains ({named})" if found else "no Domain"
    raise TaskFileError(
        f"the file names no domain, and {home!r} (the swarm's module) and its package hold "
        f'{problem}: add "domain": "ATTRIBUTE" to the file, or pass --domain',
        source=source,
        task=None,
        field="domain",
    )


def _from_target(target: str, domain: Domain | None) -> TaskSet:
    value = load_named(target)
    if isinstance(value, TaskSet):
        return value if domain is None else replace(value, domain=domain)
    if (
        isinstance(value, Sequence)
        and domain is not None
        and all(isinstance(t, Task) for t in value)
    ):
        return TaskSet(domain=domain, tasks=tuple(value))
    raise TaskFileError(
        f"expected a TaskSet, got {type(value).__name__}", source=target, task=None, field=None
    )


def load_named(target: str) -> Any:
    """What ``module:attribute`` names, importing the module: for targets a person gives (a
    command's argument, a caller's string), never for a name read from a task file."""
    module_name, _, attribute = target.rpartition(":")
    if not module_name or not _is_domain_name(target):
        raise TaskFileError(
            "no such file, and not module:attribute (dotted Python names, e.g. myapp.evals:TASKS)",
            source=target,
            task=None,
            field=None,
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a missing module, or one that raised while it was imported
        raise TaskFileError(
            f"cannot import {module_name}: {type(exc).__name__}: {exc}",
            source=target,
            task=None,
            field=None,
        ) from None
    if attribute not in vars(module):
        raise TaskFileError(
            f"module {module_name} has no attribute {attribute!r}",
            source=target,
            task=None,
            field=None,
        )
    return vars(module)[attribute]
