"""The `swarmkit` command, called through `main()` as the console script calls it."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import structlog

import swarmkit.models as models
from swarmkit._sessions._sessions import _RESUMABLE
from swarmkit.cli import MISSING_KEY, UsageError, _browse, _commands, load_swarm, main
from swarmkit.demo import DemoModel
from swarmkit.journal import import_jsonl
from swarmkit.models import Model

REFUND = "Hi, I was charged twice for invoice INV-1042. Please refund the duplicate charge."
OUTAGE = "Our dashboard shows 502 errors since 9:15. Is something down?"

Capture = pytest.CaptureFixture[str]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Each test runs in its own folder, with no API key, journal variable, sys.path or
    structlog configuration leaking in or out (the command configures structlog)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SWARMKIT_JOURNAL"):
        monkeypatch.delenv(name, raising=False)
    configured, config = structlog.is_configured(), structlog.get_config()
    yield
    structlog.reset_defaults()
    if configured:
        structlog.configure(**config)


@pytest.fixture
def refund_session(capsys: Capture) -> str:
    """A refund ticket run into the default journal; its session id."""
    assert main(["run", "tests.cli_app:swarm", REFUND, "--session-id", "refund-1"]) == 0
    capsys.readouterr()
    return "refund-1"


def _error_line(capsys: Capture) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- help and usage --------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["demo", "run", "sessions", "show", "replay", "export", "draw"])
def test_every_subcommand_has_help(command: str, capsys: Capture) -> None:
    """`swarmkit <command> --help` prints its usage and exits 0."""
    assert main([command, "--help"]) == 0
    assert f"usage: swarmkit {command}" in capsys.readouterr().out


def test_top_level_help_lists_the_commands(capsys: Capture) -> None:
    """`swarmkit --help` names every command and the exit codes."""
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("demo", "run", "sessions", "replay", "draw"))
    assert "Exit codes" in out


@pytest.mark.parametrize("argv", [[], ["fly"], ["replay", "s1"], ["draw", "--format", "png"]])
def test_bad_arguments_are_usage_errors(argv: list[str], capsys: Capture) -> None:
    """A missing command, an unknown one or a missing option exits with 2."""
    assert main(argv) == 2
    assert "usage: swarmkit" in capsys.readouterr().err


# -- demo ------------------------------------------------------------------------------------


def test_demo_offline_runs_journals_and_replays_with_zero_model_calls(
    capsys: Capture, tmp_path: Path
) -> None:
    """The offline demo says its model is a stand-in, and every replay made 0 model calls."""
    assert main(["demo", "--offline"]) == 0

    out = capsys.readouterr().out
    assert "deterministic stand-in, not an LLM" in out
    assert "decided by a rule" in out and "decided by the LLM" in out
    assert "RefundRequest" in out
    assert out.count("0 model calls made") == 3
    assert "DIFFERENT" not in out and "DIVERGED" not in out
    assert (tmp_path / ".swarmkit" / "journal.sqlite").is_file()  # the default journal


def test_demo_without_a_key_runs_offline(capsys: Capture, tmp_path: Path) -> None:
    """With no OPENAI_API_KEY the demo needs no flag to run offline, into --journal."""
    assert main(["demo", "--journal", "out/demo.sqlite"]) == 0
    assert "stand-in" in capsys.readouterr().out
    assert (tmp_path / "out" / "demo.sqlite").is_file()


def test_demo_with_a_key_runs_live_on_the_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """OPENAI_API_KEY makes the demo live on gpt-4o-mini, unless --offline."""
    chosen: list[Model | None] = []

    async def fake_run_demo(
        out: Any, *, journal_path: Path, model: Model | None = None, program: str = ""
    ) -> int:
        chosen.append(model)
        return 0

    monkeypatch.setattr(_commands, "run_demo", fake_run_demo)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    assert main(["demo"]) == 0
    assert main(["demo", "--model", "gpt-4o"]) == 0
    assert main(["demo", "--offline"]) == 0
    assert [getattr(model, "name", None) for model in chosen] == ["gpt-4o-mini", "gpt-4o", None]


def test_demo_with_a_model_but_no_key_says_what_to_set(capsys: Capture) -> None:
    """--model asks for a live run; without a key that is a usage error."""
    assert main(["demo", "--model", "gpt-4o"]) == 2
    assert MISSING_KEY in _error_line(capsys)


# -- run -------------------------------------------------------------------------------------


def test_run_streams_the_live_view_and_journals_the_run(capsys: Capture, tmp_path: Path) -> None:
    """`swarmkit run` shows agents, tools, the typed handoff and tokens, then the answer."""
    assert main(["run", "tests.cli_app:swarm", REFUND]) == 0

    out = capsys.readouterr().out
    assert "lookup_invoice" in out and "issue_refund" in out
    assert "#1 -> billing, decided by the LLM" in out
    assert 'RefundRequest {"invoice_id": "INV-1042"' in out
    assert "tokens (" in out
    assert "stop:   final_output" in out
    assert "answer: Done: refund RF-" in out
    assert (tmp_path / ".swarmkit" / "journal.sqlite").is_file()


def test_run_with_context_routes_by_rule(capsys: Capture) -> None:
    """--context feeds the rules: a known category skips triage's model call."""
    argv = ["run", "tests.cli_app:swarm", OUTAGE, "--context", '{"category": "outage"}']
    assert main(argv) == 0

    out = capsys.readouterr().out
    assert "category == 'outage' -> tech_support (no model call)" in out
    assert "triage       | model" not in out


def test_run_accepts_a_function_that_returns_a_swarm(capsys: Capture) -> None:
    """A zero-argument factory is called to get the swarm."""
    assert main(["run", "tests.cli_app:make_swarm", OUTAGE]) == 0
    assert "stop:   final_output" in capsys.readouterr().out


def test_run_imports_modules_from_the_current_folder(capsys: Capture, tmp_path: Path) -> None:
    """A module beside the caller is importable, as with `python -m`."""
    app = "from swarmkit.demo import support_swarm\n\nswarm = support_swarm()\n"
    (tmp_path / "cli_folder_app.py").write_text(app)
    assert main(["run", "cli_folder_app:swarm", OUTAGE]) == 0
    assert "stop:   final_output" in capsys.readouterr().out


def test_run_writes_to_the_journal_named_by_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """SWARMKIT_JOURNAL is the default journal, its folder created."""
    monkeypatch.setenv("SWARMKIT_JOURNAL", str(tmp_path / "env" / "j.sqlite"))
    assert main(["run", "tests.cli_app:swarm", OUTAGE]) == 0
    assert (tmp_path / "env" / "j.sqlite").is_file()


def test_run_that_ends_in_an_error_exits_1(capsys: Capture) -> None:
    """A run whose stop reason is error exits 1 and shows the error."""
    assert main(["run", "tests.cli_app:failing_swarm", "hello"]) == 1
    out = capsys.readouterr().out
    assert "stop:   error" in out
    assert "the API is unreachable" in out


def test_run_with_a_model_builds_an_openai_model(
    monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    """--model and --base-url become the swarm's OpenAIModel (no key needed for a local server)."""
    built: list[tuple[str, dict[str, Any]]] = []

    def fake_openai_model(name: str, **options: Any) -> DemoModel:
        built.append((name, options))
        return DemoModel()

    monkeypatch.setattr(_commands, "OpenAIModel", fake_openai_model)
    argv = ["run", "tests.cli_app:swarm", OUTAGE, "--model", "llama3", "--base-url", "http://h/v1"]
    assert main(argv) == 0
    assert [(name, options["base_url"]) for name, options in built] == [("llama3", "http://h/v1")]
    assert "offline-demo-model" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "no_such_module_here:swarm", "hi"], "no module named 'no_such_module_here'"),
        (["run", "tests.cli_app:missing", "hi"], "has no attribute 'missing'; its Swarms:"),
        (["run", "tests.cli_app:not_a_swarm", "hi"], "is dict, not a Swarm"),
        (
            ["run", "tests.cli_app:swarm_for", "hi"],
            "is a function, not a Swarm; the command calls only",
        ),
        (["run", "tests.cli_app", "hi"], "is not module:attribute"),
        (["run", "tests.cli_app:swarm", "hi", "--context", "{oops"], "--context is not valid JSON"),
        (["run", "tests.cli_app:swarm", "hi", "--context", "[1]"], "must be a JSON object"),
        (["run", "tests.cli_app:swarm", "hi", "--model", "gpt-4o"], MISSING_KEY),
        (["run", "tests.cli_app:swarm", "hi", "--base-url", "http://h/v1"], "needs --model"),
        (["sessions"], "no journal at"),
        (["show", "nope"], "no journal at"),
    ],
)
def test_expected_errors_are_one_line_with_exit_code_2(
    argv: list[str], message: str, capsys: Capture
) -> None:
    """Each mistake is one line on stderr saying what to do, with no traceback."""
    assert main(argv) == 2
    line = _error_line(capsys)
    assert line.startswith("swarmkit: error: ")
    assert message in line


def test_run_refuses_a_session_id_already_in_the_journal(
    refund_session: str, capsys: Capture
) -> None:
    """Reusing a session id is a clear error, not a corrupted journal."""
    assert main(["run", "tests.cli_app:swarm", REFUND, "--session-id", refund_session]) == 2
    assert "already in the journal" in capsys.readouterr().err


# -- sessions, show, export ------------------------------------------------------------------


def test_sessions_lists_each_run(refund_session: str, capsys: Capture) -> None:
    """The table shows id, state, stop reason, records and the prompt."""
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["SESSION", "STATE", "STOP", "RECORDS", "STARTED", "PROMPT"]
    assert out[1].startswith(refund_session)
    assert "finished" in out[1] and "final_output" in out[1] and "charged twice" in out[1]


def test_show_prints_the_timeline(refund_session: str, capsys: Capture) -> None:
    """The timeline has agents, handoffs with payloads, tool calls, tokens and the stop."""
    assert main(["show", refund_session]) == 0
    out = capsys.readouterr().out
    assert "agent    triage is active (entry agent)" in out
    assert "handoff  #1 triage -> billing, decided by the LLM" in out
    assert 'RefundRequest {"invoice_id": "INV-1042", "amount_eur": 49.0' in out
    assert "tool     billing issue_refund" in out
    assert "model    billing call 4: answers;" in out
    assert "stop     final_output (billing was active)" in out
    assert "tokens: " in out


def test_the_timeline_shows_a_step_s_details_only_when_it_has_them() -> None:
    """An error, an answer, a refusal's detail or a handoff's note gets its own indented line,
    cut to its length; a step without one gets none."""
    from swarmkit.console import timeline  # noqa: PLC0415 - console views only
    from swarmkit.journal import JournalRecord  # noqa: PLC0415

    steps: list[tuple[str, dict[str, Any]]] = [
        ("handoff", {"number": 1, "source": "a", "target": "b", "message": "over to you"}),
        ("handoff", {"number": 2, "source": "b", "target": "a"}),
        ("handoff_refused", {"source": "a", "target": "c", "detail": "x" * 400}),
        ("model_call", {"agent": "a", "turn": 1, "response": {"content": "hello"}}),
        ("eval_trial", {"task_id": "t", "number": 1, "error": "it broke"}),
        ("run_finished", {"stop_reason": "error", "error": "boom", "final_output": "y" * 500}),
    ]
    records = [
        JournalRecord(session_id="s", seq=n, kind=k, data=d) for n, (k, d) in enumerate(steps)
    ]
    lines = [line[8:] for line in timeline(records)[1:13]]
    assert lines == [
        "handoff  #1 a -> b, decided by None",
        "         message over to you",
        "handoff  #2 b -> a, decided by None",
        "refused  a -> c (None), asked by None",
        f"         {'x' * 297}...",
        "model    a call 1: answers; 0 tokens (0 in, 0 out)",
        "         says hello",
        "trial    t #1: sessions none",
        "         error it broke",
        "stop     error: the run raised an exception",
        "         error boom",
        f"         answer {'y' * 397}...",
    ]


def test_show_of_a_rule_routed_run_names_the_edge(capsys: Capture) -> None:
    """A rule decision shows which edge fired."""
    argv = ["run", "tests.cli_app:swarm", OUTAGE, "--context", '{"category": "outage"}']
    assert main([*argv, "--session-id", "outage-1"]) == 0
    capsys.readouterr()
    assert main(["show", "outage-1"]) == 0
    out = capsys.readouterr().out
    assert "rule     triage: category == 'outage' fired -> tech_support" in out
    assert "decided by a rule (category == 'outage')" in out


def test_show_of_an_unknown_session_is_a_usage_error(refund_session: str, capsys: Capture) -> None:
    """A session id the journal does not hold exits 2 and says how to list them."""
    assert main(["show", "nope"]) == 2
    line = _error_line(capsys)
    assert "no session 'nope'" in line and "swarmkit sessions" in line


def test_export_writes_the_session_as_jsonl(refund_session: str, capsys: Capture) -> None:
    """The export reads back as the session's records."""
    assert main(["export", refund_session, "--format", "jsonl"]) == 0
    records = import_jsonl(capsys.readouterr().out)
    assert records[0].kind == "run_started"
    assert records[-1].kind == "run_finished"


# -- replay ----------------------------------------------------------------------------------


def test_replay_that_reproduces_exits_0_with_a_summary(
    refund_session: str, capsys: Capture
) -> None:
    """Replaying against the same code reproduces the session with zero model calls."""
    assert main(["replay", refund_session, "--swarm", "tests.cli_app:swarm"]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"replayed {refund_session}: reproduced final_output (billing)")
    assert out.endswith("0 model calls")


def test_replay_that_diverges_exits_1_with_the_diff(refund_session: str, capsys: Capture) -> None:
    """Changed instructions make replay stop with the divergence and its diff."""
    assert main(["replay", refund_session, "--swarm", "tests.cli_app:changed_swarm"]) == 1
    err = capsys.readouterr().err
    assert "replay diverged" in err
    assert "--- journal (expected)" in err and "+++ current code (actual)" in err
    assert "Traceback" not in err


def test_replay_of_an_unknown_session_is_a_usage_error(
    refund_session: str, capsys: Capture
) -> None:
    """A session that is not there exits 2, not as a divergence."""
    assert main(["replay", "nope", "--swarm", "tests.cli_app:swarm"]) == 2
    line = _error_line(capsys)
    assert "no session 'nope'" in line and "swarmkit sessions" in line


# -- draw ------------------------------------------------------------------------------------


def test_draw_a_swarm_as_mermaid_and_dot(capsys: Capture) -> None:
    """Rule edges are dashed with their conditions; typed handoffs name their payload."""
    assert main(["draw", "tests.cli_app:swarm"]) == 0
    mermaid = capsys.readouterr().out
    assert mermaid.startswith("flowchart LR\n")
    assert "-.->|\"rule 2: category == 'outage'\"|" in mermaid
    assert '-->|"RefundRequest"|' in mermaid

    assert main(["draw", "tests.cli_app:swarm", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith("digraph swarm {")
    assert "style=dashed" in dot


def test_draw_a_session(refund_session: str, capsys: Capture) -> None:
    """`draw --session` draws the path the run took."""
    assert main(["draw", "--session", refund_session]) == 0
    out = capsys.readouterr().out
    assert '-->|"(1) llm + payload"|' in out
    assert "stop: final_output" in out


@pytest.mark.parametrize("argv", [["draw"], ["draw", "tests.cli_app:swarm", "--session", "s"]])
def test_draw_needs_exactly_one_subject(argv: list[str], capsys: Capture) -> None:
    """Neither a swarm nor a session, or both, is a usage error."""
    assert main(argv) == 2
    assert "one of them" in _error_line(capsys)


def test_the_command_keeps_library_logs_off_stdout(capsys: Capture) -> None:
    """Info logs are dropped and stdout holds only the command's output."""
    assert main(["run", "tests.cli_app:swarm", OUTAGE]) == 0
    captured = capsys.readouterr()
    assert "run_started" not in captured.out + captured.err


def test_json_context_reaches_the_journal(capsys: Capture) -> None:
    """The --context object is the run's context, as the journal records it."""
    context = {"category": "outage", "customer_id": "C-9"}
    argv = ["run", "tests.cli_app:swarm", OUTAGE, "--context", json.dumps(context)]
    assert main([*argv, "--session-id", "ctx-1"]) == 0
    capsys.readouterr()
    assert main(["export", "ctx-1"]) == 0
    assert import_jsonl(capsys.readouterr().out)[0].data["context"] == context


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris", "Asia/Kolkata", "America/St_Johns"])
def test_sessions_shows_start_times_as_datetime_would(
    zone: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing's per-minute time cache prints what datetime prints, across DST changes."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        local_time = _browse._local_times()
        moments = [1_711_846_000 + step * 37.25 for step in range(400)]  # over Paris' DST
        moments += [1_700_000_059.9999996, 0.5, 1_700_000_000.0]
        for moment in moments:
            expected = datetime.fromtimestamp(moment).strftime("%Y-%m-%d %H:%M:%S")
            assert local_time(moment) == expected, moment
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.parametrize(
    ("given", "kind", "key"),
    [
        ("anthropic:claude-sonnet-4-5", "AnthropicModel", "ANTHROPIC_API_KEY"),
        ("google:gemini-2.5-flash", "GeminiModel", "GEMINI_API_KEY"),
        ("gemini:gemini-2.5-flash", "GeminiModel", "GOOGLE_API_KEY"),
        ("openai:gpt-4o-mini", "OpenAIModel", "OPENAI_API_KEY"),
        ("responses:gpt-4o-mini", "OpenAIResponsesModel", "OPENAI_API_KEY"),
    ],
)
def test_run_model_takes_every_provider_prefix(
    monkeypatch: pytest.MonkeyPatch, given: str, kind: str, key: str
) -> None:
    """`--model PROVIDER:NAME` builds that provider's adapter for the name after the colon,
    and without the provider's key says which variable to set (not OPENAI_API_KEY for all)."""
    for variable in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    swarm = load_swarm("tests.cli_app:swarm")
    with pytest.raises(UsageError, match=key if kind != "GeminiModel" else "GEMINI_API_KEY"):
        _commands._with_model(swarm, given, None)

    monkeypatch.setenv(key, "sk-test")
    model = _commands._with_model(swarm, given, None).plans[swarm.entry_agent].model

    assert type(model) is getattr(models, kind)
    assert getattr(model, "name", None) == given.partition(":")[2]


def test_resume_of_a_finished_session_answers_once_with_what_to_do(
    tmp_path: Path, capsys: Capture
) -> None:
    """With or without a decision, resuming a finished session says at the first try that it
    is finished, and how to see, replay or ask again; the stop reasons it resumes are the
    sessions module's."""
    journal = str(tmp_path / "j.sqlite")
    target = "tests.cli_app:approval_swarm"
    assert main(["run", target, REFUND, "--journal", journal, "--session-id", "p1"]) == 0
    assert main(["resume", "p1", "--swarm", target, "--journal", journal, "--approve"]) == 0
    capsys.readouterr()

    for decided in ([], ["--approve"]):
        assert main(["resume", "p1", "--swarm", target, "--journal", journal, *decided]) == 2
        line = _error_line(capsys)
        assert line.startswith(
            "swarmkit: error: session 'p1' already finished (final_output): there is nothing "
            "to resume. See it with `swarmkit show p1`"
        )
        assert f"`swarmkit replay p1 --swarm {target}`" in line
    assert frozenset(_RESUMABLE) == _commands.RESUMABLE_STOPS
