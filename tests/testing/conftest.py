"""The Temporal dev server the kit's Temporal target runs on (the Temporal tests' fixture)."""

from tests.temporal.conftest import temporal_address

__all__ = ["temporal_address"]
