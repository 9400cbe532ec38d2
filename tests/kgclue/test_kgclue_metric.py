"""The KgCLUE metric equals the official ``evaluate_f1_em.py``.

``data/official.json`` holds what the official script (CLUEbenchmark/KgCLUE ``baselines/evaluate_f1_em.py``,
sha256 432e01c9…a37a, with pylcs 0.1.1) returned on the bundled test_public cut for the identity, a
seeded perturbation (halved or emptied objects, dropped disambiguations, altered predicates,
upper-cased objects with trailing spaces, swapped subject and object) and a one-line rotation of the
real answers, and on a file with malformed answers (which it cannot score: its copy with those
answers as three empty parts). The full test_public check runs where the real files are given
(``KGCLUE_DATASETS``: KgCLUE's ``datasets/``; ``KGCLUE_CHECK``: the folder of ``kg_{identity,shuffled,
perturbed}.json``) and is skipped elsewhere.
"""

from __future__ import annotations

import json
import os
import random
from itertools import combinations
from pathlib import Path

import pytest

from clue_core.plugin import Prediction
from clue_tasks_kgclue import hooks
from clue_tasks_kgclue.metric import compute, f1_sim, lcs, normalize, official_strings
from clue_tasks_kgclue.reader import read
from clue_tasks_kgclue.triples import KbqaExample
from clue_tasks_kgclue.writer import read as read_submission
from clue_tasks_kgclue.writer import write as write_submission

SAMPLE = Path(hooks.__file__).parent / "samples" / "kgclue"
DATA = Path(__file__).parent / "data"
OFFICIAL = json.loads((DATA / "official.json").read_text(encoding="utf-8"))


def _score(gold_split: Path, split: str, predictions: Path):
    examples = read(hooks.KGCLUE, gold_split, split).examples
    answers = dict(read_submission(predictions))
    return compute(examples, [Prediction(e.id, answers[e.id]) if e.id in answers else None for e in examples])


@pytest.mark.parametrize("name, file", [("identity", SAMPLE / "test_public.json"),
                                        ("perturbed", DATA / "test_public_perturbed.json"),
                                        ("shuffled", DATA / "test_public_shuffled.json")])
def test_the_sample_cut_scores_as_the_official_script(name: str, file: Path) -> None:
    result = _score(SAMPLE, "test_public", file)
    assert official_strings(result.totals) == OFFICIAL[name]
    assert result.totals["malformed"] == 0


def test_malformed_answers_score_as_three_empty_parts_and_are_counted() -> None:
    result = _score(SAMPLE, "test_public", DATA / "test_public_malformed.json")
    assert official_strings(result.totals) == OFFICIAL["malformed_as_empty_parts"]
    assert result.totals["malformed"] == 3  # "", "a|||b|||c" (no spaces), four parts; "x ||| y ||| " is fine


def test_the_written_submission_of_malformed_answers_is_what_the_official_script_scores(tmp_path: Path) -> None:
    examples = read(hooks.KGCLUE, SAMPLE, "test_public").examples
    answers = dict(read_submission(DATA / "test_public_malformed.json"))
    written = tmp_path / "kgclue_predict.json"
    write_submission(written, examples, [Prediction(e.id, answers[e.id]) for e in examples])
    lines = [json.loads(line) for line in written.read_text(encoding="utf-8").splitlines()]
    assert all(len(line["answer"].split(" ||| ")) == 3 for line in lines)  # the official script can split each
    assert sum(line["answer"] == " |||  ||| " for line in lines) == 3
    again = _score(SAMPLE, "test_public", written)
    assert official_strings(again.totals) == OFFICIAL["malformed_as_empty_parts"] and again.totals["malformed"] == 0


def test_normalisation_lowers_and_collapses_unicode_whitespace() -> None:
    assert normalize("\xa0 슈퍼스타 #3  - ABC\t") == "슈퍼스타 #3 - abc"
    assert normalize("13,824\xa0字节") == "13,824 字节"


def _brute_lcs(a: str, b: str) -> int:
    for size in range(min(len(a), len(b)), 0, -1):
        subsequences = {"".join(c) for c in combinations(a, size)}
        if any("".join(c) in subsequences for c in combinations(b, size)):
            return size
    return 0


def test_lcs_is_the_longest_common_subsequence_by_code_point() -> None:
    rng = random.Random(31)
    alphabet = "ab中文\U0001f600"  # an astral character counts one, as pylcs counts it
    for _ in range(300):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7)))
        assert lcs(a, b) == lcs(b, a) == _brute_lcs(a, b), (a, b)
    assert f1_sim("", "") == 0.0 and f1_sim("", "a") == 0.0 and f1_sim("abc", "axc") == pytest.approx(2 * 2 / 6)


def test_the_official_edge_cases() -> None:
    """Two empty parts: EM 1 and F1 0; a missing prediction counts 0 over all gold lines; no gold: no totals."""
    examples = [KbqaExample(0, "q", ("x", "y", "")), KbqaExample(1, "q", ("x", "y", "z")), KbqaExample(2, "q")]
    result = compute(examples, [Prediction(0, "X ||| y ||| "), None, Prediction(2, "a ||| b ||| c")])
    assert result.totals["em_o"] == 50.0 and result.totals["f1_o"] == 0.0 and result.totals["emf1"] == 25.0
    assert result.totals["em_all"] == 50.0 and result.totals["malformed"] == 0
    assert result.per_example["emf1"] == [50.0, 0.0, None]
    assert compute([KbqaExample(0, "q")], [Prediction(0, "a ||| b ||| c")]).totals == {}


REAL = os.environ.get("KGCLUE_DATASETS"), os.environ.get("KGCLUE_CHECK")


@pytest.mark.skipif(not all(REAL), reason="KGCLUE_DATASETS / KGCLUE_CHECK not set (the real files are not shipped)")
def test_the_full_test_public_scores_as_the_official_script() -> None:
    """The official script's output on the full real test_public (2,000 lines), run with pylcs 0.1.1."""
    expected = {
        "identity": dict.fromkeys(("EM_All", "EM_S", "EM_P", "EM_O", "F1_All", "F1_S", "F1_P", "F1_O", "EMF1"),
                                  "100.000"),
        "shuffled": {"EM_All": "0.000", "EM_S": "0.000", "EM_P": "0.150", "EM_O": "0.000", "F1_All": "3.463",
                     "F1_S": "2.363", "F1_P": "1.508", "F1_O": "2.053", "EMF1": "1.027"},
        "perturbed": {"EM_All": "58.750", "EM_S": "92.100", "EM_P": "90.500", "EM_O": "71.000", "F1_All": "92.672",
                      "F1_S": "93.770", "F1_P": "98.709", "F1_O": "80.366", "EMF1": "75.683"},
    }
    datasets, check = (Path(p) for p in REAL)  # type: ignore[arg-type]
    for name, strings in expected.items():
        assert official_strings(_score(datasets, "test_public", check / f"kg_{name}.json").totals) == strings
