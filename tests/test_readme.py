"""The README's quickstart runs as written (with a scripted model in place of the API)."""

from __future__ import annotations

import re
from pathlib import Path

from swarmkit import RunResult
from swarmkit.testing import ScriptedModel, text, tool_call, transfer

README = Path(__file__).resolve().parents[1] / "README.md"


def _quickstart() -> str:
    section = README.read_text(encoding="utf-8").split("## Quickstart", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    return match.group(1)


def test_quickstart_runs_and_hands_off_with_its_typed_payload() -> None:
    """The quickstart's swarm routes by LLM, refunds, and answers."""
    code = _quickstart()
    assert 'model="gpt-4o-mini"' in code
    model = ScriptedModel(
        transfer("billing", invoice_id="INV-7", amount_eur=30.0),
        tool_call("issue_refund", invoice_id="INV-7", amount_eur=30.0),
        text("Refunded 30 EUR."),
    )
    namespace: dict[str, object] = {"__name__": "quickstart", "_model": model}
    exec(compile(code.replace('model="gpt-4o-mini"', "model=_model"), "README", "exec"), namespace)

    result = namespace["result"]
    assert isinstance(result, RunResult)
    assert result.trail == ("triage", "billing")
    assert result.final_output == "Refunded 30 EUR."
    model.assert_exhausted()
