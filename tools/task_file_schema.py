"""Write the evaluation task file's JSON Schema where the docs site publishes it.

Run it after changing swarmkit/evals/_file_models.py: ``python tools/task_file_schema.py``
(tests/evals/test_schema.py fails while the committed file is out of date).
"""

from __future__ import annotations

import json
from pathlib import Path

from swarmkit.evals import task_file_schema

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "docs/reference/evals/task-file.schema.json"


def schema_text() -> str:
    """The schema as the committed file holds it."""
    return json.dumps(task_file_schema(), indent=2) + "\n"


if __name__ == "__main__":
    SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}")
