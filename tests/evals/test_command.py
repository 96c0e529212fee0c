"""`swarmkit eval`: live, replay and regrade from the command, with gates on the exit code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from swarmkit.cli import main

TASKS = str(Path("swarmkit/evals/support_desk/tasks.json").resolve())
SWARM = "swarmkit.evals.support_desk:offline_swarm"


def test_the_command_gates_on_pass_hat_and_replays_a_stored_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missed gate exits 1; replay and regrade of the stored run need no model."""
    journal = str(tmp_path / "evals.sqlite")
    base = ["eval", TASKS, "--journal", journal]
    assert (
        main(
            [*base, "--swarm", SWARM, "--trials", "2", "--run-id", "g1", "--min-pass-hat", "2=0.9"]
        )
        == 0
    )
    assert "pass^2" in capsys.readouterr().out
    assert main([*base, "--swarm", SWARM, "--replay", "g1", "--min-pass-rate", "0.99"]) == 1
    assert "gate missed: pass rate 0.955 < 0.99" in capsys.readouterr().err
    regrade = [*base, "--regrade", "g1", "--domain", "swarmkit.evals.support_desk:DOMAIN"]
    assert main([*regrade, "--report", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "regrade" and data["model_calls"] == 0
    assert main([*base, "--min-pass-hat", "two"]) == 2


def _file(tmp_path: Path, data: object) -> str:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data))
    return str(path)


ORDER_STATUS = next(
    task for task in json.loads(Path(TASKS).read_text())["tasks"] if task["id"] == "order-status"
)
"""One task of the shipped desk, as plain data."""


def test_a_task_file_never_imports_the_module_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`"domain": "planted:DOMAIN"` is refused without running planted.py; the same module
    named by the person, with --domain, is loaded."""
    marker = tmp_path / "ran"
    planted = f"open({str(marker)!r}, 'w').write('ran')\n"
    (tmp_path / "planted.py").write_text(
        planted + "from swarmkit.evals.support_desk import DOMAIN\n"
    )
    monkeypatch.syspath_prepend(tmp_path)
    tasks = _file(tmp_path, {"domain": "planted:DOMAIN", "tasks": [ORDER_STATUS]})
    base = ["eval", tasks, "--swarm", SWARM, "--journal", str(tmp_path / "j.sqlite")]

    assert main(base) == 2
    err = capsys.readouterr().err
    assert "never imports code: name the domain with --domain planted:DOMAIN" in err
    assert not marker.exists()

    assert main([*base, "--domain", "planted:DOMAIN"]) == 0
    assert marker.exists()


def test_this_module_named_by_a_task_file_is_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`"domain": "this:s"` prints no Zen of Python: the error comes before any import."""
    monkeypatch.delitem(sys.modules, "this", raising=False)
    tasks = _file(tmp_path, {"domain": "this:s", "tasks": [ORDER_STATUS]})

    code = main(["eval", tasks, "--swarm", SWARM, "--journal", str(tmp_path / "j.sqlite")])

    out, err = capsys.readouterr()
    assert code == 2 and "this" not in sys.modules and "Beautiful is better" not in out
    assert "'domain' names the module 'this'" in err


@pytest.mark.parametrize("named", ["DOMAIN", "swarmkit.evals.support_desk:DOMAIN", None])
def test_the_domain_is_found_beside_the_swarm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], named: str | None
) -> None:
    """By attribute, by module:attribute of the swarm's module, or unnamed (the one Domain
    there), the file's domain resolves without importing anything."""
    data = {"tasks": [ORDER_STATUS]} | ({} if named is None else {"domain": named})
    tasks = _file(tmp_path, data)

    code = main(["eval", tasks, "--swarm", SWARM, "--journal", str(tmp_path / "j.sqlite")])

    assert code == 0 and "order-status" in capsys.readouterr().out


def test_a_file_without_a_domain_needs_domain_or_swarm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regrading a file's tasks with neither --domain nor --swarm says how to name one."""
    tasks = _file(tmp_path, [ORDER_STATUS])

    code = main(["eval", tasks, "--regrade", "r1", "--journal", str(tmp_path / "j.sqlite")])

    assert code == 2 and "--domain module:attribute" in capsys.readouterr().err


def test_a_task_file_with_an_empty_task_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A task without turns exits 2 naming it, instead of running nothing and passing."""
    tasks = _file(tmp_path, [ORDER_STATUS, {"id": "empty", "scenario": "s"}])

    code = main(["eval", tasks, "--swarm", SWARM, "--journal", str(tmp_path / "j.sqlite")])

    out, err = capsys.readouterr()
    assert code == 2 and "'empty': the scripted user has nothing to say first" in err
    assert "passed" not in out
