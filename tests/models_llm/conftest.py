"""Fixtures for the clue-models-llm tests: the memorising model, a byte-level BPE model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.models_llm.memorizer import ALL_TASKS, sample_pairs, train_memorizer


@pytest.fixture(scope="session")
def kernel():
    from clue_core.kernel import Kernel

    return Kernel()


@pytest.fixture(scope="session")
def memorizer(kernel, tmp_path_factory) -> Path:
    """A saved model that answers every sample dev example of every CLUE task (see memorizer.py)."""
    folder = tmp_path_factory.mktemp("memorizer") / "model"
    fit = train_memorizer(sample_pairs(kernel, ALL_TASKS), folder)
    assert fit["accuracy"] == 1.0, fit
    return folder
