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


def test_the_home_page_links_every_guide() -> None:
    """Each page under docs/guides/ is linked from docs/index.md, so a new guide is found."""
    home = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(guides/([\w-]+\.md)", home))
    assert {page.name for page in (ROOT / "docs" / "guides").glob("*.md")} <= linked


OTHER_PROJECTS = ("swarmstate", "jeevesagent")
"""Projects swarmkit is compatible with, named on user pages: each explained in the glossary."""


def test_other_projects_are_explained_where_user_pages_name_them() -> None:
    """The glossary explains each; the README and every guide or getting-started page that
    names one links its glossary entry, so no reader meets an unexplained name."""
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert all(f"\n## {name}\n" in glossary for name in OTHER_PROJECTS)
    user_pages = [ROOT / "README.md", ROOT / "docs" / "index.md"]
    user_pages += [*(ROOT / "docs" / "guides").glob("*.md")]
    user_pages += [*(ROOT / "docs" / "getting-started").glob("*.md")]
    unexplained = [
        f"{page.relative_to(ROOT)}: {name}"
        for page in user_pages
        for name in OTHER_PROJECTS
        if name in (text := page.read_text(encoding="utf-8").lower())
        and f"glossary.md#{name}" not in text
    ]
    assert unexplained == []


def test_the_glossary_holds_the_terms_the_reports_use() -> None:
    """pass^k, rule share and shadow rule each have an entry the site's search finds."""
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    for term in ("pass^k", "rule share", "shadow rule"):
        assert f"\n## {term}\n" in glossary


def test_docstrings_say_what_another_project_is_where_they_first_name_it() -> None:
    """In each module, the first mention of swarmstate or jeevesagent says what it is (the
    words "a Python"), so the reference never leans on a name a reader does not know."""
    unexplained = []
    for module in sorted((ROOT / "swarmkit").rglob("*.py")):
        text = module.read_text(encoding="utf-8")
        for name in OTHER_PROJECTS:
            at = text.find(name)
            if at != -1 and "a Python" not in text[at : at + 120]:
                unexplained.append(f"{module.relative_to(ROOT)}: {name}")
    assert unexplained == []
