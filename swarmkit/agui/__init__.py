"""swarmkit[ag-ui]: a swarm run streamed to a front end as AG-UI events, over SSE.

Only this package imports ``ag_ui`` (ag-ui-protocol); ``import swarmkit`` never loads it.
"""

from __future__ import annotations

from ag_ui.core import PROTOCOL_VERSION

from swarmkit.agui._convert import (
    ATTEMPT_DISCARDED,
    HANDOFF,
    HANDOFF_REFUSED,
    AgUiTranslator,
    ag_ui_events,
)
from swarmkit.agui._endpoint import AgUiServer, agui_app
from swarmkit.agui._sse import ag_ui_sse
from swarmkit.agui._wire import DECISION_SCHEMA

__all__ = [
    "ATTEMPT_DISCARDED",
    "DECISION_SCHEMA",
    "HANDOFF",
    "HANDOFF_REFUSED",
    "PROTOCOL_VERSION",
    "AgUiServer",
    "AgUiTranslator",
    "ag_ui_events",
    "ag_ui_sse",
    "agui_app",
]
