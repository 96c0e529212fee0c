"""`swarmkit eval`: live, replay and regrade from the command, with gates on the exit code."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

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


def _desk_app(folder: Path, module: str) -> str:
    """A newcomer's folder: ``module.py`` holds the desk swarm (with its own journal) and its
    Domain; ``tasks.json`` names the domain ``module:DOMAIN``. Returns the tasks' path."""
    (folder / f"{module}.py").write_text(
        "from swarmkit.evals.support_desk import DOMAIN, build_swarm\n"
        "from swarmkit.journal import SQLiteJournal\n"
        "swarm = build_swarm(journal=SQLiteJournal('own.sqlite'))\n"
    )
    data = {"domain": f"{module}:DOMAIN", "tasks": [ORDER_STATUS]}
    (folder / "tasks.json").write_text(json.dumps(data))
    return "tasks.json"


@pytest.fixture
def newcomer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[tuple[str, str]]:
    """(tasks file, swarm target) in a folder the command runs from, nothing on sys.path."""
    module = f"desk_{request.node.name.split('[')[0][-20:]}"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the command adds the folder it runs in
    monkeypatch.delenv("SWARMKIT_JOURNAL", raising=False)
    yield _desk_app(tmp_path, module), f"{module}:swarm"
    sys.modules.pop(module, None)


def test_eval_finds_the_domain_and_journal_the_way_run_does(
    newcomer: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From the swarm's folder with no PYTHONPATH, the file's `module:DOMAIN` resolves beside
    --swarm, and the trials go to the swarm's own journal, which --list then reads."""
    tasks, swarm = newcomer
    assert main(["eval", tasks, "--swarm", swarm, "--trials", "2", "--run-id", "first"]) == 0
    assert "order-status" in capsys.readouterr().out
    assert (tmp_path / "own.sqlite").is_file() and not (tmp_path / ".swarmkit").exists()

    assert main(["eval", "--list", "--swarm", swarm]) == 0
    out = capsys.readouterr().out
    head, row = out.splitlines()[:2]
    assert head.split() == ["RUN", "STARTED", "DOMAIN", "TASKS", "TRIALS", "PASS^K"]
    cells = row.split()
    assert cells[0] == "first" and cells[3:6] == ["support_desk", "1", "2/2"]
    assert "^1 1.000 ^2 1.000" in row and "(1 eval run in own.sqlite)" in out


def test_an_unknown_run_is_refused_in_one_line_naming_the_journal(
    newcomer: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--regrade of a run the journal lacks says so and how to list its runs; a journal that
    is not there is neither created nor read."""
    tasks, swarm = newcomer
    assert main(["eval", tasks, "--swarm", swarm, "--run-id", "kept"]) == 0
    capsys.readouterr()

    assert main(["eval", tasks, "--swarm", swarm, "--regrade", "typo"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "swarmkit: error: no eval run 'typo' in own.sqlite; list its runs with: "
        "swarmkit eval --list --journal own.sqlite"
    )
    other = str(tmp_path / "other.sqlite")
    assert main(["eval", tasks, "--swarm", swarm, "--regrade", "kept", "--journal", other]) == 2
    assert "no journal at" in capsys.readouterr().err and not Path(other).exists()
    assert main(["eval", "--list", "--journal", str(tmp_path / "own.sqlite")]) == 0
    assert "kept" in capsys.readouterr().out


def test_an_eval_runs_manifest_is_listed_as_an_eval_run_never_running(
    newcomer: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`sessions` shows the manifest's state as "eval run" and `show` lists its trials and
    grades, with no "still running" note."""
    tasks, swarm = newcomer
    assert main(["eval", tasks, "--swarm", swarm, "--run-id", "m1"]) == 0
    capsys.readouterr()

    assert main(["sessions", "--journal", "own.sqlite"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert rows["evalrun__m1"].split()[1:3] == ["eval", "run"]
    assert main(["show", "evalrun__m1", "--journal", "own.sqlite"]) == 0
    out = capsys.readouterr().out
    assert "trial    order-status #1: sessions eval-m1-order-status-1" in out
    assert "graded   pass rate 100.0%; pass^1 1.000" in out
    assert "no run_finished" not in out and "open " not in out


def test_the_table_and_junit_say_why_a_trial_failed_and_where_to_look(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A failing task's line in the table gives the grader's reason and its sessions; every
    JUnit test case carries its session ids."""
    failing = {**ORDER_STATUS, "id": "wrong", "communicate": ["a sentence never said"]}
    tasks = _file(tmp_path, {"tasks": [ORDER_STATUS, failing]})
    base = ["eval", tasks, "--swarm", SWARM, "--journal", str(tmp_path / "j.sqlite")]

    assert main([*base, "--run-id", "t1"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("FAILED"))
    assert line.startswith("FAILED wrong trial 1: communicated: not said: 'a sentence never")
    assert line.endswith("[sessions: eval-t1-wrong-1]")

    assert main([*base, "--run-id", "t2", "--report", "junit"]) == 0
    junit = ElementTree.fromstring(capsys.readouterr().out)
    for case in junit.iter("testcase"):
        sessions = [p.get("value") for p in case.iter("property") if p.get("name") == "session"]
        assert sessions == [f"eval-t2-{case.get('classname')}-1"]
        assert case.findtext("system-out") == f"sessions: {sessions[0]}"
