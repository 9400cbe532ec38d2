"""The offline tokenizer equals the official ``nltk.word_tokenize`` call."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from clue_tasks_mrc.word_tokens import _word_tokenize_cached, word_tokenize

GOLDEN = json.loads((Path(__file__).parent / "data" / "official_word_tokenize.json").read_text(encoding="utf-8"))


def _official_available() -> bool:
    import nltk

    try:
        return nltk.tokenize.punkt_model_available("english")
    except Exception:  # a refused or broken model file: treat as absent
        return False


def _random_runs(count: int, seed: int = 7) -> list[str]:
    atoms = [
        "a", "b.", "g.", "u.s.", "mr.", "etc.", "e.g.", "1.", "3.5", "12", "2009.", "no.", "world.", "it's", "don't",
        "cannot", "wanna", "'q'", '"q"', "(x)", "http://a.com/b?c=1", "$3.88", ",", "...", ".", "!", "?", "smith",
        "review", "administrators", "café", "…", "o'clock", "v1.0", "-", "&", "x", "y.",
    ]  # fmt: skip
    rng = random.Random(seed)
    runs = []
    for _ in range(count):
        parts = [rng.choice(atoms) for _ in range(rng.randint(1, 5))]
        runs.append("".join(part + rng.choice([" ", "", "  ", "\n"]) for part in parts).strip() or "a")
    return runs


def test_equal_to_recorded_official_outputs():
    """Outputs recorded from the official call (punkt_tab installed), on a broad set of runs."""
    mismatches = [(text, tokens, list(word_tokenize(text))) for text, tokens in GOLDEN["cases"]]
    mismatches = [m for m in mismatches if m[1] != m[2]]
    assert not mismatches, mismatches[:5]
    assert len(GOLDEN["cases"]) > 100


def test_recorded_set_exercises_sentence_splitting():
    """The data-free shortcut (preserve_line=True) is wrong on some recorded runs, so the set tests Punkt."""
    import nltk

    differing = [text for text, tokens in GOLDEN["cases"] if nltk.word_tokenize(text, preserve_line=True) != tokens]
    assert "hello. world" in differing and "g. baker" not in differing
    assert len(differing) >= 5


def test_plain_words_shortcut_matches_nltk():
    for text in ["1963", "abc", "nexon", "x", "2009", "cannot", "gonna", "wanna", "gimme", "lemme", "gotta", "can"]:
        assert word_tokenize(text) == _word_tokenize_cached(text), text
    assert word_tokenize("cannot") == ("can", "not")


@pytest.mark.skipif(not _official_available(), reason="NLTK punkt_tab model not installed: live comparison skipped")
def test_equal_to_live_official_call_on_random_runs():
    import nltk

    for text in _random_runs(3000):
        assert list(word_tokenize(text)) == nltk.word_tokenize(text), text
