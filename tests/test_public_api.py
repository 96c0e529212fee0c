"""The curated public surface of the package."""

import types

import swarmkit
import swarmkit.journal
from swarmkit import InMemoryJournal, RecordingModel, ScriptedModel, SQLiteJournal, testing


def test_all_is_sorted_and_importable() -> None:
    """`__all__` is sorted and every name in it exists."""
    assert list(swarmkit.__all__) == sorted(swarmkit.__all__)
    for name in swarmkit.__all__:
        assert hasattr(swarmkit, name), name


def test_every_error_descends_from_the_root() -> None:
    """Every exported exception is part of the one error tree."""
    values = [getattr(swarmkit, name) for name in swarmkit.__all__]
    errors = [v for v in values if isinstance(v, type) and issubclass(v, Exception)]
    assert errors
    assert all(issubclass(e, swarmkit.SwarmkitError) for e in errors)


def test_configuration_errors_are_value_errors() -> None:
    """Code that catches ValueError for bad configuration keeps working."""
    assert issubclass(swarmkit.ConfigurationError, ValueError)
    assert issubclass(swarmkit.ConditionSyntaxError, ValueError)


def test_journals_and_the_test_kit_import_from_the_top_level() -> None:
    """SQLiteJournal, InMemoryJournal and the testing helpers need no submodule path."""
    assert SQLiteJournal is swarmkit.journal.SQLiteJournal
    assert InMemoryJournal is swarmkit.journal.InMemoryJournal
    assert ScriptedModel is testing.ScriptedModel
    assert RecordingModel is testing.RecordingModel


def test_all_is_exactly_the_public_names() -> None:
    """Every public name of the package is in `__all__`, and nothing else leaks (no typing)."""
    public = {
        name
        for name, value in vars(swarmkit).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    lazy = {"OpenAIModel", "OpenAIResponsesModel", "RetryPolicy"}
    modules = {"filters", "testing"}
    assert public - lazy == set(swarmkit.__all__) - lazy - modules - {"__version__"}
