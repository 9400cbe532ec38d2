"""The task specs of clue-tasks-classic as the kernel and CLI see them."""

from __future__ import annotations

import ast
import dataclasses
import json
import string
import subprocess
import sys
from pathlib import Path

import pytest

from clue_core.checks import spec_problems
from clue_core.kernel import Kernel
from clue_core.specs import Leaderboard, PublishedScore
from clue_tasks_classic import hooks, labels
from clue_tasks_classic.catalog import TASKS, task
from clue_tasks_classic.published import PUBLISHED
from tests.classic.helpers import REAL_SAMPLES, extract_real, needs_real_samples, raw_records

PLUGIN_ROOT = Path(__file__).resolve().parents[2] / "plugins" / "clue-tasks-classic"
CLUE_11 = Leaderboard("CLUE 1.1", "classification")
CLUE_10 = Leaderboard("CLUE 1.0", "classification")
LEADERBOARDS = {
    "afqmc": (CLUE_11, CLUE_10),
    "tnews": (CLUE_11, CLUE_10),
    "iflytek": (CLUE_11, CLUE_10),
    "ocnli": (CLUE_11,),
    "cmnli": (CLUE_10,),
    "cluewsc2020": (CLUE_11, CLUE_10),
    "csl": (CLUE_11, CLUE_10),
    "diagnostics": (),
}
#: Today's recommended values (the golden outputs were recorded with them); CMNLI's batch
#: size is the CLUE baseline's 64 (bs64 ep2 lr3e-5).
RECOMMENDED = {
    "afqmc": (128, 32, 2e-5, 3),
    "tnews": (128, 32, 2e-5, 3),
    "iflytek": (128, 32, 2e-5, 3),
    "ocnli": (128, 32, 3e-5, 5),
    "cmnli": (128, 64, 3e-5, 2),
    "cluewsc2020": (128, 16, 2e-5, 50),
    "csl": (256, 16, 1e-5, 5),
    "diagnostics": (128, 32, 3e-5, 2),
}

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


def test_leaderboards_and_recommendations(spec) -> None:
    assert spec.kind == "classification"
    assert spec.metrics == ("accuracy", "macro_f1") and spec.primary_metric == "accuracy"
    # CLUE 1.1's classification score: AFQMC TNEWS IFLYTEK OCNLI CLUEWSC2020 CSL; CLUE 1.0's has CMNLI for OCNLI
    assert spec.leaderboards == LEADERBOARDS[spec.name]
    max_length, batch_size, learning_rate, epochs = RECOMMENDED[spec.name]
    assert dict(spec.recommendations) == {"max_length": max_length, "batch_size": batch_size,
                                          "learning_rate": learning_rate, "epochs": epochs, "warmup_ratio": 0.1}
    assert "1e-4" in spec.notes or spec.name == "diagnostics"
    assert spec.splits == (() if spec.name == "diagnostics" else ("train", "dev"))
    assert spec.sample == f"clue_tasks_classic:samples/{spec.name}"


def test_official_sources() -> None:
    for spec in TASKS:
        assert spec.source.url == "https://storage.googleapis.com/cluebenchmark/tasks/" + spec.source.filename
        if spec.name != "ocnli":  # only a partial md5 is known for OCNLI's archive
            assert spec.source.size > 0 and len(spec.source.sha256) == 64
    assert {spec.name: spec.recommendations["max_length"] for spec in TASKS}["csl"] == 256


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


def test_the_kernel_accepts_every_spec_and_tuple_fields_are_tuples() -> None:
    kernel = Kernel(entrypoints=True, strict=False, disabled=())
    for spec in TASKS:
        assert kernel.tasks[spec.name] == spec
        assert spec_problems(kernel, "tasks", spec) == [], spec.name
        for name in ("labels", "metrics", "leaderboards", "splits", "test_versions", "data_files",
                     "decode_settings", "settings", "published"):
            assert isinstance(getattr(spec, name), tuple), (spec.name, name)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_plugin_code_imports_only_the_public_api_of_clue_core() -> None:
    files = [*sorted((PLUGIN_ROOT / "clue_tasks_classic").glob("*.py")), *sorted((PLUGIN_ROOT / "tools").glob("*.py"))]
    assert len(files) >= 9
    for path in files:
        kernel = {name for name in _imports(path) if name.split(".")[0] == "clue_core"}
        assert kernel <= {"clue_core.plugin"}, f"{path.name} imports {sorted(kernel)}"


# -- prompts -------------------------------------------------------------------------------

VERBALIZERS = {
    "afqmc": {"0": "不同", "1": "相同"},
    "csl": {"0": "否", "1": "是"},
    "cluewsc2020": {"false": "否", "true": "是"},
    "ocnli": {"entailment": "蕴含", "neutral": "中立", "contradiction": "矛盾"},
    "cmnli": {"entailment": "蕴含", "neutral": "中立", "contradiction": "矛盾"},
    "diagnostics": {"entailment": "蕴含", "neutral": "中立", "contradiction": "矛盾"},
    "tnews": {"100": "故事", "101": "文化", "102": "娱乐", "103": "体育", "104": "财经", "106": "房产",
              "107": "汽车", "108": "教育", "109": "科技", "110": "军事", "112": "旅游", "113": "国际",
              "114": "证券", "115": "农业", "116": "电竞"},
}


def test_every_task_has_a_chinese_prompt_whose_verbalizers_cover_its_labels(spec) -> None:
    prompt = spec.prompt
    assert prompt is not None
    assert set(prompt.verbalizers) == set(spec.labels)
    words = list(prompt.verbalizers.values())
    assert len(set(words)) == len(words) and all(words)
    assert any("\u4e00" <= char <= "\u9fff" for char in prompt.instruction)
    fields = {name for _, name, _, _ in string.Formatter().parse(prompt.template) if name}
    assert "text" in fields and fields <= {"text", "text_pair"}
    example = prompt.template.format(text="甲", text_pair="乙")
    assert "甲" in example
    if spec.name in VERBALIZERS:
        assert dict(prompt.verbalizers) == VERBALIZERS[spec.name]


def test_pair_tasks_show_both_texts_and_single_text_tasks_one() -> None:
    for name in ("afqmc", "ocnli", "cmnli", "diagnostics", "csl"):
        assert "{text_pair}" in task(name).prompt.template, name
    for name in ("tnews", "iflytek", "cluewsc2020"):
        assert "{text_pair}" not in task(name).prompt.template, name


def test_tnews_and_iflytek_prompts_name_their_categories() -> None:
    tnews, iflytek = task("tnews").prompt, task("iflytek").prompt
    assert tnews.verbalizers == labels.TNEWS_NAMES
    assert all(word in tnews.instruction for word in tnews.verbalizers.values())
    assert dict(iflytek.verbalizers) == labels.IFLYTEK_DESCRIPTIONS and len(iflytek.verbalizers) == 119
    assert iflytek.verbalizers["11"] == "薅羊毛"
    assert all(word in iflytek.instruction for word in iflytek.verbalizers.values())


def test_the_kernel_refuses_a_prompt_that_misses_a_label() -> None:
    kernel = Kernel(entrypoints=True, strict=False, disabled=())
    spec = task("afqmc")
    broken = dataclasses.replace(spec, prompt=dataclasses.replace(spec.prompt, verbalizers={"1": "相同"}))
    assert "prompt verbalizers miss labels 0" in spec_problems(kernel, "tasks", broken)


# -- published scores ----------------------------------------------------------------------

def test_published_scores_have_a_split_a_version_a_metric_and_a_source(spec) -> None:
    assert spec.published == PUBLISHED[spec.name]
    for score in spec.published:
        assert isinstance(score, PublishedScore)
        assert score.split in {"dev", "test"}
        assert score.version in {"1.0", "1.1"}
        assert score.metric == spec.primary_metric == "accuracy"
        assert score.mode == "fine-tuned" and score.shots is None
        assert 0 < score.value <= 100
        assert score.source.startswith("https://github.com/") and len(score.source.split()) >= 2
    keys = [(s.model, s.split, s.version, s.metric, s.source) for s in spec.published]
    assert len(set(keys)) == len(keys), spec.name


def _value(name: str, model: str, split: str, version: str, source_part: str) -> float:
    [score] = [s for s in task(name).published
               if (s.model, s.split, s.version) == (model, split, version) and source_part in s.source]
    return score.value


def test_published_scores_follow_the_sources() -> None:
    # CLUE 1.0 leaderboard (test): six tasks, CMNLI in, OCNLI out
    assert _value("cmnli", "BERT-base", "test", "1.0", "CLUEbenchmark/CLUE") == 79.69
    assert _value("tnews", "RoBERTa-wwm-large", "test", "1.0", "排行榜") == 58.61
    assert _value("cluewsc2020", "ALBERT-tiny", "test", "1.0", "排行榜") == 58.5
    assert not [s for s in task("ocnli").published if s.version == "1.0"]
    assert len([s for s in task("afqmc").published if "排行榜" in s.source]) == 12
    # the per-task tables: dev numbers, and CSL's test numbers that differ from the leaderboard's
    assert _value("afqmc", "BERT-base", "dev", "1.0", "per-task") == 74.16
    assert _value("iflytek", "RoBERTa-wwm-ext", "dev", "1.0", "per-task") == 60.8
    assert _value("csl", "BERT-base", "test", "1.0", "per-task") == 80.23
    assert _value("csl", "BERT-base", "test", "1.0", "排行榜") == 80.36
    assert not [s for s in task("afqmc").published if s.split == "test" and "per-task" in s.source]
    # OCNLI's README and PaddleNLP (dev, the 1.1 archives)
    assert _value("ocnli", "BERT-base", "dev", "1.1", "OCNLI") == 74.5
    assert _value("ocnli", "RoBERTa-wwm-large-ext", "test", "1.1", "OCNLI") == 78.2
    assert _value("cluewsc2020", "HFL/RoBERTa-wwm-ext", "dev", "1.1", "PaddleNLP") == 88.49
    assert _value("cmnli", "BERT-Base-Chinese", "dev", "1.1", "PaddleNLP") == 80.97
    assert task("diagnostics").published == ()


@pytest.mark.parametrize("name", ["afqmc", "tnews", "iflytek", "cmnli", "cluewsc2020", "csl"])
def test_every_leaderboard_task_has_dev_and_test_scores(name: str) -> None:
    splits = {s.split for s in task(name).published}
    assert splits == {"dev", "test"}
