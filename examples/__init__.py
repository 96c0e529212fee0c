"""Runnable examples; a package so that tests can import them (tests/test_examples.py)."""
