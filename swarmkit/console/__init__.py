"""Plain-text views of runs for people: events as they happen, and journaled sessions.

Names load their module on first use, so a listing that needs only ``one_line`` loads no run
machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmkit._lazy import lazy_getattr as _lazy_getattr

if TYPE_CHECKING:
    from swarmkit.console._line import one_line, plural
    from swarmkit.console._live import LiveView
    from swarmkit.console._text import compact_json, result_lines, tokens
    from swarmkit.console._timeline import timeline

__all__ = [
    "LiveView",
    "compact_json",
    "one_line",
    "plural",
    "result_lines",
    "timeline",
    "tokens",
]

_HOMES = {
    "LiveView": "swarmkit.console._live",
    "compact_json": "swarmkit.console._text",
    "one_line": "swarmkit.console._line",
    "plural": "swarmkit.console._line",
    "result_lines": "swarmkit.console._text",
    "timeline": "swarmkit.console._timeline",
    "tokens": "swarmkit.console._text",
}


__getattr__ = _lazy_getattr(__name__, _HOMES)
