"""The cluener2020 metric equals the official score.py on real files, and what it does where score.py cannot.

The gold is the bundled dev sample (the official dev.json's first 16 lines); the predictions are the
first 16 lines of the repository's own tf_version/ner_predict.json and perturbed copies of them
(data/README.md). The expected numbers are what the official script printed for each file, here
(data/official_scores.json): equality is exact, float for float.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import Prediction, read_split
from clue_tasks_ner.examples import EntitySpansExample
from clue_tasks_ner.labels import TYPES
from clue_tasks_ner.metric import compute
from clue_tasks_ner.submission import read

from .conftest import DATA, SAMPLE, official

SCORED = ("ner_predict16.json", "gold16.json", "p_drop.json", "p_add.json", "p_retype.json", "p_every.json")


def score_file(kernel: Kernel, name: str) -> dict[str, float]:
    examples = read_split(kernel.task("cluener2020"), SAMPLE, "dev").examples
    entries = read(DATA / name)
    assert [entry_id for entry_id, _ in entries] == [e.id for e in examples]
    return compute(examples, [Prediction(e.id, value) for e, (_, value) in zip(examples, entries)])


@pytest.mark.parametrize("name", SCORED)
def test_macro_f1_and_each_type_equal_the_official_script(kernel: Kernel, name: str) -> None:
    expected = official()[name]
    metrics = score_file(kernel, name)
    assert metrics["macro_f1"] == expected["avg"] * 100
    for kind in TYPES:
        p, r, f = expected["per_type"][kind]["p_r_f"]
        assert (metrics[f"precision_{kind}"], metrics[f"recall_{kind}"], metrics[f"f1_{kind}"]) == (
            p * 100, r * 100, f * 100), kind


def test_the_real_predictions_score_what_the_research_found(kernel: Kernel) -> None:
    assert official()["ner_predict16.json"]["avg"] == 0.8763398692810458
    assert score_file(kernel, "ner_predict16.json")["macro_f1"] == 0.8763398692810458 * 100
    # score.py counts strings: the same strings at more places score the same, the exact micro F1 does not
    every, first = score_file(kernel, "p_every.json"), score_file(kernel, "ner_predict16.json")
    assert every["macro_f1"] == first["macro_f1"] and every["micro_f1_exact"] < first["micro_f1_exact"]
    assert score_file(kernel, "gold16.json")["micro_f1_exact"] == 100.0


def test_a_type_with_no_true_positive_is_0_where_the_official_script_divides_by_zero(kernel: Kernel) -> None:
    expected = official()["p_zero.json"]
    assert expected["avg"] == "ZeroDivisionError"
    assert expected["per_type"]["movie"] == {"tp_fp_fn": [0, 0, 2], "error": "ZeroDivisionError"}
    metrics = score_file(kernel, "p_zero.json")
    assert (metrics["precision_movie"], metrics["recall_movie"], metrics["f1_movie"]) == (0.0, 0.0, 0.0)
    # the other nine types are the script's own values; the mean is still over all ten, in its order
    total: float = 0
    for kind in TYPES:
        total += 0.0 if kind == "movie" else expected["per_type"][kind]["f1"]
    assert metrics["macro_f1"] == total / 10 * 100


def example(text: str, *spans: tuple[str, int, int]) -> EntitySpansExample:
    return EntitySpansExample(0, text, tuple(spans))


def test_strings_per_line_not_offsets_and_the_exact_micro_beside_them() -> None:
    gold = [example("张三见了张三和李四", ("name", 0, 2), ("name", 4, 6), ("name", 7, 9))]
    # 张三 found at one of its two places: the official score counts the string once, right
    found = compute(gold, [Prediction(0, [["name", 4, 6]])])
    assert found["f1_name"] == 2 * 1.0 * 0.5 / 1.5 * 100  # strings: P 1/1, R 1/2 (李四 missed)
    assert found["micro_precision_exact"] == 100.0 and found["micro_recall_exact"] == pytest.approx(100 / 3)
    # the same span listed twice is one span; a wrong type is a FP of its type and a FN of the gold's
    twice = compute(gold, [Prediction(0, [["name", 0, 2], ["name", 0, 2], ["address", 7, 9]])])
    assert twice["micro_precision_exact"] == 50.0
    assert twice["f1_address"] == 0.0 and twice["precision_name"] == 100.0 and twice["recall_name"] == 50.0


def test_no_prediction_and_no_gold() -> None:
    gold = [example("张三来了", ("name", 0, 2)), EntitySpansExample(1, "无", None)]
    empty = compute(gold, [None, None])
    assert empty["macro_f1"] == 0.0 and empty["micro_f1_exact"] == 0.0 and empty["micro_precision_exact"] == 0.0
    right = compute(gold, [Prediction(0, [("name", 0, 2)]), Prediction(1, [("name", 0, 1)])])
    # the test-like example (no gold) is not scored: its prediction is no false positive
    assert right["f1_name"] == 100.0 and right["macro_f1"] == 10.0 and right["micro_f1_exact"] == 100.0


def test_the_cut_files_are_the_repositorys_own_lines() -> None:
    """ner_predict16.json is cut byte for byte; the perturbed files differ from it only as described."""
    first = (DATA / "ner_predict16.json").read_text(encoding="utf-8").splitlines()
    assert len(first) == 16 and first[0] == '{"label": {"name": {"彭小军": [[0, 2]]}, "address": {"台湾": [[15, 16]]}}}'
    assert Path(SAMPLE / "dev.json").read_text(encoding="utf-8").count("\n") == 16


def test_the_totals_are_the_declared_ones_headline_scores_first(kernel: Kernel) -> None:
    from clue_tasks_ner.labels import METRIC_TOTALS

    metrics = score_file(kernel, "ner_predict16.json")
    assert tuple(metrics) == METRIC_TOTALS == kernel.metric("cluener2020").produces
    assert tuple(metrics)[:4] == ("macro_f1", "micro_precision_exact", "micro_recall_exact", "micro_f1_exact")


#: The official score.py's mean on the full official dev.json for the repository's two real prediction files.
FULL_DEV = {"ner_predict.json": 0.6471829433597345, "ner_predict_large.json": 0.6651781566705821}


@pytest.mark.skipif(not os.environ.get("CLUENER_PUBLIC") or not os.environ.get("CLUENER_TF_VERSION"),
                    reason="set CLUENER_PUBLIC (the unpacked cluener_public folder) and CLUENER_TF_VERSION "
                           "(CLUENER2020's tf_version folder) to check the full dev")
@pytest.mark.parametrize("name", sorted(FULL_DEV))
def test_the_full_official_dev_equals_the_official_script(kernel: Kernel, name: str) -> None:
    examples = read_split(kernel.task("cluener2020"), Path(os.environ["CLUENER_PUBLIC"]), "dev").examples
    entries = read(Path(os.environ["CLUENER_TF_VERSION"]) / name)
    assert len(examples) == len(entries) == 1343
    metrics = compute(examples, [Prediction(e.id, value) for e, (_, value) in zip(examples, entries)])
    assert metrics["macro_f1"] == FULL_DEV[name] * 100
