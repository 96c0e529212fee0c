"""The API reference: every public name of every public module on a page, in Markdown only."""

from __future__ import annotations

import importlib
import re

from tests.docs.reference import directives, docstrings, public_modules, public_names
from tests.docs.snippets import PROCESS_WORDS

# Sphinx cross-references (:class:`Swarm`, :py:meth:`run`), literal-block markers and directives
# (`::` on a line of its own, `.. note::`): mkdocstrings renders them as they are written.
_RESTRUCTUREDTEXT = re.compile(
    r"(?<![\w:]):(?:py:)?[a-z]+:`|^[ \t]*::[ \t]*$|^[ \t]*\.\. [a-z-]+::", re.MULTILINE
)


def test_every_public_name_of_every_public_module_is_on_the_reference() -> None:
    """Each name a public module exports is rendered by a `:::` block of a reference page."""
    found = directives()
    whole = {d.identifier for d in found if d.members is None or d.members is True}
    listed = {(d.identifier, n) for d in found if isinstance(d.members, list) for n in d.members}
    single = {d.identifier for d in found}
    missing = [
        f"{module}.{name}"
        for module, path in public_modules().items()
        for name in public_names(path)
        if module not in whole and (module, name) not in listed and f"{module}.{name}" not in single
    ]
    assert missing == []


def test_a_members_list_names_every_public_member() -> None:
    """A `:::` block that lists `members:` leaves out none of its target's public names."""
    modules = public_modules()
    incomplete = {}
    for directive in directives():
        if not isinstance(directive.members, list):
            continue
        if directive.identifier in modules:
            public = set(public_names(modules[directive.identifier]))
        else:  # a class: what it defines itself is what mkdocstrings renders of it
            module, _, name = directive.identifier.rpartition(".")
            target = vars(getattr(importlib.import_module(module), name))
            public = {member for member in target if not member.startswith("_")}
        if left_out := sorted(public - set(directive.members)):
            incomplete[f"{directive.page}: {directive.identifier}"] = left_out
    assert incomplete == {}


def test_no_docstring_holds_restructuredtext_markup() -> None:
    """Docstrings cross-reference in Markdown (`[Swarm.run][swarmkit.Swarm.run]`), never RST."""
    assert _found(_RESTRUCTUREDTEXT) == []


def test_no_docstring_holds_words_of_our_own_process() -> None:
    """No reference-document or issue numbers in a docstring the reference may render."""
    assert _found(PROCESS_WORDS) == []


def _found(pattern: re.Pattern[str]) -> list[str]:
    found = []
    for path, line, text in docstrings():
        for match in pattern.finditer(text):
            at = line + text.count("\n", 0, match.start())
            found.append(f"{path}:{at}: {match.group().strip()}")
    return found
