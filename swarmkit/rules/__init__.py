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
from swarmkit.rules._judge import with_rules
from swarmkit.rules._live import Rerun, rerun_changed
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
    "KEPT",
    "UNKNOWN_AFTER",
    "Change",
    "CorpusFilter",
    "CounterExample",
    "Inconsistency",
    "Point",
    "Rerun",
    "SessionWhatIf",
    "SuggestReport",
    "Suggestion",
    "Visit",
    "WhatIfReport",
    "Withheld",
    "WithheldReason",
    "held_out",
    "load_rules",
    "read_visits",
    "rerun_changed",
    "rules_from_data",
    "session_visits",
    "suggest_rules",
    "whatif",
    "with_rules",
]
