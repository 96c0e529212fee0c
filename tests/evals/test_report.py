"""pass^k and the report's figures, on constructed trial outcomes."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest

from swarmkit.evals import EvalReport, Grade, TaskResult, TrialResult, compare_reports, pass_hat_k


def _trials(task: str, outcomes: str, *, hops: int = 0, rules: int = 0) -> TaskResult:
    """A task whose trials passed (P), failed (F) or drifted (D) in order."""
    status = {"P": "passed", "F": "failed", "D": "drifted"}
    trials = tuple(
        TrialResult(
            task_id=task,
            number=i + 1,
            status=status[o],  # type: ignore[arg-type]
            grades=(Grade(grader="database", passed=o == "P"),) if o != "D" else (),
            hops=hops,
            rule_decided=rules,
            stop_reason="final_output",
            tokens=10,
        )
        for i, o in enumerate(outcomes)
    )
    return TaskResult(task_id=task, trials=trials)


def test_two_passes_of_three_give_two_thirds_one_third_and_zero() -> None:
    """pass^k = C(c,k)/C(n,k): 2 of 3 gives 2/3, 1/3, 0."""
    assert [pass_hat_k(3, 2, k) for k in (1, 2, 3)] == pytest.approx([2 / 3, 1 / 3, 0.0])


def test_pass_hat_k_is_the_mean_over_tasks() -> None:
    """The report's pass^k averages the tasks' figures."""
    report = EvalReport(
        run_id="r",
        mode="live",
        k=4,
        tasks=(_trials("a", "PPPP"), _trials("b", "PPFF"), _trials("c", "FFFF")),
    )
    assert report.pass_hat(1) == pytest.approx((1 + 0.5 + 0) / 3)
    assert report.pass_hat(2) == pytest.approx((1 + 1 / 6 + 0) / 3)
    assert report.pass_hat(4) == pytest.approx(1 / 3)
    assert report.pass_rate == pytest.approx(6 / 12)


def test_drifted_trials_are_not_scored() -> None:
    """A drifted trial leaves n; a task with fewer scored trials than k has no pass^k."""
    report = EvalReport(
        run_id="r", mode="replay", k=3, tasks=(_trials("a", "PPD"), _trials("b", "PFP"))
    )
    assert report.tasks[0].pass_hat(2) == 1.0
    assert report.tasks[0].pass_hat(3) is None
    assert report.pass_hat(3) == 0.0
    assert len(report.drifted) == 1


def test_rule_share_is_rule_decided_over_all_performed_handoffs() -> None:
    """Route metrics: rule-decided handoffs over all handoffs, mean hops per trial."""
    report = EvalReport(
        run_id="r",
        mode="live",
        k=2,
        tasks=(_trials("a", "PP", hops=2, rules=1), _trials("b", "PF", hops=1)),
    )
    metrics = report.route_metrics()
    assert metrics["rule_share"] == pytest.approx(2 / 6)
    assert metrics["mean_hops"] == pytest.approx(1.5)
    assert metrics["stop_reasons"] == {"final_output": 4}


def test_json_round_trips_and_junit_lists_failures() -> None:
    """The JSON report reads back equal; JUnit has a failure per failed trial."""
    report = EvalReport(run_id="r", mode="live", k=3, tasks=(_trials("a", "PFD"),))
    again = EvalReport.from_data(json.loads(report.to_json()))
    assert again == report
    root = ElementTree.fromstring(report.to_junit())
    suite = root.find("testsuite")
    assert suite is not None and suite.get("failures") == "1" and suite.get("errors") == "1"


def test_comparison_says_what_got_better_or_worse() -> None:
    """compare_reports gives the change of each figure and the tasks that moved."""
    before = EvalReport(
        run_id="a", mode="live", k=2, tasks=(_trials("x", "PF"), _trials("y", "PP"))
    )
    after = EvalReport(run_id="b", mode="live", k=2, tasks=(_trials("x", "PP"), _trials("y", "PF")))
    comparison = compare_reports(before, after)
    assert comparison.improved == ("x",) and comparison.regressed == ("y",)
    assert comparison.figures["pass^2"] == pytest.approx((0.5, 0.5))
    assert "better: x" in comparison.text()
