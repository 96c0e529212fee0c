"""Plain-text views of runs for people: events as they happen, and journaled sessions."""

from swarmkit.console._live import LiveView
from swarmkit.console._text import compact_json, one_line, plural, result_lines, tokens
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
