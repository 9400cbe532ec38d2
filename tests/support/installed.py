"""Tests that need an optional package skip where it is missing, saying why, but fail under CI.

CI (``CI=true``) installs every test tool with ``make install``; a package missing there is a broken
install step, and a skip would hide it behind a green run.
"""

from __future__ import annotations

import importlib.util
import os

import pytest


def needed(module: str, install: str) -> None:
    """Skip, saying how to install ``module``, where it is missing; under CI fail instead."""
    if importlib.util.find_spec(module) is None:
        message = f"{module} is not installed ({install})"
        if os.environ.get("CI"):
            pytest.fail(f"{message}, but CI installs it with make install")
        pytest.skip(message)
