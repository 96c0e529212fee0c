"""The documentation site: reference pages complete, user pages free of our process words."""

from __future__ import annotations

import re

import swarmkit
from swarmkit.cli._usage import DRAWING_FORMATS
from swarmkit.drawing import FORMATS
from tests.docs.snippets import ROOT, pages

API_PAGES = sorted((ROOT / "docs" / "reference").glob("*.md"))


def test_every_public_name_is_in_the_api_reference() -> None:
    """Each name of `swarmkit.__all__` has its own `::: swarmkit.NAME` entry."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in API_PAGES)
    missing = [
        name
        for name in swarmkit.__all__
        if name != "__version__" and f"::: swarmkit.{name}\n" not in text
    ]
    assert missing == []
    assert "swarmkit.__version__" in text


def test_user_pages_hold_no_words_of_our_own_process() -> None:
    """No reference-document numbers or issue numbers reach the README or a docs page."""
    process = re.compile(r"\bseeds? 00\d|\bissue #?\d+|\bseed-00\d", re.IGNORECASE)
    found = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()}"
        for page in pages()
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if process.search(line)
    ]
    assert found == []


def test_the_parser_offers_the_drawing_formats_the_drawing_module_has() -> None:
    """`swarmkit draw --format` lists exactly the formats `draw_swarm` accepts."""
    assert DRAWING_FORMATS == FORMATS
