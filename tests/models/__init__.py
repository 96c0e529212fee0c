"""Tests of swarmkit.models."""
