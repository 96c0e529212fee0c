"""Graders: deterministic checks of a trial's database, words, route, milestones and cost."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from swarmkit.context import RunContext
from swarmkit.evals._tasks import Database, Domain, Task
from swarmkit.evals._trial import Trial, database_hash
from swarmkit.exceptions import ConfigurationError
from swarmkit.limits import CostFunction


@dataclass(frozen=True, kw_only=True, slots=True)
class Grade:
    """One grader's verdict on one trial."""

    grader: str
    """The grader's name."""
    passed: bool
    """Whether the trial passes this grader (always True for one that only scores)."""
    score: float = 1.0
    """Partial credit from 0 to 1."""
    detail: str = ""
    """Why it failed, or what it measured."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Expectation:
    """What a task expects, resolved once per task before its trials are graded."""

    task: Task
    """The task."""
    domain: Domain
    """Its domain."""
    database: Database | None
    """The expected end database (reference actions already replayed), if the task says."""
    database_digest: str | None = field(init=False, default=None, repr=False, compare=False)
    """``database_hash`` of ``database``, computed once here rather than per trial graded."""

    def __post_init__(self) -> None:
        if self.database is not None:
            object.__setattr__(self, "database_digest", database_hash(self.database))


class Grader(Protocol):
    """A check of one trial; ``name`` labels its results in reports."""

    name: str

    def __call__(self, trial: Trial, expected: Expectation) -> Grade:
        """Grade ``trial`` against what its task expects."""
        ...


async def expectation(task: Task, domain: Domain) -> Expectation:
    """Resolve the task's expected database: reference actions run on a fresh copy."""
    outcome = task.outcome
    if outcome is None or (outcome.actions is None and outcome.database is None):
        return Expectation(task=task, domain=domain, database=None)
    if outcome.database is not None:
        return Expectation(task=task, domain=domain, database=dict(outcome.database))
    database = task.initial_database(domain)
    context = RunContext(
        context=dict(task.context),
        agent="reference",
        session_id=f"reference-{task.id}",
        deps=database,
    )
    for action in outcome.actions or ():
        result = await domain.tool(action.tool).invoke(json.dumps(dict(action.arguments)), context)
        if result.is_error:
            raise ConfigurationError(
                f"task {task.id!r}: reference action {action.tool} failed: {result.content}"
            )
    return Expectation(task=task, domain=domain, database=database)


class DatabaseGrader:
    """The end database equals the expected one (hash), or holds the expected subset."""

    name = "database"

    def __call__(self, trial: Trial, expected: Expectation) -> Grade:
        """Compare hashes; on failure, show a structural diff."""
        actual = trial.stored.database
        outcome = expected.task.outcome
        if expected.database is not None and database_hash(actual) != expected.database_digest:
            return Grade(
                grader=self.name,
                passed=False,
                score=0.0,
                detail=diff_text(expected.database, actual),
            )
        if outcome is not None and outcome.subset is not None:
            missing = subset_diff(outcome.subset, actual)
            if missing:
                return Grade(grader=self.name, passed=False, score=0.0, detail="; ".join(missing))
        return Grade(grader=self.name, passed=True)


class StatementsGrader:
    """Every statement the task lists was said by an agent (case-insensitive)."""

    name = "communicated"

    def __call__(self, trial: Trial, expected: Expectation) -> Grade:
        """Look for each statement in the agents' answers."""
        said = "\n".join(trial.facts.answers).lower()
        missing = [s for s in expected.task.communicate if s.lower() not in said]
        wanted = len(expected.task.communicate) or 1
        detail = "not said: " + "; ".join(repr(s) for s in missing) if missing else ""
        return Grade(
            grader=self.name, passed=not missing, score=1 - len(missing) / wanted, detail=detail
        )


class RouteGrader:
    """The route matches: agents visited, rule-decided handoffs, hops, refusals, stop, final."""

    name = "route"

    def __call__(self, trial: Trial, expected: Expectation) -> Grade:
        """Check each part of the task's route that it names."""
        problems = route_problems(trial, expected.task)
        return Grade(
            grader=self.name,
            passed=not problems,
            score=0.0 if problems else 1.0,
            detail="; ".join(problems),
        )


def route_problems(trial: Trial, task: Task) -> list[str]:
    """What of the expected route the trial missed, one phrase each."""
    facts, route = trial.facts, task.route
    problems = [f"{a} never took a turn" for a in route.visits if a not in facts.trail]
    for source, target in route.rule_handoffs:
        decided = [h.decided_by for h in facts.handoffs if (h.source, h.target) == (source, target)]
        if "rule" not in decided:
            how = f"decided by {', '.join(decided)}" if decided else "not performed"
            problems.append(f"handoff {source}->{target} was {how}, not by a rule")
    if route.max_hops is not None and facts.hops > route.max_hops:
        problems.append(f"{facts.hops} hops, at most {route.max_hops} expected")
    if route.stop_reason is not None and facts.stop_reason != route.stop_reason:
        problems.append(f"stopped with {facts.stop_reason}, expected {route.stop_reason}")
    if route.final_agent is not None and facts.final_agent != route.final_agent:
        problems.append(f"ended with {facts.final_agent}, expected {route.final_agent}")
    if not route.refusals_allowed and facts.refusals:
        problems.append(f"refused handoffs: {', '.join(facts.refusals)}")
    return problems


class MilestonesGrader:
    """Partial credit: the share of the task's milestones reached (never fails a trial)."""

    name = "milestones"

    def __call__(self, trial: Trial, expected: Expectation) -> Grade:
        """Score the reached milestones."""
        milestones = expected.task.milestones
        if not milestones:
            return Grade(grader=self.name, passed=True)
        facts, said = trial.facts, "\n".join(trial.facts.answers).lower()
        missed = [
            m.name
            for m in milestones
            if (m.tool is not None and m.tool not in facts.tools)
            or (m.agent is not None and m.agent not in facts.trail)
            or (m.said is not None and m.said.lower() not in said)
            or (m.subset is not None and subset_diff(m.subset, trial.stored.database))
        ]
        score = 1 - len(missed) / len(milestones)
        return Grade(
            grader=self.name,
            passed=True,
            score=score,
            detail="missed: " + ", ".join(missed) if missed else "",
        )


class CostGrader:
    """Tokens and, with a price function, cost; fails only past the task's ``max_tokens``."""

    name = "cost"

    def __init__(self, price: CostFunction | None = None) -> None:
        self.price = price
        """Prices one call from (model name, usage), like ``UsageLimits(cost=...)``."""

    def __call__(self, trial: Trial, expected: Expectation) -> Grade:
        """Measure; compare with the task's token ceiling."""
        tokens = trial.facts.usage.total_tokens
        detail = f"{tokens} tokens"
        if self.price is not None:
            detail += f", cost {trial_cost(trial, self.price):.6g}"
        limit = expected.task.max_tokens
        passed = limit is None or tokens <= limit
        return Grade(
            grader=self.name, passed=passed, detail=detail if passed else f"{detail} > {limit}"
        )


def trial_cost(trial: Trial, price: CostFunction) -> float:
    """The price of every swarm model call of the trial."""
    return sum(price(model, usage) for model, usage in trial.facts.calls)


def default_graders(price: CostFunction | None = None) -> tuple[Grader, ...]:
    """The graders every eval runs unless given others."""
    return (
        DatabaseGrader(),
        StatementsGrader(),
        RouteGrader(),
        MilestonesGrader(),
        CostGrader(price),
    )


NOTHING_RAN = (
    "the user said nothing, so the swarm never ran: a scripted user needs the task's turns, "
    "the first without 'when' opening the dialogue"
)
"""Why a trial with no dialogue fails: there is nothing to grade, and nothing passed."""


def grade(trial: Trial, expected: Expectation, graders: Sequence[Grader]) -> tuple[Grade, ...]:
    """Every grader's verdict; a trial that errored, or in which the swarm never ran, fails an
    ``error`` grade first."""
    grades = tuple(g(trial, expected) for g in graders)
    error = trial.stored.error
    if error is None and not trial.stored.sessions:
        error = NOTHING_RAN
    if error is not None:
        return (Grade(grader="error", passed=False, score=0.0, detail=error), *grades)
    return grades


def subset_diff(
    expected: Mapping[str, Any], actual: Mapping[str, Any], path: str = ""
) -> list[str]:
    """Where ``actual`` does not hold the values ``expected`` names (recursively into objects)."""
    problems: list[str] = []
    for key, want in expected.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in actual:
            problems.append(f"{where}: missing (expected {_short(want)})")
        elif isinstance(want, Mapping) and isinstance(actual[key], Mapping):
            problems.extend(subset_diff(want, actual[key], where))
        elif actual[key] != want:
            problems.append(f"{where}: {_short(actual[key])} != expected {_short(want)}")
    return problems


def database_diff(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Every path where two JSON values differ: added, removed or changed."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        out: list[str] = []
        for key in sorted(set(expected) | set(actual), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in actual:
                out.append(f"- {where}: {_short(expected[key])}")
            elif key not in expected:
                out.append(f"+ {where}: {_short(actual[key])}")
            else:
                out.extend(database_diff(expected[key], actual[key], where))
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [
            d
            for i, (e, a) in enumerate(zip(expected, actual, strict=True))
            for d in database_diff(e, a, f"{path}[{i}]")
        ]
    return (
        []
        if expected == actual
        else [f"~ {path or '(root)'}: {_short(actual)} != expected {_short(expected)}"]
    )


def diff_text(expected: Any, actual: Any) -> str:
    """The structural diff of two databases as one text, most telling lines first."""
    lines = database_diff(expected, actual)
    return (
        "database differs: "
        + "; ".join(lines[:8])
        + (f"; ... {len(lines) - 8} more" if len(lines) > 8 else "")
    )


def _short(value: Any) -> str:
    text = json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def grader(name: str) -> Callable[[Callable[[Trial, Expectation], bool | Grade]], Grader]:
    """Make a grader of a function returning a bool (pass/fail) or a Grade."""

    def wrap(function: Callable[[Trial, Expectation], bool | Grade]) -> Grader:
        return _FunctionGrader(name, function)

    return wrap


class _FunctionGrader:
    def __init__(self, name: str, function: Callable[[Trial, Expectation], bool | Grade]) -> None:
        self.name = name
        self._function = function

    def __call__(self, trial: Trial, expected: Expectation) -> Grade:
        verdict = self._function(trial, expected)
        if isinstance(verdict, Grade):
            return verdict
        return Grade(grader=self.name, passed=bool(verdict), score=1.0 if verdict else 0.0)
