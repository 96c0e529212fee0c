"""Task files: JSON and YAML load; a bad file names the file, the task and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmkit.evals import load_tasks
from swarmkit.evals.support_desk import DOMAIN
from swarmkit.exceptions import TaskFileError


def test_the_shipped_task_file_names_its_domain() -> None:
    """The desk's tasks load from JSON with the domain named in the file."""
    loaded = load_tasks(Path("swarmkit/evals/support_desk/tasks.json"))
    assert loaded.domain is DOMAIN and len(loaded.tasks) >= 20


def test_yaml_task_files_load(tmp_path: Path) -> None:
    """A YAML list of tasks loads with a domain given in Python."""
    path = tmp_path / "tasks.yaml"
    path.write_text("- id: hi\n  scenario: says hello\n  turns: [Hello]\n  route: {max_hops: 0}\n")
    loaded = load_tasks(path, domain=DOMAIN)
    assert loaded.tasks[0].route.max_hops == 0 and loaded.tasks[0].turns[0].say == "Hello"


def test_a_bad_field_names_file_task_and_field(tmp_path: Path) -> None:
    """A wrong type deep in a task is reported with its dotted path."""
    path = tmp_path / "tasks.json"
    tasks = [
        {"id": "ok", "scenario": "s"},
        {"id": "bad-one", "scenario": "s", "route": {"max_hops": "many"}},
    ]
    path.write_text(json.dumps({"tasks": tasks}))
    with pytest.raises(TaskFileError) as caught:
        load_tasks(path, domain=DOMAIN)
    error = caught.value
    assert (error.task, error.field) == ("bad-one", "route.max_hops")
    assert str(path) in str(error)


def test_an_unknown_key_and_duplicate_ids_are_refused(tmp_path: Path) -> None:
    """Typos are not ignored; two tasks may not share an id."""
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"id": "a", "scenario": "s", "expected": {}}]))
    with pytest.raises(TaskFileError, match="expected"):
        load_tasks(path, domain=DOMAIN)
    path.write_text(json.dumps([{"id": "a", "scenario": "s"}, {"id": "a", "scenario": "t"}]))
    with pytest.raises(TaskFileError, match="two tasks have the id 'a'"):
        load_tasks(path, domain=DOMAIN)
