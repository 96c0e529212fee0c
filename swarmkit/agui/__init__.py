"""swarmkit[ag-ui]: a swarm run streamed to a front end as AG-UI events, over SSE.

Only this package imports ``ag_ui`` (ag-ui-protocol); ``import swarmkit`` never loads it.
"""

from __future__ import annotations

from swarmkit.agui._convert import (
    ATTEMPT_DISCARDED,
    DECISION_SCHEMA,
    HANDOFF,
    HANDOFF_REFUSED,
    AgUiTranslator,
    ag_ui_events,
)
from swarmkit.agui._endpoint import AgUiServer, agui_app

__all__ = [
    "ATTEMPT_DISCARDED",
    "DECISION_SCHEMA",
    "HANDOFF",
    "HANDOFF_REFUSED",
    "AgUiServer",
    "AgUiTranslator",
    "ag_ui_events",
    "agui_app",
]
