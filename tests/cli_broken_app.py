"""A module that fails while it is imported, as `swarmkit run tests.cli_broken_app:swarm` sees."""

raise RuntimeError("DATABASE_URL is not set")
