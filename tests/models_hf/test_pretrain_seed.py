"""``clue-core pretrain --seed`` outside 0..2**32-1: accelerate's set_seed raised numpy's ValueError
as a traceback, leaving OUT/.pretrain.lock, data/ and pretrain.json behind; now it is refused
before anything is written."""

from __future__ import annotations

import pytest

from .conftest import invoke
from .pretrain_samples import write_corpus


@pytest.mark.parametrize("seed", ["-5", "4294967296"])
def test_a_seed_numpy_refuses_is_refused_before_anything_is_written(tmp_path, seed) -> None:
    """accelerate's set_seed raised numpy's ValueError as a traceback, leaving OUT/.pretrain.lock,
    data/ and pretrain.json behind."""
    corpus = write_corpus(tmp_path / "corpus")
    result = invoke("pretrain", "--corpus", corpus, "-m", "hf-tiny", "-o", tmp_path / "out", "--seed", seed)
    assert result.exit_code == 2, result.output
    assert f"Error: Invalid value for '--seed': {seed} is not in the range 0<=x<=4294967295." in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_pretrain_from_python_refuses_the_seed_too(tmp_path) -> None:
    from clue_core.plugin import ClueError
    from clue_models_hf.pretrain import pretrain

    corpus = write_corpus(tmp_path / "corpus")
    with pytest.raises(ClueError, match=r"^seed must be a whole number from 0 to 4294967295, got -5$"):
        pretrain(corpus, "hf-tiny", tmp_path / "out", seed=-5)
    assert not (tmp_path / "out").exists()
