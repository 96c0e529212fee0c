"""The installed `swarmkit` command, run as a person runs it: in a subprocess, from a shell."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import swarmkit

ROOT = Path(__file__).resolve().parents[1]
SWARMKIT = Path(sys.executable).parent / "swarmkit"
REFUND = "Hi, I was charged twice for invoice INV-1042. Please refund the duplicate charge."
FRESH_PATH = "/usr/bin:/bin"
"""PATH in a fresh shell: the venv is not active."""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SWARMKIT_"))}
    env.pop("PYTHONPATH", None)
    return {**env, "PATH": FRESH_PATH, **extra}


def _swarmkit(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SWARMKIT), *args],
        cwd=cwd,
        env=env or _env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _first_error(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr.splitlines()[0] if done.stderr else ""


# -- version and targets ---------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_prints_the_installed_version(flag: str) -> None:
    """`swarmkit --version` and `-V` print the version and exit 0."""
    done = _swarmkit(flag)

    assert done.returncode == 0
    assert done.stdout.strip() == f"swarmkit {swarmkit.__version__}"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("../x.py:swarm", "'../x.py:swarm' is a file path; name a module instead"),
        ("app/agents.py:swarm", "is a file path"),
        (".foo:x", "'.foo:x' names a relative module; pass the full dotted name"),
        ("tests.cli_app:swarm_for", "is a function, not a Swarm; the command calls only"),
        ("swarmkit.demo:build_support_swarm", "marked @swarmkit.swarm_factory"),
        ("tests.cli_app:not_a_swarm", "tests.cli_app:not_a_swarm is dict, not a Swarm"),
        ("tests.cli_app:wrong_factory", "factory tests.cli_app:wrong_factory returned dict"),
        ("tests.cli_broken_app:swarm", "RuntimeError: DATABASE_URL is not set"),
    ],
)
def test_a_bad_target_is_one_line_with_exit_code_2(target: str, message: str) -> None:
    """Paths, relative modules and unmarked functions are refused before anything is called."""
    done = _swarmkit("run", target, "hi")

    assert done.returncode == 2
    assert _first_error(done).startswith("swarmkit: error: ")
    assert message in _first_error(done)
    assert len(done.stderr.splitlines()) == 1


def test_a_marked_swarm_factory_is_called_and_help_says_so(tmp_path: Path) -> None:
    """@swarm_factory functions are accepted; --help names the decorator."""
    journal = str(tmp_path / "j.sqlite")
    done = _swarmkit("run", "tests.cli_app:make_swarm", "hi", "--journal", journal)
    assert done.returncode == 0, done.stderr

    assert "@swarmkit.swarm_factory" in " ".join(_swarmkit("run", "--help").stdout.split())


def test_a_base_url_that_is_not_a_url_is_rejected_at_once() -> None:
    """--base-url is checked before the target is even imported."""
    done = _swarmkit("run", "no_such_module:x", "hi", "--model", "m", "--base-url", "localhost")

    assert done.returncode == 2
    assert _first_error(done).startswith("swarmkit: error: --base-url 'localhost' is not an")


# -- journal paths ---------------------------------------------------------------------------


def test_journal_paths_that_cannot_work_are_one_line_with_exit_code_2(tmp_path: Path) -> None:
    """Under a file, in a missing tree, or where nothing can be written: exit 2, one line."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("hello\n")
    cases = [
        (str(a_file / "j.sqlite"), "notes.txt is a file, not a folder"),
        (f"/nonexistent-{tmp_path.name}/deep/j.sqlite", "does not exist; create it first"),
        ("/proc/j.sqlite", "cannot"),
    ]
    for path, message in cases:
        done = _swarmkit("run", "tests.cli_app:swarm", "hi", "--journal", path)
        assert done.returncode == 2, path
        assert _first_error(done).startswith("swarmkit: error: "), path
        assert message in _first_error(done), path
        assert len(done.stderr.splitlines()) == 1
    assert not Path(f"/nonexistent-{tmp_path.name}").exists()


def test_writing_creates_only_the_journals_own_folder(tmp_path: Path) -> None:
    """A missing last folder is made; the run goes on."""
    target = "swarmkit.demo:support_swarm"
    done = _swarmkit("run", target, "hi", "--journal", "runs/j.sqlite", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert (tmp_path / "runs" / "j.sqlite").is_file()


def test_sessions_never_turns_an_empty_or_foreign_file_into_a_journal(tmp_path: Path) -> None:
    """An empty file, a text file and someone else's SQLite database stay byte for byte."""
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    text = tmp_path / "notes.txt"
    text.write_text("not a journal\n")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    for path in (empty, text, other):
        before = path.read_bytes()
        done = _swarmkit("sessions", "--journal", str(path))
        assert done.returncode == 2
        assert _first_error(done).startswith(f"swarmkit: error: {path} is ")
        assert "not a swarmkit journal" in _first_error(done)
        assert path.read_bytes() == before
        assert not Path(f"{path}-wal").exists()


# -- pausing, resuming, Ctrl-C ---------------------------------------------------------------


def test_a_paused_run_says_how_to_continue_and_resume_finishes_it(tmp_path: Path) -> None:
    """run pauses before billing and prints the resume line; resume --approve finishes."""
    journal = str(tmp_path / "j.sqlite")
    target = "tests.cli_app:approval_swarm"
    done = _swarmkit("run", target, REFUND, "--journal", journal, "--session-id", "p1")
    assert done.returncode == 0, done.stderr
    assert "stop:   interrupted" in done.stdout
    hint = f"resume p1 --swarm {target} --journal {journal} --approve"
    assert hint in done.stdout

    undecided = _swarmkit("resume", "p1", "--swarm", target, "--journal", journal)
    assert undecided.returncode == 2
    assert _first_error(undecided).startswith("swarmkit: error: session 'p1' is waiting for a")

    resumed = _swarmkit("resume", "p1", "--swarm", target, "--journal", journal, "--approve")
    assert resumed.returncode == 0, resumed.stderr
    assert "stop:   final_output (billing was active)" in resumed.stdout

    again = _swarmkit("resume", "p1", "--swarm", target, "--journal", journal)
    assert again.returncode == 2
    assert "already finished" in _first_error(again)


def test_resume_with_a_rejection_tells_the_agent_why(tmp_path: Path) -> None:
    """--reject REASON ends the pause without the handoff; triage answers."""
    journal = str(tmp_path / "j.sqlite")
    target = "tests.cli_app:approval_swarm"
    _swarmkit("run", target, REFUND, "--journal", journal, "--session-id", "p2")

    done = _swarmkit("resume", "p2", "--swarm", target, "--journal", journal, "--reject", "no")

    assert done.returncode == 0, done.stderr
    assert "billing was active" not in done.stdout


def test_resume_with_an_edit_hands_off_the_edited_payload(tmp_path: Path) -> None:
    """--edit JSON replaces the handoff's payload; a bad --edit is one line with exit 2."""
    journal = str(tmp_path / "j.sqlite")
    target = "tests.cli_app:approval_swarm"
    paused = _swarmkit("run", target, REFUND, "--journal", journal, "--session-id", "p3")
    payload = json.loads(paused.stdout.split("waits:  handoff billing ", 1)[1].splitlines()[0])
    resume = ["resume", "p3", "--swarm", target, "--journal", journal]

    bad = _swarmkit(*resume, "--edit", "{oops")
    assert bad.returncode == 2
    assert _first_error(bad).startswith("swarmkit: error: --edit is not valid JSON")

    done = _swarmkit(*resume, "--edit", json.dumps({**payload, "amount_eur": 1.5}))
    assert done.returncode == 0, done.stderr
    shown = _swarmkit("show", "p3", "--journal", journal).stdout
    assert '"amount_eur": 1.5' in shown


def test_a_decision_for_a_session_that_waits_for_none_is_refused(tmp_path: Path) -> None:
    """--approve on a session that is not paused: one line, exit 2, nothing written."""
    journal = str(tmp_path / "j.sqlite")
    _swarmkit("run", "tests.cli_app:failing_swarm", "hi", "--journal", journal, "--session-id", "f")

    done = _swarmkit(
        "resume", "f", "--swarm", "tests.cli_app:failing_swarm", "--journal", journal, "--approve"
    )

    assert done.returncode == 2
    assert _first_error(done) == (
        "swarmkit: error: session 'f' is not waiting for a decision; resume it without "
        "--approve, --reject or --edit"
    )


# A shell's background job (CI's, for one) starts with SIGINT ignored, and a child inherits
# that; this launcher gives the command the default disposition a terminal would, then execs it.
_WITH_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def test_ctrl_c_journals_the_run_as_interrupted_and_resume_continues_it(tmp_path: Path) -> None:
    """SIGINT mid model call: exit 130, a line saying how to resume; resume needs no decision."""
    journal = str(tmp_path / "j.sqlite")
    command = [str(SWARMKIT), "run", "tests.cli_app:hanging_swarm", "hi", "--journal", journal]
    process = subprocess.Popen(
        [sys.executable, "-c", _WITH_SIGINT, *command, "--session-id", "c1"],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(60, process.kill)
    watchdog.start()
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if line.strip() == "hanging model called":
                break
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        watchdog.cancel()

    assert process.returncode == 130
    assert err.splitlines()[0] == (
        "swarmkit: stopped by Ctrl-C; the run is journaled; continue it: "
        f"{os.path.relpath(SWARMKIT, ROOT)} resume c1 "
        f"--swarm tests.cli_app:hanging_swarm --journal {journal}"
    )
    listed = _swarmkit("sessions", "--journal", journal).stdout.splitlines()[1].split()
    assert listed[:2] == ["c1", "cancelled"]

    resumed = _swarmkit(
        "resume", "c1", "--swarm", "tests.cli_app:answering_swarm", "--journal", journal
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "answer: the answer" in resumed.stdout


# -- live output -----------------------------------------------------------------------------


def test_live_output_has_no_log_lines_unless_verbose_and_counts_agree(tmp_path: Path) -> None:
    """stderr is empty without --verbose; "1 model call" and "0 handoffs" read right."""
    journal = str(tmp_path / "j.sqlite")
    quiet = _swarmkit("run", "tests.cli_app:failing_swarm", "hi", "--journal", journal)
    assert quiet.returncode == 1
    assert quiet.stderr == ""
    assert "after 1 model call, 0 handoffs," in quiet.stdout

    verbose = _swarmkit("run", "tests.cli_app:failing_swarm", "hi", "--journal", journal, "-v")
    assert "run_started" in verbose.stderr


def test_demo_hints_run_in_a_fresh_shell(tmp_path: Path) -> None:
    """Run through the venv's script with the venv inactive, every hint works as printed."""
    done = _swarmkit("demo", "--offline", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    footer = done.stdout.split("Explore the journal:\n", 1)[1].splitlines()

    assert f"the command is {SWARMKIT} here" in footer[0]
    assert f". {SWARMKIT.parent / 'activate'}" in footer[0]
    hints = [line.strip() for line in footer[1:] if line.strip()]
    assert all(hint.startswith(str(SWARMKIT)) for hint in hints)
    for hint in hints:
        if " ui " in hint:
            _serves(hint, tmp_path)
            continue
        shell = subprocess.run(
            ["/bin/sh", "-c", hint],
            cwd=tmp_path,
            env=_env(),
            capture_output=True,
            check=False,
            timeout=120,
        )
        assert shell.returncode == 0, (hint, shell.stderr)


def _serves(hint: str, cwd: Path) -> None:
    """The viewer hint starts a server: it prints its URL, then it is stopped by pid."""
    viewer = subprocess.Popen(
        ["/bin/sh", "-c", f"exec {hint} --port 0"],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert viewer.stdout is not None
        first = viewer.stdout.readline()
        assert first.startswith("swarmkit ui: "), (hint, first, viewer.stderr)
        assert "http://127.0.0.1:" in first
    finally:
        viewer.kill()
        viewer.wait()


class _WrongKey(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that refuses every key."""

    def do_POST(self) -> None:
        body = json.dumps({"error": {"message": "Incorrect API key", "type": "invalid_key"}})
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def wrong_key_server() -> Iterator[str]:
    """The base URL of a loopback server answering 401 to every call."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _WrongKey)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    thread.join()


def test_demo_with_a_wrong_key_exits_1_and_never_claims_the_same_answer(
    tmp_path: Path, wrong_key_server: str
) -> None:
    """Every live run fails: exit 1, a one-line error, no "same answer" in the replay."""
    env = _env(OPENAI_API_KEY="sk-wrong", OPENAI_BASE_URL=wrong_key_server)

    done = _swarmkit("demo", cwd=tmp_path, env=env)

    assert done.returncode == 1
    assert _first_error(done) == (
        "swarmkit: error: the demo did not complete: a run failed or its replay differed"
    )
    assert "same answer" not in done.stdout
    assert "The demo FAILED: 3 runs of 3 ended in an error." in done.stdout


# -- examples --------------------------------------------------------------------------------

EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_example_runs_with_the_venv_python_from_a_fresh_shell(example: str) -> None:
    """As examples/README.md says: `.venv/bin/python examples/<name>` after make test/demo."""
    done = subprocess.run(
        [sys.executable, f"examples/{example}"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    readme = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")
    assert f"`.venv/bin/python examples/{example}" in readme
