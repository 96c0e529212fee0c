"""The task file's JSON Schema: generated from the models that read files, committed where the
docs site publishes it, and in agreement with the loader on what a valid file is."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest

from swarmkit.evals import load_tasks, task_file_schema
from swarmkit.evals.support_desk import DOMAIN
from swarmkit.exceptions import TaskFileError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "docs" / "reference" / "evals" / "task-file.schema.json"
DESK_TASKS = ROOT / "swarmkit" / "evals" / "support_desk" / "tasks.json"


def test_the_committed_schema_is_the_generated_one() -> None:
    """docs/reference/evals/task-file.schema.json is what the models generate today."""
    committed = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert committed == task_file_schema(), "run: python tools/task_file_schema.py"


def test_the_shipped_task_file_is_valid_by_the_schema() -> None:
    """The support desk's tasks pass the schema as they pass the loader."""
    jsonschema.Draft202012Validator(task_file_schema()).validate(
        json.loads(DESK_TASKS.read_text(encoding="utf-8"))
    )
    assert load_tasks(DESK_TASKS, domain=DOMAIN).tasks


@pytest.mark.parametrize(
    ("task", "field"),
    [
        ({"route": {"max_hops": -1}}, "route.max_hops"),
        ({"approvals": "maybe"}, "approvals"),
        ({"turns": [{"sey": "hi"}]}, "turns.0"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_file_the_schema_refuses_the_loader_refuses_naming_the_field(
    tmp_path: Path, task: dict[str, object], field: str
) -> None:
    """The schema and the loader agree, and the loader's error names the field."""
    data = {"tasks": [{"id": "t1", "scenario": "s", "turns": ["hi"], **task}]}
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data))

    assert not jsonschema.Draft202012Validator(task_file_schema()).is_valid(data)
    with pytest.raises(TaskFileError) as caught:
        load_tasks(path, domain=DOMAIN)
    assert caught.value.task == "t1" and caught.value.field is not None
    assert caught.value.field.startswith(field)
