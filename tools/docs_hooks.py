"""MkDocs hooks: reference tables generated from the code's own definitions, so they cannot drift.

A page asks for a table with a marker line such as ``<!-- generated: command -->``; the build
replaces it. A definition that gained a value the page cannot explain fails the build
(``mkdocs build --strict`` in the test command), naming what to add.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

PACKAGE = Path(__file__).resolve().parents[1] / "swarmkit"

STOP_REASONS = {
    "final_output": "The last agent answered and no limit shaped the end.",
    "max_handoffs": "`max_handoffs` shaped the end: it refused a handoff, or withheld a "
    "transfer (or a rule) the final agent would otherwise have had.",
    "max_turns": "The model-call cap was reached; the last allowed call asks for an answer.",
    "cycle": "A handoff closed a cycle on the trail (refused, or the run stopped).",
    "timeout": "`run_timeout` or `agent_timeout` ran out; `result.limit` says which.",
    "usage_limit": "A usage limit (calls, tokens, tool calls, cost) would be or was exceeded.",
    "budget": "A spend ledger's budget had no room for the next model call, which was not "
    "made; `result.limit.budget` names it.",
    "interrupted": "The run paused for a human (`result.pending`) or was stopped (Ctrl-C).",
    "error": "The model API failed after retries, or an input filter failed; see `result.error`.",
    "invalid_output": "A typed agent's answers never validated against its `output_type`.",
}

RECORD_KINDS = {
    "run_started": "The prompt, context, configuration fingerprint and, for a continued "
    "conversation, the history it started from.",
    "agent_started": "An agent became active (with its sub-session id).",
    "rule": "A HandoffGraph rule was evaluated: which edge fired, and why earlier ones did not.",
    "handoff": "A handoff was performed: source, target, who decided (rule, llm, tool, "
    "budget, person), payload.",
    "handoff_refused": "A handoff call was not taken, and why (limit, cycle, not offered, "
    "payload).",
    "handoff_invalid": "A transfer call whose payload did not validate: the tool, the "
    "arguments the model sent and the validation error it was told (it may call again). "
    "Sessions journaled before this record existed lack it and still replay.",
    "on_handoff": "The outcome of a handoff's `on_handoff` callback (replay does not call it "
    "again).",
    "model_call": "A model request (as a digest) and its full response.",
    "tool_call": "A tool call: its arguments and its outcome.",
    "effect_intent": "An effect about to run (`@tool(effect=True)`): tool, executed arguments, "
    "idempotency key and time, committed before the call.",
    "effect_reconciled": "A reconcile function's answer for an effect found without an "
    "outcome: happened (with its result) or not done.",
    "output_rejected": "A typed agent's answer did not validate; the error went back to it.",
    "tool_required": "A model that had to call a tool answered in text and was asked again.",
    "interrupt": "The run paused for a human decision; the pending step.",
    "resumed": "A human decision (approve, reject, edit) the run went on with.",
    "queue_claimed": "Between runs: a person claimed a conversation waiting at a queue of "
    "people (who, when).",
    "queue_replied": "Between runs: the person who claimed it replied (who, what, when).",
    "queue_escalated": "Between runs: nobody claimed it within its queue's deadline.",
    "queue_engine": "Between runs: the durable engine (Temporal, DBOS) whose workflow resumes "
    "the conversation, noted by its journal mirror; only that engine's decide hands it back.",
    "limit_reached": "A time or usage limit, or a spend ledger's budget, stopped the run "
    "(`LimitBreach`).",
    "state_edited": "A fork's edit of the context, applied where the journal holds it.",
    "run_finished": "The end: stop reason, final output and its text, usage.",
    "eval_run_started": "An eval run began (its manifest session `evalrun__RUN`): tasks, "
    "trials per task, domain.",
    "eval_trial": "One trial of an eval run finished: its task, number, sessions, end "
    "database, and error if it raised.",
    "eval_run_graded": "An eval run ran to its end: its pass rate and pass^1 to pass^k.",
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each ``<!-- generated: NAME -->`` marker with its table."""
    return re.sub(r"<!-- generated: ([a-z-]+) -->", lambda m: _generate(m.group(1)), markdown)


def _generate(name: str) -> str:
    makers: dict[str, Callable[[], str]] = {
        "command": command_reference,
        "conditions": condition_language,
        "stop-reasons": stop_reasons,
        "record-kinds": record_kinds,
    }
    if name not in makers:
        raise PluginError(f"unknown generated table {name!r}; one of {sorted(makers)}")
    return makers[name]()


def command_reference() -> str:
    """Every command's help, as argparse prints it."""
    from swarmkit.cli import _parser  # noqa: PLC0415 - the command's own parser

    os.environ["COLUMNS"] = "96"  # argparse wraps to the terminal; the page wants one width
    parser = _parser()
    parts = ["```text", parser.format_help().rstrip(), "```"]
    for name, command in _subcommands(parser):
        parts += ["", f"## swarmkit {name}", "", "```text", command.format_help().rstrip()]
        parts.append("```")
        for sub_name, sub in _subcommands(command):  # `serve a2a`, `serve mcp`, ...
            parts += ["", f"### swarmkit {name} {sub_name}", "", "```text"]
            parts += [sub.format_help().rstrip(), "```"]
    return "\n".join(parts)


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """The subcommands a parser has, by name (none for a command without any)."""
    return [
        (name, command)
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name, command in action.choices.items()
    ]


def condition_language() -> str:
    """The language as ``swarmkit.conditions``' docstring defines it."""
    from swarmkit import conditions  # noqa: PLC0415

    doc = (conditions.__doc__ or "").split("\n\n", 2)[2]
    return re.sub(r"``(.+?)``", r"`\1`", doc).replace("*undefined*", "_undefined_")


def stop_reasons() -> str:
    """``RunResult.stop_reason``'s values, from the ``StopReason`` literal."""
    from swarmkit.result import StopReason  # noqa: PLC0415

    values = typing.get_args(StopReason)
    return _table("stop reason", values, STOP_REASONS, "STOP_REASONS")


def record_kinds() -> str:
    """The kinds of journal record the package writes, found in its source."""
    return _table("kind", sorted(journaled_kinds()), RECORD_KINDS, "RECORD_KINDS")


def journaled_kinds() -> set[str]:
    """Kinds passed as a literal to a step writer's ``note``/``_add``, or named as constants."""
    kinds: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _writes_kind(node):
                kinds.add(node.args[0].value)  # type: ignore[attr-defined]
    from swarmkit._run._effects import INTENT, RECONCILED  # noqa: PLC0415
    from swarmkit.console._timeline import _STEPS  # noqa: PLC0415 - kinds the timeline shows
    from swarmkit.journal._cursor import STATE_EDITED  # noqa: PLC0415
    from swarmkit.journal._records import AGENT_STARTED, PERSON_NOTES  # noqa: PLC0415

    return kinds | set(_STEPS) | {AGENT_STARTED, STATE_EDITED, INTENT, RECONCILED} | PERSON_NOTES


def _writes_kind(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("note", "_add", "_expect_kind")
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def _table(title: str, values: Any, meanings: dict[str, str], where: str) -> str:
    unexplained = sorted(set(values) - set(meanings))
    if unexplained:
        raise PluginError(f"explain {', '.join(unexplained)} in {where} of tools/docs_hooks.py")
    gone = sorted(set(meanings) - set(values))
    if gone:
        raise PluginError(f"{', '.join(gone)} no longer exist: drop them from {where}")
    rows = [f"| `{value}` | {meanings[value]} |" for value in values]
    return "\n".join([f"| {title} | meaning |", "|---|---|", *rows])
