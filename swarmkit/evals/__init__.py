"""Evaluation of a swarm: tasks over a JSON database, simulated users, k journaled trials per
task, deterministic graders (database, statements, route, milestones, cost) and pass^k; stored
trials are regraded or replayed against changed code with zero model calls.

```python
tasks = load_tasks("tasks.json", domain=DOMAIN)  # a file names no code: the Domain is given
report = await evaluate(tasks, swarm, trials=3, journal=journal)
print(report.table())
again = await regrade(report.run_id, tasks, journal)          # new graders, zero calls
checked = await replay(report.run_id, tasks, swarm, journal)  # new code, zero calls
```
"""

from swarmkit.evals._file_models import task_file_schema
from swarmkit.evals._graders import (
    CostGrader,
    DatabaseGrader,
    Expectation,
    Grade,
    Grader,
    MilestonesGrader,
    RouteGrader,
    StatementsGrader,
    database_diff,
    default_graders,
    grader,
)
from swarmkit.evals._loading import load_tasks, task_from_data
from swarmkit.evals._report import (
    Comparison,
    EvalReport,
    RuleSuggestions,
    SuggestedRule,
    TaskResult,
    TrialResult,
    compare_reports,
    pass_hat_k,
)
from swarmkit.evals._runner import eval_runs, evaluate, regrade, replay, stored_trials
from swarmkit.evals._runs import EvalRun, list_eval_runs
from swarmkit.evals._tasks import (
    Action,
    Database,
    Domain,
    Milestone,
    Outcome,
    Reply,
    Route,
    Task,
    TaskSet,
)
from swarmkit.evals._trial import RouteFacts, StoredTrial, Trial, database_hash
from swarmkit.evals._users import ModelUser, ScriptedUser, User, UserTurn, next_scripted

__all__ = [
    "Action",
    "Comparison",
    "CostGrader",
    "Database",
    "DatabaseGrader",
    "Domain",
    "EvalReport",
    "EvalRun",
    "Expectation",
    "Grade",
    "Grader",
    "Milestone",
    "MilestonesGrader",
    "ModelUser",
    "Outcome",
    "Reply",
    "Route",
    "RouteFacts",
    "RouteGrader",
    "RuleSuggestions",
    "ScriptedUser",
    "StatementsGrader",
    "StoredTrial",
    "SuggestedRule",
    "Task",
    "TaskResult",
    "TaskSet",
    "Trial",
    "TrialResult",
    "User",
    "UserTurn",
    "compare_reports",
    "database_diff",
    "database_hash",
    "default_graders",
    "eval_runs",
    "evaluate",
    "grader",
    "list_eval_runs",
    "load_tasks",
    "next_scripted",
    "pass_hat_k",
    "regrade",
    "replay",
    "stored_trials",
    "task_file_schema",
    "task_from_data",
]
