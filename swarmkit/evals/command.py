"""The `swarmkit eval` command: run, regrade or replay an eval, print a report, apply gates."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from swarmkit.console import plural
from swarmkit.evals._loading import find_domain, is_target, load_named, load_tasks, read_tasks
from swarmkit.evals._report import EvalReport
from swarmkit.evals._runner import eval_runs, evaluate, regrade, replay
from swarmkit.evals._runs import list_eval_runs, runs_table
from swarmkit.evals._tasks import Domain, TaskSet
from swarmkit.ledger import Ledger
from swarmkit.lowlevel import journal_label
from swarmkit.swarm import Swarm

EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2


async def run_eval_command(args: argparse.Namespace) -> int:
    """Run the command; the exit code says whether the gates held."""
    from swarmkit.cli import UsageError, load_swarm  # noqa: PLC0415 - no cycle at import

    gates = _gates(args.min_pass_hat, UsageError)
    swarm = load_swarm(args.swarm) if args.swarm else None
    location = _journal_location(args.journal, swarm)
    if args.list:
        return await _list_runs(location)
    if not args.tasks:
        raise UsageError(
            "name the tasks: swarmkit eval TASKS --swarm module:attribute (or --list to see "
            "the eval runs a journal holds)"
        )
    tasks = _task_set(args.tasks, args.domain, args.swarm, UsageError)
    if args.regrade or args.replay:
        report = await _stored(args, tasks, swarm, location)
    else:
        if swarm is None:
            raise UsageError("--swarm module:attribute is needed to run or replay an eval")
        report = await _live(args, tasks, swarm, location)
    _emit(report, args.report, args.output)
    if args.compare:
        before = EvalReport.from_data(__import__("json").loads(Path(args.compare).read_text()))
        print(report.compare(before).text(), file=sys.stderr)
    return _verdict(report, args.min_pass_rate, gates)


def _journal_location(option: str | None, swarm: Swarm | None) -> Path | str:
    """--journal, else $SWARMKIT_JOURNAL, else the swarm's own journal, else the default:
    the journal `swarmkit run` would use for the same swarm."""
    from swarmkit.cli import journal_path, swarm_journal_path  # noqa: PLC0415

    return swarm_journal_path(option, swarm) if swarm is not None else journal_path(option)


async def _list_runs(location: Path | str) -> int:
    from swarmkit.cli import open_for_reading  # noqa: PLC0415

    with open_for_reading(location) as journal:
        runs = await list_eval_runs(journal)
    if not runs:
        print(f"no eval runs in {journal_label(location)}")
    else:
        print(runs_table(runs))
        print(f"({plural(len(runs), 'eval run')} in {journal_label(location)})")
    return EXIT_OK


async def _stored(
    args: argparse.Namespace, tasks: TaskSet, swarm: Swarm | None, location: Path | str
) -> EvalReport:
    """Regrade or replay a stored run, refused in one line when the journal lacks it."""
    from swarmkit.cli import UsageError, open_for_reading  # noqa: PLC0415

    run_id = args.regrade or args.replay
    with open_for_reading(location) as journal:
        if run_id not in await eval_runs(journal):
            label = journal_label(location)
            raise UsageError(
                f"no eval run {run_id!r} in {label}; list its runs with: "
                f"swarmkit eval --list --journal {label}"
            )
        if args.regrade:
            return await regrade(run_id, tasks, journal)
        if swarm is None:
            raise UsageError("--swarm module:attribute is needed to run or replay an eval")
        return await replay(run_id, tasks, swarm, journal)


async def _live(
    args: argparse.Namespace, tasks: TaskSet, swarm: Swarm, location: Path | str
) -> EvalReport:
    from swarmkit.cli import open_for_writing  # noqa: PLC0415

    progress = _progress if sys.stderr.isatty() else None
    with open_for_writing(location) as journal:
        return await evaluate(
            tasks,
            _with_ledger(swarm, args.ledger),
            trials=args.trials,
            journal=journal,
            concurrency=args.concurrency,
            run_id=args.run_id,
            progress=progress,
        )


def _with_ledger(swarm: Swarm, where: str | None) -> Swarm:
    """--ledger: ``none`` runs the trials with no ledger; a path or URL keeps the swarm's
    budgets (a ledger with none only records spend) in that store, never the swarm's own."""
    from swarmkit.cli import UsageError  # noqa: PLC0415 - no cycle at import

    if where is None:
        return swarm
    if not where.strip():
        raise UsageError("--ledger takes an SQLite file, a postgresql:// URL or none")
    if where.strip().lower() == "none":
        return swarm.with_ledger(None)
    own = swarm.config.ledger
    return swarm.with_ledger(own.with_store(where) if own is not None else Ledger(where, []))


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
