"""Helpers shared by the test suites (import as ``tests.support...``)."""
