"""The curated public surface of the package."""

import types

import pytest

import swarmkit
import swarmkit.journal
import swarmkit.lowlevel
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
    modules = {"filters", "queues", "testing"}
    assert public - lazy == set(swarmkit.__all__) - lazy - modules - {"__version__"}


@pytest.mark.parametrize("module", [swarmkit.journal, swarmkit.lowlevel], ids=lambda m: m.__name__)
def test_a_submodule_all_is_sorted_and_exactly_its_public_names(module: types.ModuleType) -> None:
    """`__all__` is sorted, each name resolves, and no other public name leaks."""
    assert list(module.__all__) == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public - {"PostgresJournal"} == set(module.__all__) - {"PostgresJournal"}


def test_the_journal_keeps_what_users_need() -> None:
    """Stores, records and export stay in swarmkit.journal; engine-level parts are the door's."""
    assert set(swarmkit.journal.__all__) >= {"SQLiteJournal", "open_journal", "export_jsonl"}
    assert not set(swarmkit.journal.__all__) & set(swarmkit.lowlevel.__all__)
