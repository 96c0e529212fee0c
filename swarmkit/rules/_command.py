"""The ``swarmkit rules`` command: ``suggest`` rules from a journal, and ``whatif`` they ran."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from swarmkit.cli import UsageError, journal_path, load_swarm, open_for_reading, open_for_writing
from swarmkit.console import plural
from swarmkit.redaction import Redactor
from swarmkit.rules._corpus import CorpusFilter
from swarmkit.rules._live import Rerun, rerun_changed
from swarmkit.rules._suggest import Suggestion, SuggestReport, suggest_rules
from swarmkit.rules._whatif import UNKNOWN_AFTER, WhatIfReport, load_rules, report_data, whatif

_Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]
_MAX_CHANGED_SHOWN = 20


def _filter(args: argparse.Namespace) -> CorpusFilter:
    tag = None
    if args.tag is not None:
        path, equals, value = args.tag.partition("=")
        if not equals or not path:
            raise UsageError(f"--tag takes PATH=VALUE (e.g. tier=gold), got {args.tag!r}")
        tag = (path, _json_or_text(value))
    return CorpusFilter(
        since=_time(args.since, "--since"),
        until=_time(args.until, "--until"),
        prefix=args.prefix,
        tag=tag,
    )


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _time(value: str | None, option: str) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
        if math.isfinite(seconds):
            return seconds
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        raise UsageError(
            f"{option} takes Unix seconds or an ISO 8601 time (2026-01-31T12:00), got {value!r}"
        ) from None


async def _suggest(args: argparse.Namespace) -> int:
    swarm = load_swarm(args.swarm)
    if args.agent is not None and args.agent not in swarm.plans:
        raise UsageError(
            f"--agent {args.agent!r} is not an agent of the swarm; its agents: "
            f"{', '.join(sorted(swarm.plans))}"
        )
    with open_for_reading(journal_path(args.journal)) as journal:
        report = await suggest_rules(
            journal,
            graph=swarm.graph,
            agent=args.agent,
            min_precision=args.min_precision,
            min_support=args.min_support,
            where=_filter(args),
            redactor=Redactor.of(swarm.config.redact_keys),
        )
    if args.out:
        _write(Path(args.out), report)
    if args.json:
        print(json.dumps(_suggest_data(report), indent=2, ensure_ascii=False))
    else:
        print("\n".join(suggest_lines(report, out=args.out)))
    return 0


def _write(path: Path, report: SuggestReport) -> None:
    try:
        path.write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the rules to {path}: {exc}") from exc


def suggest_lines(report: SuggestReport, *, out: str | None = None) -> list[str]:
    """The suggest report as text for people."""
    decisions = ", ".join(f"{agent} {count}" for agent, count in report.decisions.items())
    lines = [
        f"Read {plural(report.sessions, 'session')} ({report.held_out_sessions} held out to "
        f"check the rules); model decisions: {decisions}.",
    ]
    if not report.suggestions:
        lines.append("No rule meets the thresholds on the held-out sessions.")
    for number, suggestion in enumerate(report.suggestions, start=1):
        lines.extend(["", *_suggestion_lines(number, suggestion)])
    if report.inconsistencies:
        lines += ["", "Inconsistent routing (the same context sent to different targets):"]
        for found in report.inconsistencies:
            counts = ", ".join(f"{target} {count}" for target, count in found.counts.items())
            examples = "; ".join(
                f"{target}: {', '.join(ids)}" for target, ids in found.sessions.items()
            )
            lines.append(f"  {found.source}, when {found.context}: {counts}  (e.g. {examples})")
        lines.append("  Fix these in the agent's instructions, or decide them with a rule.")
    if report.withheld:
        lines += ["", "Withheld (learned, not suggested), and why:"]
        for withheld in report.withheld:
            lines.append(f"  {withheld.source} -> {withheld.target} when {withheld.when}")
            lines.append(f"    {withheld.reason}: {withheld.why}")
    if report.left_out:
        lines += ["", "Context paths never used in a condition:"]
        lines.extend(f"  {path}: {why}" for path, why in report.left_out.items())
    lines += damaged_lines(report.damaged)
    if report.suggestions:
        lines.append("")
        lines.append(
            f"Rules written to {out}; try them: swarmkit rules whatif --rules {out}"
            if out
            else "Write them as a file with --out FILE, then try them with `swarmkit rules whatif`."
        )
    return lines


def _suggestion_lines(number: int, suggestion: Suggestion) -> list[str]:
    lines = [
        f"Rule {number}: {suggestion.source} -> {suggestion.target}",
        f"  when      {suggestion.when}",
        f"  held-out  precision {suggestion.precision:.1%} ({suggestion.agreed} of "
        f"{suggestion.support} decisions agree), support {suggestion.support}",
        f"  saves     {plural(suggestion.saved_calls, 'model call')}, "
        f"{suggestion.saved_tokens:,} tokens in this journal (it takes "
        f"{plural(suggestion.decided, 'decision')})",
    ]
    if suggestion.counter_count:
        shown = "; ".join(
            f"{example.session_id} step {example.seq} (model: {example.chosen or 'kept the turn'})"
            for example in suggestion.counter_examples
        )
        lines.append(f"  model chose otherwise in {suggestion.counter_count}: {shown}")
        lines.append("            see one with: swarmkit show SESSION")
    else:
        lines.append("  model chose otherwise: never")
    lines.extend(f"  conflict  {conflict}" for conflict in suggestion.conflicts)
    lines.append(f"  paste     {suggestion.line}")
    return lines


def _suggest_data(report: SuggestReport) -> dict[str, Any]:
    return {
        "sessions": report.sessions,
        "held_out_sessions": report.held_out_sessions,
        "decisions": dict(report.decisions),
        "suggestions": [{**dataclasses.asdict(s), "line": s.line} for s in report.suggestions],
        "inconsistencies": [
            {"source": i.source, "context": i.context, "counts": dict(i.counts)}
            for i in report.inconsistencies
        ],
        "withheld": [
            {
                "source": w.source,
                "target": w.target,
                "when": w.when,
                "reason": w.reason,
                "why": w.why,
                "precision": w.precision,
                "support": w.support,
                "agreed": w.agreed,
                "counts": dict(w.counts),
            }
            for w in report.withheld
        ],
        "left_out": dict(report.left_out),
        "damaged": dict(report.damaged),
        "graph": report.to_dict(),
    }


async def _whatif(args: argparse.Namespace) -> int:
    swarm = load_swarm(args.swarm)
    rules = load_rules(args.rules, agents=swarm.plans.keys())
    opener = open_for_writing if args.live else open_for_reading
    with opener(journal_path(args.journal)) as journal:
        report = await whatif(journal, rules, graph=swarm.graph, where=_filter(args))
        reruns = await rerun_changed(swarm, journal, report) if args.live else None
    if args.json:
        data = report_data(report)
        if reruns is not None:
            data["reruns"] = [_rerun_data(rerun) for rerun in reruns]
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print("\n".join(whatif_lines(report, reruns)))
    return 0


def _rerun_data(rerun: Rerun) -> dict[str, Any]:
    return {
        "session_id": rerun.session_id,
        "rerun_id": rerun.rerun_id,
        "step": rerun.step,
        "journaled": list(rerun.journaled),
        "trail": list(rerun.trail),
        "stop_reason": rerun.stop_reason,
        "model_calls": rerun.model_calls,
        "existing": rerun.existing,
    }


def whatif_lines(report: WhatIfReport, reruns: Sequence[Rerun] | None = None) -> list[str]:
    """The what-if report as text for people, with the live re-runs when there are some."""
    lines = [
        f"Replayed {plural(len(report.sessions), 'session')} with "
        f"{plural(len(report.rules), 'proposed rule')}, 0 model calls:",
        f"  unchanged   {report.count('unchanged')} (no proposed rule fires)",
        f"  same route  {report.count('same_route')} (rules decide {report.agreed} turns the model "
        "decided, and agree)",
        f"  changed     {report.count('changed')} (a rule routes differently)",
        f"  saved       {plural(report.saved_calls, 'model call')}, "
        f"{report.saved_tokens:,} tokens on routing turns",
    ]
    changed = report.changed
    if changed:
        lines += ["", "Routed differently (first differing step):"]
        for session in changed[:_MAX_CHANGED_SHOWN]:
            change = session.change
            assert change is not None
            lines.append(
                f"  {session.session_id} step {change.seq} ({change.agent}, turn {change.turn}): "
                f"journal {change.journaled}; now {change.now}"
            )
        if len(changed) > _MAX_CHANGED_SHOWN:
            lines.append(f"  ... and {len(changed) - _MAX_CHANGED_SHOWN} more (--json lists all)")
        lines += ["", f"Note: {UNKNOWN_AFTER}."] if reruns is None else _rerun_lines(reruns)
    return lines + damaged_lines(report.damaged)


def _rerun_lines(reruns: Sequence[Rerun]) -> list[str]:
    calls = sum(rerun.model_calls for rerun in reruns if not rerun.existing)
    lines = [
        "",
        f"Re-ran {plural(len(reruns), 'changed session')} live against the swarm's model "
        f"({plural(calls, 'model call')}), each as a new session:",
    ]
    for rerun in reruns:
        how = (
            "already in the journal, not run again"
            if rerun.existing
            else f"ran now, {plural(rerun.model_calls, 'model call')}"
        )
        lines.append(
            f"  {rerun.session_id} -> {rerun.rerun_id} ({how}): journal "
            f"{' -> '.join(rerun.journaled)}; now {' -> '.join(rerun.trail)}, "
            f"{rerun.stop_reason or 'not finished'}"
        )
    lines.append("  see one with: swarmkit show SESSION")
    return lines


def damaged_lines(damaged: Mapping[str, str]) -> list[str]:
    """The sessions left out for a damaged record, for people (a few, then how many more)."""
    if not damaged:
        return []
    lines = ["", "Left out, a record damaged (not read as a swarm run wrote it):"]
    lines += [f"  {why}" for why in list(damaged.values())[:_MAX_CHANGED_SHOWN]]
    if len(damaged) > _MAX_CHANGED_SHOWN:
        lines.append(f"  ... and {len(damaged) - _MAX_CHANGED_SHOWN} more (--json lists all)")
    return lines


def run_rules_command(argv: list[str]) -> int:
    """``swarmkit rules ...`` on its own (for tests): the same as ``swarmkit.cli.main``."""
    from swarmkit.cli import main  # noqa: PLC0415

    return main(["rules", *argv])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run_rules_command(sys.argv[1:]))
