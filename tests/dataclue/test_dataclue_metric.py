"""DataCLUE's macro F1 equals the official compute_f1.py on committed cuts of test_public.json.

``data/official.json`` holds the official script's printed numbers (sklearn 1.9.1, run by
``data/make_official.py`` on the first 80 lines of each task's raw test_public.json with four
prediction files: identity, every third line relabelled, shuffled, one stray label absent from the
gold). The fraction must equal sklearn's bit for bit; the kernel's total is it ×100.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.plugin import Prediction, iter_jsonl
from clue_tasks_dataclue.catalog import TASKS
from clue_tasks_dataclue.metric import dataclue_f1, macro_f1
from clue_tasks_dataclue.readers import read_pair, read_single

DATA = Path(__file__).parent / "data"
OFFICIAL = json.loads((DATA / "official.json").read_text(encoding="utf-8"))
CASES = [(task, name) for task, by_name in OFFICIAL.items() for name in by_name]


def _task(folder: str):
    return next(t for t in TASKS if t.name == f"dataclue-{folder}")


@pytest.mark.parametrize(("folder", "name"), CASES)
def test_macro_f1_equals_the_official_script(folder: str, name: str) -> None:
    task = _task(folder)
    reader = read_pair if folder in ("afqmc", "qbqtc", "triclue") else read_single
    gold = reader(task, DATA / folder, "test_public").examples
    predicted = [str(record["label"]) for _, record in iter_jsonl(DATA / folder / f"{name}.json")]
    want = OFFICIAL[folder][name]
    fraction = macro_f1([e.label for e in gold], predicted)
    assert fraction == want["f1_macro"], (folder, name, fraction, want)
    totals = dataclue_f1(gold, [Prediction(e.id, p) for e, p in zip(gold, predicted)])
    assert totals["macro_f1"] == 100.0 * want["f1_macro"]
    assert totals["micro_f1"] == pytest.approx(100.0 * want["f1_micro"], abs=1e-9)


def test_a_label_predicted_but_absent_from_the_gold_adds_a_zero() -> None:
    assert macro_f1(["a", "a", "b"], ["a", "a", "b"]) == 1.0
    assert macro_f1(["a", "a", "b"], ["a", "c", "b"]) == pytest.approx((2 / 3 + 1.0 + 0.0) / 3)  # c: FP 1
    assert macro_f1(["1", "0"], ["1", None]) == pytest.approx((0.0 + 1.0) / 2)  # missing: wrong, no new label


def test_triclue_integer_gold_and_string_predictions_compare_as_strings() -> None:
    task = _task("triclue")
    gold = read_pair(task, DATA / "triclue", "test_public").examples
    totals = dataclue_f1(gold, [Prediction(e.id, str(e.label)) for e in gold])
    assert totals == {"macro_f1": 100.0, "micro_f1": 100.0}
