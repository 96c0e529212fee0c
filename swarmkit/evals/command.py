"""The `swarmkit eval` command: run, regrade or replay an eval, print a report, apply gates."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from swarmkit.evals._loading import find_domain, is_target, load_named, load_tasks, read_tasks
from swarmkit.evals._report import EvalReport
from swarmkit.evals._runner import evaluate, regrade, replay
from swarmkit.evals._tasks import Domain, TaskSet
from swarmkit.journal import open_journal

EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2


async def run_eval_command(args: argparse.Namespace) -> int:
    """Run the command; the exit code says whether the gates held."""
    from swarmkit.cli import DEFAULT_JOURNAL, UsageError, load_swarm  # noqa: PLC0415 - no cycle at import

    gates = _gates(args.min_pass_hat, UsageError)
    swarm = load_swarm(args.swarm) if args.swarm else None
    tasks = _task_set(args.tasks, args.domain, args.swarm, UsageError)
    location = args.journal or os.environ.get("SWARMKIT_JOURNAL") or str(DEFAULT_JOURNAL)
    if "://" not in location:
        Path(location).parent.mkdir(parents=True, exist_ok=True)
    journal = open_journal(location)
    if args.regrade:
        report = await regrade(args.regrade, tasks, journal)
    else:
        if swarm is None:
            raise UsageError("--swarm module:attribute is needed to run or replay an eval")
        if args.replay:
            report = await replay(args.replay, tasks, swarm, journal)
        else:
            progress = _progress if sys.stderr.isatty() else None
            report = await evaluate(
                tasks,
                swarm,
                trials=args.trials,
                journal=journal,
                concurrency=args.concurrency,
                run_id=args.run_id,
                progress=progress,
            )
    _emit(report, args.report, args.output)
    if args.compare:
        before = EvalReport.from_data(__import__("json").loads(Path(args.compare).read_text()))
        print(report.compare(before).text(), file=sys.stderr)
    return _verdict(report, args.min_pass_rate, gates)


def _task_set(tasks: str, domain: str | None, swarm: str | None, error: type[Exception]) -> TaskSet:
    """The tasks, in the domain ``--domain`` names, else the one their file names beside the
    swarm's module: a task file is data, so the module it names is never imported."""
    chosen = _domain_option(domain, error) if domain else None
    if is_target(tasks):
        return load_tasks(tasks, domain=chosen)
    read = read_tasks(Path(tasks))
    if chosen is None:
        if swarm is None:
            raise error(
                "name the tasks' domain: --domain module:attribute, or --swarm module:attribute "
                "whose module or package holds it"
            )
        chosen = find_domain(read.domain, swarm.rpartition(":")[0], source=read.source)
    return read.with_domain(chosen)


def _domain_option(target: str, error: type[Exception]) -> Domain:
    # Like --swarm, --domain is a module the person running the command names: found where
    # the command runs, as `python -m` would.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    value = load_named(target)
    if not isinstance(value, Domain):
        raise error(f"--domain {target} is a {type(value).__name__}, not a Domain")
    return value


def _emit(report: EvalReport, form: str, output: str | None) -> None:
    text = {"table": report.table, "json": report.to_json, "junit": report.to_junit}[form]()
    if output:
        Path(output).write_text(text + "\n", encoding="utf-8")
        print(f"eval run {report.run_id} ({report.mode}): report in {output}", file=sys.stderr)
    else:
        print(text)
        print(f"eval run {report.run_id} ({report.mode})", file=sys.stderr)


def _verdict(report: EvalReport, min_rate: float | None, gates: dict[int, float]) -> int:
    missed = []
    if min_rate is not None and report.pass_rate < min_rate:
        missed.append(f"pass rate {report.pass_rate:.3f} < {min_rate}")
    for k, least in sorted(gates.items()):
        value = report.pass_hat(k)
        if value is None or value < least:
            missed.append(f"pass^{k} {'-' if value is None else f'{value:.3f}'} < {least}")
    if report.drifted:
        missed.append(f"{len(report.drifted)} trial(s) drifted")
    for line in missed:
        print(f"swarmkit: gate missed: {line}", file=sys.stderr)
    return EXIT_GATE if missed else EXIT_OK


def _gates(values: list[str], error: type[Exception]) -> dict[int, float]:
    gates: dict[int, float] = {}
    for value in values:
        k, sep, least = value.partition("=")
        try:
            gates[int(k)] = float(least)
        except ValueError:
            raise error(f"--min-pass-hat takes K=X, e.g. 2=0.8; got {value!r}") from None
        if not sep or int(k) < 1:
            raise error(f"--min-pass-hat takes K=X with K >= 1; got {value!r}")
    return gates


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // total
    end = "\n" if done == total else ""
    print(
        f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} trials",
        end=end,
        file=sys.stderr,
        flush=True,
    )
