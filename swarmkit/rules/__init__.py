"""Rules learned from the model's journaled routing, and what they would have saved.

``suggest_rules`` reads the model-decided handoffs of a journal, with the context the
HandoffGraph saw before each of those model calls, learns rules in the condition language,
checks them on held-out sessions, and says which it withheld and why; ``whatif`` replays a
journal with proposed rules added, with zero model calls, and ``rerun_changed`` re-runs the
sessions they route differently against the swarm's model, as new labelled sessions. They are
also the ``swarmkit rules`` command. Pure Python, loaded only when used.
"""

from __future__ import annotations

from swarmkit.rules._corpus import (
    CorpusFilter,
    Point,
    Visit,
    held_out,
    read_visits,
    session_visits,
)
from swarmkit.rules._evidence import Evidence, wilson
from swarmkit.rules._judge import with_rules
from swarmkit.rules._live import Rerun, rerun_changed
from swarmkit.rules._promote import DEFAULT_MIN_FIRED, DEFAULT_THRESHOLD, Promotion, promote
from swarmkit.rules._status import Disagreement, RulesStatus, RuleStatus, status
from swarmkit.rules._suggest import (
    CounterExample,
    Inconsistency,
    Suggestion,
    SuggestReport,
    suggest_rules,
)
from swarmkit.rules._whatif import (
    UNKNOWN_AFTER,
    Change,
    SessionWhatIf,
    WhatIfReport,
    load_rules,
    rules_from_data,
    whatif,
)
from swarmkit.rules._withheld import KEPT, Withheld, WithheldReason

__all__ = [
    "DEFAULT_MIN_FIRED",
    "DEFAULT_THRESHOLD",
    "KEPT",
    "UNKNOWN_AFTER",
    "Change",
    "CorpusFilter",
    "CounterExample",
    "Disagreement",
    "Evidence",
    "Inconsistency",
    "Point",
    "Promotion",
    "Rerun",
    "RuleStatus",
    "RulesStatus",
    "SessionWhatIf",
    "SuggestReport",
    "Suggestion",
    "Visit",
    "WhatIfReport",
    "Withheld",
    "WithheldReason",
    "held_out",
    "load_rules",
    "promote",
    "read_visits",
    "rerun_changed",
    "rules_from_data",
    "session_visits",
    "status",
    "suggest_rules",
    "whatif",
    "wilson",
    "with_rules",
]
