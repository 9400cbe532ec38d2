"""hf-tiny (a BERT with a masked-LM head, built from a config) end to end on every FewCLUE task's
sample: PET prompt fine-tuning (``--set method=pet``) on the eight classification tasks, the
multiple-choice head on CHID, which PET's label verbalisers do not cover; each run scores dev
and test_public and writes its leaderboard file."""

from __future__ import annotations

import json

import pytest

CLASSIFICATION = ("fewclue-eprstmt", "fewclue-csldcp", "fewclue-tnews", "fewclue-iflytek", "fewclue-ocnli",
                  "fewclue-bustm", "fewclue-csl", "fewclue-cluewsc")
FAST = ("--set", "epochs=1", "--set", "progress=false", "--limit", "8")


def _check(run_dir, task: str) -> None:
    run = run_dir / task
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["scored_splits"] == ["test_public"] and "accuracy" in metrics["test_public"]
    assert "accuracy" in metrics["dev"] and metrics["partial"] is True
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert all((run / "submission" / name).is_file() for name in manifest["submission_files"])


@pytest.mark.slow
def test_pet_trains_hf_tiny_on_every_classification_task(run_cli, tmp_path):
    result = run_cli("run", *CLASSIFICATION, "--model", "hf-tiny", "--sample", "-o", tmp_path, "--set",
                     "method=pet", *FAST)
    assert result.exit_code == 0, result.output
    for task in CLASSIFICATION:
        _check(tmp_path, task)
        manifest = json.loads((tmp_path / task / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["settings"]["method"] == "pet"


@pytest.mark.slow
def test_hf_tiny_fine_tunes_chid_and_pet_says_why_it_does_not(run_cli, tmp_path):
    result = run_cli("run", "fewclue-chid", "--model", "hf-tiny", "--sample", "-o", tmp_path, *FAST)
    assert result.exit_code == 0, result.output
    _check(tmp_path, "fewclue-chid")
    refused = run_cli("run", "fewclue-chid", "--model", "hf-tiny", "--sample", "-o", tmp_path / "pet", "--set",
                      "method=pet", *FAST)
    assert refused.exit_code == 2 and "method=pet" in refused.output and "multiple_choice" in refused.output
    assert not (tmp_path / "pet").exists()
