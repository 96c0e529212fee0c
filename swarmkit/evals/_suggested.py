"""The rules an eval's trials suggest: the rule learner run on the trials' journaled sessions."""

from __future__ import annotations

from swarmkit.evals._report import RuleSuggestions, SuggestedRule
from swarmkit.exceptions import RuleLearningError
from swarmkit.journal import Journal

MIN_PRECISION = 0.98
"""The held-out precision a rule needs (the learner's default)."""
MIN_SUPPORT = 5
"""The held-out decisions a rule needs: lower than the learner's default of 20, for an eval
holds tens of trials, not thousands of sessions."""


async def suggested_rules(journal: Journal, run_id: str) -> RuleSuggestions:
    """The rules learned from the model's decisions in eval run ``run_id``'s trials; when they
    are too few (or none), the suggestions say so instead."""
    from swarmkit.rules import CorpusFilter, suggest_rules  # noqa: PLC0415 - loaded only when used

    prefix = f"eval-{run_id}-"

    def task_of(session_id: str) -> str:
        # eval-{run}-{task}-{n}, later turns __turn_N: a task's trials repeat one scenario,
        # so they are held out together, or a rule would be checked on copies of its evidence.
        return session_id.removeprefix(prefix).partition("__")[0].rpartition("-")[0]

    try:
        report = await suggest_rules(
            journal,
            min_precision=MIN_PRECISION,
            min_support=MIN_SUPPORT,
            where=CorpusFilter(prefix=prefix),
            held_out_by=task_of,
        )
    except RuleLearningError as exc:
        return RuleSuggestions(note=_short(str(exc)))
    rules = tuple(
        SuggestedRule(
            source=s.source,
            target=s.target,
            when=s.when,
            precision=s.precision,
            support=s.support,
            saved_calls=s.saved_calls,
        )
        for s in report.suggestions
    )
    return RuleSuggestions(decisions=sum(report.decisions.values()), rules=rules)


def _short(reason: str) -> str:
    """The learner's reason, without its advice on command options an eval does not take."""
    return reason.split("; lower --min-support", 1)[0].split(": run the swarm", 1)[0]
