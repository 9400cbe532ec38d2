"""``--no-train`` with a language model: nothing is trained either way, so the run still fits the learner
(demos drawn, model built, cache opened) and answers exactly as a run without the flag, from its cache."""

from __future__ import annotations

import pytest

from tests.models_llm.test_llm_runs import manifest, read_jsonl

pytestmark = pytest.mark.slow


def test_no_train_answers_as_a_plain_run_and_reuses_its_answers(run_cli, tmp_path) -> None:
    def run(name: str, *more: str):
        out = tmp_path / name
        result = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "--limit", "3", "--set", "shots=1",
                         "-o", out, "--cache", tmp_path / "cache", *more)
        assert result.exit_code == 0, result.output
        return manifest(out / "afqmc")["model_info"], read_jsonl(out / "afqmc" / "predictions" / "dev.jsonl")

    plain, predictions = run("plain")
    untrained, again = run("untrained", "--no-train")
    assert again == predictions and untrained["shots"] == plain["shots"] and len(plain["shots"]["ids"]) == 1
    assert untrained["cache"]["misses"] == 0 and untrained["cache"]["hits"] == plain["cache"]["misses"]
