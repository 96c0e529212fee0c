"""Task files: JSON and YAML load; a bad file names the file, the task and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmkit.evals import load_tasks
from swarmkit.evals.support_desk import DOMAIN
from swarmkit.exceptions import TaskFileError


def test_the_shipped_task_file_loads_with_its_domain_given() -> None:
    """The desk's tasks load from JSON with the Domain passed in Python."""
    loaded = load_tasks(Path("swarmkit/evals/support_desk/tasks.json"), domain=DOMAIN)
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


def test_load_tasks_never_imports_the_domain_a_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file naming a planted module is refused, and the module never runs."""
    marker = tmp_path / "ran"
    (tmp_path / "planted.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    monkeypatch.syspath_prepend(tmp_path)
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"domain": "planted:DOMAIN", "tasks": [ORDER_STATUS]}))

    with pytest.raises(TaskFileError, match="does not import its domain: pass domain="):
        load_tasks(path)

    assert not marker.exists()
    assert load_tasks(path, domain=DOMAIN).domain is DOMAIN and not marker.exists()


ORDER_STATUS = next(
    task
    for task in json.loads(Path("swarmkit/evals/support_desk/tasks.json").read_text())["tasks"]
    if task["id"] == "order-status"
)
"""One task of the shipped desk, as plain data."""
