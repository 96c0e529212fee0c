"""The eval report: pass^k per task, graders, route metrics (the share of handoffs rules decided,
and the rules the trials suggest), tokens; as a table, JSON, JUnit."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from math import comb
from typing import Any, Literal
from xml.etree import ElementTree

from swarmkit.evals._graders import Grade

Mode = Literal["live", "regrade", "replay"]
"""How an eval's trials were obtained: run now, stored and regraded, or stored and replayed."""

Status = Literal["passed", "failed", "drifted"]
"""A trial's verdict; a drifted trial (replay met changed requests) is never scored."""


def pass_hat_k(trials: int, passed: int, k: int) -> float:
    """The chance that k trials drawn without replacement from n all pass: C(c,k) / C(n,k)."""
    if not 0 < k <= trials or not 0 <= passed <= trials:
        raise ValueError(
            f"pass^k needs 0 < k <= n and 0 <= c <= n, got n={trials} c={passed} k={k}"
        )
    return comb(passed, k) / comb(trials, k)


@dataclass(frozen=True, kw_only=True, slots=True)
class TrialResult:
    """One trial's verdict and what it cost."""

    task_id: str
    """The task."""
    number: int
    """The trial's number within the task (1-based)."""
    status: Status
    """passed, failed or drifted."""
    grades: tuple[Grade, ...] = ()
    """Every grader's verdict (empty for a drifted trial)."""
    sessions: tuple[str, ...] = ()
    """The swarm's journaled sessions (open them in the viewer)."""
    hops: int = 0
    """Handoffs performed."""
    rule_decided: int = 0
    """Of those, decided by a rule."""
    stop_reason: str | None = None
    """How the last run stopped."""
    tokens: int = 0
    """Total tokens of the swarm's model calls."""
    cost: float | None = None
    """Their price, when a price function was given."""
    detail: str = ""
    """Why it failed, or the divergence diff of a drifted trial."""

    @property
    def passed(self) -> bool:
        """Whether the trial passed."""
        return self.status == "passed"


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskResult:
    """A task's trials and its pass^k."""

    task_id: str
    """The task."""
    trials: tuple[TrialResult, ...]
    """Its trials, by number."""

    @property
    def scored(self) -> tuple[TrialResult, ...]:
        """The trials that were scored (not drifted)."""
        return tuple(t for t in self.trials if t.status != "drifted")

    def pass_hat(self, k: int) -> float | None:
        """pass^k over the scored trials; None when fewer than k were scored."""
        scored = self.scored
        if k > len(scored):
            return None
        return pass_hat_k(len(scored), sum(t.passed for t in scored), k)


@dataclass(frozen=True, kw_only=True, slots=True)
class EvalReport:
    """Everything an eval run measured."""

    run_id: str
    """The eval run (its trials' sessions are tagged with it)."""
    mode: Mode
    """live, regrade or replay."""
    tasks: tuple[TaskResult, ...]
    """Per task."""
    k: int = 1
    """Trials per task."""
    model_calls: int | None = None
    """Model calls made while producing the report (0 for regrade and replay)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Anything else worth keeping (the source run of a regrade or replay)."""
    suggested_rules: RuleSuggestions | None = None
    """The rules the learner suggests from the trials' model decisions (``None``: not looked
    for, as in a report stored before they were)."""

    @property
    def trials(self) -> tuple[TrialResult, ...]:
        """Every trial, task by task."""
        return tuple(t for task in self.tasks for t in task.trials)

    def pass_hat(self, k: int) -> float | None:
        """pass^k: the mean over tasks with at least k scored trials (None if there are none)."""
        values = [v for v in (task.pass_hat(k) for task in self.tasks) if v is not None]
        return sum(values) / len(values) if values else None

    @property
    def pass_rate(self) -> float:
        """Passed trials over scored trials."""
        scored = [t for task in self.tasks for t in task.scored]
        return sum(t.passed for t in scored) / len(scored) if scored else 0.0

    @property
    def drifted(self) -> tuple[TrialResult, ...]:
        """Trials replay found changed."""
        return tuple(t for t in self.trials if t.status == "drifted")

    def route_metrics(self) -> dict[str, Any]:
        """Share of handoffs decided by rules, mean hops, stop reasons (scored trials)."""
        scored = [t for task in self.tasks for t in task.scored]
        hops = sum(t.hops for t in scored)
        return {
            "rule_share": sum(t.rule_decided for t in scored) / hops if hops else None,
            "mean_hops": hops / len(scored) if scored else 0.0,
            "stop_reasons": dict(sorted(Counter(str(t.stop_reason) for t in scored).items())),
        }

    def grader_pass_rates(self) -> dict[str, float]:
        """Per grader: the share of scored trials it passed."""
        counts: dict[str, list[int]] = {}
        for trial in self.trials:
            for g in trial.grades:
                counts.setdefault(g.grader, [0, 0])
                counts[g.grader][0] += g.passed
                counts[g.grader][1] += 1
        return {name: ok / total for name, (ok, total) in sorted(counts.items())}

    @property
    def tokens(self) -> int:
        """Tokens over every trial."""
        return sum(t.tokens for t in self.trials)

    @property
    def cost(self) -> float | None:
        """Cost over every trial, when priced."""
        costs = [t.cost for t in self.trials if t.cost is not None]
        return sum(costs) if costs else None

    def summary(self) -> dict[str, Any]:
        """The headline figures."""
        return {
            "pass_rate": self.pass_rate,
            "pass_hat": {str(k): self.pass_hat(k) for k in range(1, self.k + 1)},
            "graders": self.grader_pass_rates(),
            "route": self.route_metrics(),
            "tokens": self.tokens,
            "cost": self.cost,
            "drifted": len(self.drifted),
        }

    def to_data(self) -> dict[str, Any]:
        """JSON-safe data; ``EvalReport.from_data`` reads it back."""
        tasks = [
            {
                "task_id": task.task_id,
                "pass_hat": {str(k): task.pass_hat(k) for k in range(1, self.k + 1)},
                "trials": [
                    {**asdict(t), "grades": [asdict(g) for g in t.grades]} for t in task.trials
                ],
            }
            for task in self.tasks
        ]
        head = {
            "run_id": self.run_id,
            "mode": self.mode,
            "k": self.k,
            "model_calls": self.model_calls,
        }
        data = {**head, "summary": self.summary(), "tasks": tasks, "extra": dict(self.extra)}
        if self.suggested_rules is not None:
            data["suggested_rules"] = self.suggested_rules.to_data()
        return data

    def to_json(self) -> str:
        """The report as JSON text."""
        return json.dumps(self.to_data(), indent=2, sort_keys=False)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> EvalReport:
        """The report ``to_data`` described."""
        tasks = tuple(
            TaskResult(
                task_id=t["task_id"],
                trials=tuple(
                    TrialResult(
                        **{
                            **trial,
                            "grades": tuple(Grade(**g) for g in trial["grades"]),
                            "sessions": tuple(trial["sessions"]),
                        }
                    )
                    for trial in t["trials"]
                ),
            )
            for t in data["tasks"]
        )
        return cls(
            run_id=data["run_id"],
            mode=data["mode"],
            tasks=tasks,
            k=data["k"],
            model_calls=data.get("model_calls"),
            extra=data.get("extra") or {},
            suggested_rules=RuleSuggestions.from_data(data["suggested_rules"])
            if isinstance(data.get("suggested_rules"), Mapping)
            else None,
        )

    def to_junit(self) -> str:
        """JUnit XML: a test suite per task, a test case per trial (drifted ones as errors)."""
        root = ElementTree.Element("testsuites", name=f"swarmkit eval {self.run_id}")
        for task in self.tasks:
            failures = sum(t.status == "failed" for t in task.trials)
            errors = sum(t.status == "drifted" for t in task.trials)
            suite = ElementTree.SubElement(
                root,
                "testsuite",
                name=task.task_id,
                tests=str(len(task.trials)),
                failures=str(failures),
                errors=str(errors),
            )
            for trial in task.trials:
                case = ElementTree.SubElement(
                    suite, "testcase", classname=task.task_id, name=f"trial {trial.number}"
                )
                properties = ElementTree.SubElement(case, "properties")
                for session in trial.sessions:
                    ElementTree.SubElement(properties, "property", name="session", value=session)
                if trial.status == "failed":
                    failed = [g for g in trial.grades if not g.passed]
                    message = "; ".join(f"{g.grader}: {g.detail}" for g in failed)
                    ElementTree.SubElement(case, "failure", message=message[:500]).text = message
                elif trial.status == "drifted":
                    ElementTree.SubElement(case, "error", message="drifted").text = trial.detail
                out = ElementTree.SubElement(case, "system-out")
                out.text = "sessions: " + (" ".join(trial.sessions) or "none")
        return ElementTree.tostring(root, encoding="unicode")

    def table(self) -> str:
        """A plain-text table for a terminal: per task pass^k, then the totals."""
        ks = range(1, self.k + 1)
        head = (
            f"{'task':<28} {'passed':>7} "
            + " ".join(f"{'pass^' + str(k):>7}" for k in ks)
            + f" {'hops':>5} {'tokens':>7}"
        )
        lines = [head, "-" * len(head)]
        for task in self.tasks:
            scored = task.scored
            passed = f"{sum(t.passed for t in scored)}/{len(scored)}"
            hats = " ".join(_figure(task.pass_hat(k)) for k in ks)
            hops = sum(t.hops for t in task.trials) / max(len(task.trials), 1)
            tokens = sum(t.tokens for t in task.trials)
            lines.append(f"{task.task_id[:28]:<28} {passed:>7} {hats} {hops:>5.1f} {tokens:>7}")
        lines.append("-" * len(head))
        lines.append(
            f"{'all tasks':<28} {self.pass_rate:>7.1%} "
            + " ".join(_figure(self.pass_hat(k)) for k in ks)
        )
        route = self.route_metrics()
        share = route["rule_share"]
        shown = "-" if share is None else f"{share:.0%}"
        lines.append(
            f"rule-decided handoffs {shown}, mean hops {route['mean_hops']:.2f}, "
            f"stops {route['stop_reasons']}, tokens {self.tokens}"
            + (f", cost {self.cost:.6g}" if self.cost is not None else "")
        )
        for name, rate in self.grader_pass_rates().items():
            lines.append(f"  grader {name:<14} {rate:.1%}")
        if self.suggested_rules is not None:
            lines.extend(self.suggested_rules.lines())
        lines += [_problem_line(trial) for trial in self.trials if trial.status != "passed"]
        return "\n".join(lines)

    def compare(self, before: EvalReport) -> Comparison:
        """What got better or worse since ``before``, and by how much."""
        return compare_reports(before, self)


def _problem_line(trial: TrialResult) -> str:
    """A failed or drifted trial in one line: why, and the sessions to open."""
    first = trial.detail.splitlines()[0] if trial.detail else "no reason recorded"
    sessions = f" [sessions: {', '.join(trial.sessions)}]" if trial.sessions else ""
    return f"{trial.status.upper()} {trial.task_id} trial {trial.number}: {first}{sessions}"


def _figure(value: float | None) -> str:
    return f"{'-':>7}" if value is None else f"{value:>7.3f}"


@dataclass(frozen=True, kw_only=True, slots=True)
class Comparison:
    """Two reports side by side: the change of each headline figure and of each task."""

    figures: Mapping[str, tuple[float | None, float | None]]
    """Headline figure -> (before, after)."""
    improved: tuple[str, ...]
    """Tasks whose pass^1 went up."""
    regressed: tuple[str, ...]
    """Tasks whose pass^1 went down."""

    def text(self) -> str:
        """A few lines for a terminal."""
        lines = []
        for name, (old, new) in self.figures.items():
            delta = "" if old is None or new is None else f" ({new - old:+.3f})"
            lines.append(f"{name:<16} {_plain(old)} -> {_plain(new)}{delta}")
        lines.append("better: " + (", ".join(self.improved) or "none"))
        lines.append("worse:  " + (", ".join(self.regressed) or "none"))
        return "\n".join(lines)


def _plain(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def compare_reports(before: EvalReport, after: EvalReport) -> Comparison:
    """The change from ``before`` to ``after``."""
    k = min(before.k, after.k)
    figures: dict[str, tuple[float | None, float | None]] = {
        "pass_rate": (before.pass_rate, after.pass_rate)
    }
    for i in range(1, k + 1):
        figures[f"pass^{i}"] = (before.pass_hat(i), after.pass_hat(i))
    figures["rule_share"] = (
        before.route_metrics()["rule_share"],
        after.route_metrics()["rule_share"],
    )
    figures["mean_hops"] = (before.route_metrics()["mean_hops"], after.route_metrics()["mean_hops"])
    figures["tokens"] = (float(before.tokens), float(after.tokens))
    old = {t.task_id: t.pass_hat(1) for t in before.tasks}
    improved, regressed = [], []
    for task in after.tasks:
        was, now = old.get(task.task_id), task.pass_hat(1)
        if was is not None and now is not None and now > was:
            improved.append(task.task_id)
        elif was is not None and now is not None and now < was:
            regressed.append(task.task_id)
    return Comparison(figures=figures, improved=tuple(improved), regressed=tuple(regressed))


def group_trials(trials: Sequence[TrialResult], task_ids: Sequence[str]) -> tuple[TaskResult, ...]:
    """Trials grouped by task, in the task order given, each by number."""
    by_task: dict[str, list[TrialResult]] = {t: [] for t in task_ids}
    for trial in trials:
        by_task.setdefault(trial.task_id, []).append(trial)
    return tuple(
        TaskResult(task_id=t, trials=tuple(sorted(v, key=lambda r: r.number)))
        for t, v in by_task.items()
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class SuggestedRule:
    """A rule the learner proposes from an eval's trial sessions, with its held-out evidence."""

    source: str
    """The agent it routes from."""
    target: str
    """The agent it hands off to."""
    when: str
    """The condition, in the HandoffGraph's language."""
    precision: float
    """On held-out trial sessions: the share of the decisions it takes the model made the same."""
    support: int
    """On held-out trial sessions: how many model decisions it takes."""
    saved_calls: int
    """In all the trials: the model calls it would have saved where it agrees with the model."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleSuggestions:
    """What the rule learner found in an eval's trials: its rules, or why there are none."""

    decisions: int = 0
    """Model decisions (handoffs, and answers where a handoff was offered) in the trials."""
    rules: tuple[SuggestedRule, ...] = ()
    """The rules that met the thresholds on held-out trials."""
    note: str = ""
    """Why no rule could be learned (too few decisions, ...); empty when the learner ran."""

    def lines(self) -> list[str]:
        """The report's lines for a terminal."""
        if self.note:
            return [f"suggested rules: none ({self.note})"]
        if not self.rules:
            return [f"suggested rules: none met the thresholds ({self.decisions} model decisions)"]
        found = [f"suggested rules ({self.decisions} model decisions in the trials):"]
        for rule in self.rules:
            found.append(
                f"  {rule.source} -> {rule.target} when {rule.when}  (held-out precision "
                f"{rule.precision:.0%} of {rule.support}, saves {rule.saved_calls} calls)"
            )
        return found

    def to_data(self) -> dict[str, Any]:
        """JSON-safe data; ``RuleSuggestions.from_data`` reads it back."""
        rules = [asdict(rule) for rule in self.rules]
        return {"decisions": self.decisions, "rules": rules, "note": self.note}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> RuleSuggestions:
        """The suggestions ``to_data`` described."""
        rules = tuple(SuggestedRule(**rule) for rule in data.get("rules") or ())
        return cls(decisions=data.get("decisions", 0), rules=rules, note=data.get("note", ""))
