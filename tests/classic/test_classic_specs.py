"""The task specs of clue-tasks-classic as the kernel and CLI see them."""

from __future__ import annotations

import json
import subprocess
import sys

from clue_tasks_classic import hooks, labels
from clue_tasks_classic.catalog import TASKS
from tests.classic.helpers import REAL_SAMPLES, extract_real, needs_real_samples, raw_records

SUBMISSIONS = {
    "afqmc": {"1.1": ("test", "afqmc_predict.json")},
    "tnews": {"1.1": ("test", "tnews11_predict.json"), "1.0": ("test1.0", "tnews10_predict.json")},
    "iflytek": {"1.1": ("test", "iflytek_predict.json")},
    "ocnli": {"1.1": ("test", "ocnli_50k_predict.json")},
    "cmnli": {"1.1": ("test", "cmnli_predict.json")},
    "cluewsc2020": {"1.1": ("test", "cluewsc11_predict.json"), "1.0": ("test1.0", "cluewsc10_predict.json")},
    "csl": {"1.1": ("test", "csl_predict.json")},
    "diagnostics": {"1.1": ("test", "diagnostics_predict.json")},
}


def test_the_hook_returns_the_seven_tasks_and_diagnostics() -> None:
    assert [spec.name for spec in hooks.clue_tasks()] == list(SUBMISSIONS)


def test_submission_file_names_and_splits_per_test_version() -> None:
    for spec in TASKS:
        got = {t.version: (t.split, t.submission_file) for t in spec.test_versions}
        assert got == SUBMISSIONS[spec.name], spec.name
        assert spec.writer == "jsonl_labels"


def test_scoring_group_and_hyperparameters(spec) -> None:
    assert spec.kind == "classification"
    assert spec.metrics == ("accuracy", "macro_f1") and spec.primary_metric == "accuracy"
    # CLUE 1.1's classification score: AFQMC TNEWS IFLYTEK OCNLI CLUEWSC2020 CSL (OCNLI replaced CMNLI)
    in_score = spec.name in ("afqmc", "tnews", "iflytek", "ocnli", "cluewsc2020", "csl")
    assert spec.group == ("classification" if in_score else None)
    assert {"max_length", "batch_size", "learning_rate", "epochs", "warmup_ratio"} <= set(spec.hyperparameters)
    assert "1e-4" in spec.notes or spec.name == "diagnostics"
    assert spec.splits == (() if spec.name == "diagnostics" else ("train", "dev"))
    assert spec.sample == f"clue_tasks_classic:samples/{spec.name}"


def test_official_sources() -> None:
    for spec in TASKS:
        assert spec.source.url == "https://storage.googleapis.com/cluebenchmark/tasks/" + spec.source.filename
        if spec.name != "ocnli":  # only a partial md5 is known for OCNLI's archive
            assert spec.source.size > 0 and len(spec.source.sha256) == 64
    assert {spec.name: spec.hyperparameters["max_length"] for spec in TASKS}["csl"] == 256


def test_label_sets() -> None:
    assert len(labels.TNEWS) == 15 and "105" not in labels.TNEWS and "111" not in labels.TNEWS
    assert tuple(str(i) for i in range(119)) == labels.IFLYTEK
    assert labels.IFLYTEK_DESCRIPTIONS["11"] == "薅羊毛" and labels.IFLYTEK_DESCRIPTIONS["110"] == "社区超市"


@needs_real_samples
def test_tnews_descriptions_match_the_official_labels_file(tmp_path) -> None:
    root = extract_real("tnews", tmp_path)
    official = {r["label"]: r["label_desc"] for r in raw_records(next(root.rglob("labels.json")))}
    assert official == labels.TNEWS_DESCRIPTIONS
    assert REAL_SAMPLES.is_dir()


def test_hooks_import_nothing_heavy() -> None:
    code = (
        "import sys, clue_tasks_classic.hooks as h; h.clue_tasks(); "
        "print([m for m in ('torch', 'transformers', 'accelerate', 'datasets', 'numpy') if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_cli_lists_the_tasks_from_this_distribution(run_cli) -> None:
    result = run_cli("list", "tasks", "--json")
    assert result.exit_code == 0, result.output
    ours = {row["name"]: row for row in json.loads(result.output) if row["plugin"] == "clue-tasks-classic"}
    assert list(ours) == list(SUBMISSIONS)


def test_cli_info_tnews_shows_both_test_versions(run_cli) -> None:
    result = run_cli("info", "tnews")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any("1.1" in line and "tnews11_predict.json" in line for line in lines)
    assert any("1.0" in line and "test1.0" in line and "tnews10_predict.json" in line for line in lines)
    assert "news_story" in result.output
