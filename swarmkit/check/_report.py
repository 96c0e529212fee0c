"""How ``swarmkit check`` shows findings: one block per finding, or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence

from swarmkit.check._finding import Finding


def render_text(findings: Sequence[Finding]) -> str:
    """Each finding as a headline and its fix, then a count; a clean swarm says so."""
    if not findings:
        return "check: no findings\n"
    lines = []
    for finding in findings:
        lines.append(f"{finding.severity}: {finding.code}: {finding.where}")
        lines.append(f"  {finding.message}")
        lines.append(f"  fix: {finding.fix}")
    errors = sum(1 for f in findings if f.severity == "error")
    lines.append(f"check: {errors} error(s), {len(findings) - errors} warning(s)")
    return "\n".join(lines) + "\n"


def render_json(findings: Sequence[Finding]) -> str:
    """The findings as a JSON list of objects."""
    return json.dumps([f.to_data() for f in findings], indent=2) + "\n"


def has_errors(findings: Sequence[Finding]) -> bool:
    """Whether any finding is an error."""
    return any(f.severity == "error" for f in findings)
