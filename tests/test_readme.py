"""The README is a short front door whose quickstart shows the headline and runs as written."""

from __future__ import annotations

import re
from pathlib import Path

from swarmkit import RunResult
from tests.docs.snippets import ROOT, run_page, snippets

README = ROOT / "README.md"


def test_the_readme_stays_short() -> None:
    """At most ~12 KB: what, why, install, two commands, a quickstart and links."""
    assert README.stat().st_size <= 12_500


def test_the_quickstart_fires_a_rule_hands_off_typed_journals_and_replays(tmp_path: Path) -> None:
    """The quickstart's first run is routed by rule, its second by a typed LLM handoff, and
    the journaled session replays to the same answer."""
    namespace = run_page(README, tmp_path)

    by_rule, by_model = namespace["by_rule"], namespace["by_model"]
    assert isinstance(by_rule, RunResult) and isinstance(by_model, RunResult)
    assert by_rule.trail == ("triage", "billing")
    assert by_rule.handoffs[0].decided_by == "rule"
    assert by_model.handoffs[0].decided_by == "llm"
    assert by_model.handoffs[0].payload == {"invoice_id": "INV-9", "amount_eur": 12.5}
    assert {"model_call", "handoff", "tool_call", "run_finished"} <= set(namespace["kinds"])
    assert namespace["replayed"].final_output == "Refunded 12.5 EUR on INV-9."
    namespace["model"].assert_exhausted()


def test_the_readme_says_the_package_index_does_not_have_it_yet() -> None:
    """Install from a checkout or a git URL; `pip install swarmkit-agents` alone finds nothing."""
    text = README.read_text(encoding="utf-8")
    assert "not on the package index yet" in text
    assert "git+" in text
    assert not re.search(r"^pip install swarmkit-agents\s*(#.*)?$", text, re.MULTILINE)


def test_the_readme_has_one_quickstart_block() -> None:
    """One Python block: the quickstart (the rest lives on the site)."""
    assert len(snippets(README)) == 1
