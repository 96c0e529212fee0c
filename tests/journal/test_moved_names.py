"""Names swarmkit.journal handed to swarmkit.lowlevel still work from it for a release, warning."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import swarmkit.journal
import swarmkit.lowlevel

MOVED = sorted(swarmkit.journal._MOVED_TO_LOWLEVEL)


def _message(name: str) -> str:
    return (
        f"swarmkit.journal.{name} is deprecated since 0.1.0 and will be removed in 0.3.0: "
        "import it from swarmkit.lowlevel"
    )


@pytest.mark.parametrize("name", MOVED)
def test_a_moved_name_still_imports_and_warns_once_at_the_import_line(name: str) -> None:
    """`from swarmkit.journal import X` gives the door's X and one warning naming the line."""
    namespace: dict[str, Any] = {}
    # The user's import, on line 3 of a file of its own, so the warning's place can be checked.
    code = compile(f"\n\nfrom swarmkit.journal import {name}\n", "app.py", "exec")
    with pytest.warns(DeprecationWarning) as caught:
        exec(code, namespace)
    assert [str(w.message) for w in caught] == [_message(name)]
    assert (caught[0].filename, caught[0].lineno) == ("app.py", 3)
    assert namespace[name] is getattr(swarmkit.lowlevel, name)


def test_reading_a_moved_name_as_an_attribute_warns_at_the_caller() -> None:
    """`swarmkit.journal.step_times` works and its warning points at this line."""
    with pytest.warns(DeprecationWarning, match="import it from swarmkit.lowlevel") as caught:
        step_times = swarmkit.journal.step_times
    assert step_times is swarmkit.lowlevel.step_times
    assert caught[0].filename == __file__


def test_moved_names_are_not_in_the_journal_all() -> None:
    """`from swarmkit.journal import *` brings the user-facing names only, and no warning."""
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec("from swarmkit.journal import *", namespace)
    assert not set(MOVED) & set(namespace)
    assert "SQLiteJournal" in namespace


def test_a_name_the_journal_never_had_is_still_an_error() -> None:
    """A misspelt name is an ImportError (AttributeError when read), with no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ImportError, match="step_time"):
            exec("from swarmkit.journal import step_time", {})
        with pytest.raises(AttributeError, match="StepWriters"):
            swarmkit.journal.StepWriters  # noqa: B018
