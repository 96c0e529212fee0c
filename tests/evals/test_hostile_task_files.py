"""Hostile task files: deep, huge, badly encoded or alias-bombed files are refused with a
clear TaskFileError, from Python and from the command, fast and in bounded memory."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from swarmkit.cli import main
from swarmkit.evals import load_tasks
from swarmkit.evals.support_desk import DOMAIN
from swarmkit.exceptions import TaskFileError

SWARM = "swarmkit.evals.support_desk:offline_swarm"

DEEP = 100_000

HOSTILE: list[tuple[str, str, bytes, str]] = [
    (
        "deep-json",
        "tasks.json",
        b'{"tasks": ' + b"[" * DEEP + b"]" * DEEP + b"}",
        "nests 100001 levels deep, more than the 64 allowed",
    ),
    (
        "deep-yaml-flow",
        "tasks.yaml",
        b"tasks: " + b"[" * DEEP + b"]" * DEEP + b"\n",
        "the YAML nests more than the 64 levels allowed",
    ),
    (
        "deep-yaml-block",
        "tasks.yml",
        b"tasks:\n" + b"- " * DEEP + b"x\n",
        "the YAML nests more than the 64 levels allowed",
    ),
    (
        "not-utf8-json",
        "tasks.json",
        b'{"tasks": [], "note": "caf\xe9"}',
        "not UTF-8 text: byte 0xe9 at offset 26",
    ),
    (
        "not-utf8-yaml",
        "tasks.yaml",
        b"tasks: []\nnote: \xff\xfe\n",
        "not UTF-8 text: byte 0xff at offset 16",
    ),
    (
        "path-as-domain",
        "tasks.json",
        b'{"domain": "../../etc:passwd", "tasks": []}',
        "'domain' names the Domain by its attribute",
    ),
    (
        "huge-int-json",
        "tasks.json",
        b'[{"id": "a", "scenario": "s", "max_tokens": ' + b"1" * 5000 + b"}]",
        "not JSON it can read",
    ),
    (
        "huge-int-yaml",
        "tasks.yaml",
        b"- id: a\n  scenario: s\n  max_tokens: " + b"1" * 5000 + b"\n",
        "not YAML it can read",
    ),
    ("self-alias", "tasks.yaml", b"tasks: &loop [*loop]\n", "refers to the value that holds it"),
]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [(f"{case}/{name}", content, message) for case, name, content, message in HOSTILE],
    ids=[case for case, *_ in HOSTILE],
)
def test_a_hostile_task_file_is_a_task_file_error(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    """load_tasks refuses the file with a TaskFileError naming it and saying why."""
    path = tmp_path / name
    path.parent.mkdir()
    path.write_bytes(content)

    with pytest.raises(TaskFileError) as caught:
        load_tasks(path, domain=DOMAIN)

    assert message in str(caught.value) and str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [(f"{case}/{name}", content, message) for case, name, content, message in HOSTILE],
    ids=[case for case, *_ in HOSTILE],
)
def test_the_command_refuses_a_hostile_task_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, message: str
) -> None:
    """`swarmkit eval` exits 2 with the reason, and no traceback, for each hostile file."""
    path = tmp_path / name
    path.parent.mkdir()
    path.write_bytes(content)

    code = main(["eval", str(path), "--swarm", SWARM, "--journal", str(tmp_path / "j.sqlite")])

    err = capsys.readouterr().err
    assert code == 2 and message in err
    assert err.startswith("swarmkit: error:") and "Traceback" not in err


def test_a_path_given_as_the_tasks_target_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """TASKS that is no file and no module:attribute is named as such, from Python and the
    command."""
    with pytest.raises(TaskFileError, match="no such file, and not module:attribute"):
        load_tasks("../../etc:passwd")

    code = main(["eval", "../../etc:passwd", "--swarm", SWARM, "--journal", str(tmp_path / "j")])

    err = capsys.readouterr().err
    assert code == 2 and "no such file, and not module:attribute" in err


def _billion_laughs() -> str:
    """Nine anchors of nine aliases each: 9**9 (387 million) strings once expanded."""
    lines = ["- id: bomb", "  scenario: s", "  turns: [hi]", "  context:"]
    lines.append('    l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]')
    for level in range(1, 9):
        aliases = ",".join([f"*l{level - 1}"] * 9)
        lines.append(f"    l{level}: &l{level} [{aliases}]")
    return "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """A billion-laughs context is refused while it is read, using a few megabytes at most."""
    path = tmp_path / "bomb.yaml"
    path.write_text(_billion_laughs())

    tracemalloc.start()
    try:
        with pytest.raises(TaskFileError, match="more than 1,000,000 values once its aliases"):
            load_tasks(path, domain=DOMAIN)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert peak < 5_000_000


def test_a_few_yaml_aliases_still_share_a_database(tmp_path: Path) -> None:
    """Anchors and aliases within the bound load as the copies they stand for."""
    path = tmp_path / "tasks.yaml"
    path.write_text(
        "- id: one\n  scenario: s\n  turns: [hi]\n  database: &db {orders: {O-1: {paid: 5}}}\n"
        "- id: two\n  scenario: s\n  turns: [hi]\n  database: *db\n"
    )

    loaded = load_tasks(path, domain=DOMAIN)

    assert loaded.tasks[0].database == loaded.tasks[1].database == {"orders": {"O-1": {"paid": 5}}}


def test_a_task_nested_too_deep_from_python_is_a_task_file_error() -> None:
    """task_from_data bounds nesting before validation recurses into it."""
    from swarmkit.evals import task_from_data  # noqa: PLC0415

    deep: object = "x"
    for _ in range(DEEP):
        deep = [deep]

    with pytest.raises(TaskFileError, match="nests more than the 64 levels"):
        task_from_data({"id": "deep", "scenario": "s", "context": {"d": deep}})


def test_a_task_file_over_the_size_bound_is_refused(tmp_path: Path) -> None:
    """A file larger than MAX_TASK_FILE_BYTES is refused before it is parsed."""
    from swarmkit.evals._task_files import MAX_TASK_FILE_BYTES  # noqa: PLC0415

    path = tmp_path / "tasks.json"
    path.write_bytes(b"[" + b" " * MAX_TASK_FILE_BYTES + b"]")

    with pytest.raises(TaskFileError, match="larger than the 8,000,000 bytes allowed"):
        load_tasks(path, domain=DOMAIN)
