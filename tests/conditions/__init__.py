"""Tests of the condition language, mirroring swarmkit/conditions."""
