"""The documentation site: user pages free of our process words, drawings true to the code."""

from __future__ import annotations

import re

import swarmkit.exceptions as errors
from swarmkit.cli._usage import DRAWING_FORMATS
from swarmkit.drawing import FORMATS
from tests.docs.snippets import PROCESS_WORDS, ROOT, pages


def test_user_pages_hold_no_words_of_our_own_process() -> None:
    """No reference-document numbers or issue numbers reach the README or a docs page."""
    found = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()}"
        for page in pages()
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if PROCESS_WORDS.search(line)
    ]
    assert found == []


def test_the_parser_offers_the_drawing_formats_the_drawing_module_has() -> None:
    """`swarmkit draw --format` lists exactly the formats `draw_swarm` accepts."""
    assert DRAWING_FORMATS == FORMATS


def test_the_error_tree_draws_every_error() -> None:
    """The tree in `swarmkit.exceptions`' docstring (the Errors page) names every error class."""
    drawing = (errors.__doc__ or "").split("```text\n", 1)[1].split("```", 1)[0]
    drawn = set(re.findall(r"[├└]── (\w+)", drawing)) | {drawing.split(maxsplit=1)[0]}
    defined = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, errors.SwarmkitError)
    }
    assert drawn == defined
