"""What the loop's facts under ``swarm.*`` can hold, for checking conditions that read them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from swarmkit.check._types import Declared


def swarm_facts(agents: Iterable[str], tools: Iterable[str]) -> Mapping[str, Declared]:
    """The declared kinds (and, where known, values) of each ``swarm.*`` fact of a swarm."""
    names = tuple(sorted(agents))
    tool_names = tuple(sorted(set(tools)))
    maybe_text = frozenset({"str", "null"})
    return {
        "agent": Declared(kinds=frozenset({"str"}), values=names),
        "previous_agent": Declared(kinds=maybe_text, values=(*names, None)),
        "handoff_count": Declared(kinds=frozenset({"number"})),
        "turn": Declared(kinds=frozenset({"number"})),
        "last_tool": Declared(kinds=maybe_text, values=(*tool_names, None)),
        "last_tool_ok": Declared(kinds=frozenset({"bool", "null"}), values=(True, False, None)),
        "payload": Declared(kinds=frozenset({"mapping", "null"})),
        "message": Declared(kinds=maybe_text),
        "user_message": Declared(kinds=maybe_text),
        "user_words": Declared(kinds=frozenset({"list", "null"})),
    }
