"""The curated public surface of the package."""

import swarmkit


def test_all_is_sorted_and_importable() -> None:
    """`__all__` is sorted and every name in it exists."""
    assert list(swarmkit.__all__) == sorted(swarmkit.__all__)
    for name in swarmkit.__all__:
        assert hasattr(swarmkit, name), name


def test_every_error_descends_from_the_root() -> None:
    """Every exported exception is part of the one error tree."""
    errors = [
        v for v in vars(swarmkit).values() if isinstance(v, type) and issubclass(v, Exception)
    ]
    assert errors
    assert all(issubclass(e, swarmkit.SwarmkitError) for e in errors)


def test_configuration_errors_are_value_errors() -> None:
    """Code that catches ValueError for bad configuration keeps working."""
    assert issubclass(swarmkit.ConfigurationError, ValueError)
    assert issubclass(swarmkit.ConditionSyntaxError, ValueError)
