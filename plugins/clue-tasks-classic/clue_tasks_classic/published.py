"""Scores published for the classic tasks, each with the source it was read from.

Plain data (no code runs here), so the hook module may import it. All numbers are
accuracies on the leaderboard's 0-100 scale, of fine-tuned models. ``version`` is the
CLUE data version the number was measured on:

* the CLUE 1.0 leaderboard (test) and the per-task dev/test tables of the CLUE README,
  which were produced on CLUE 1.0's files (their test numbers are the 1.0 leaderboard's;
  TNEWS' and IFLYTEK' are the filtered sets the current archives hold): ``"1.0"``;
* OCNLI's own README (OCNLI is a CLUE 1.1 task) and PaddleNLP's CLUE benchmark, which
  fine-tunes on the current archives: ``"1.1"``.

Where the per-task table repeats a leaderboard number exactly it is not listed twice;
where the two differ (CSL: 80.23 / 80.63 in the per-task table, 80.36 / 81.0 on the
leaderboard) both are kept, each with its own source.
"""

from __future__ import annotations

from clue_core.plugin import PublishedScore

CLUE_LEADERBOARD = "https://github.com/CLUEbenchmark/CLUE README.md, 排行榜 (CLUE 1.0 classification, test)"
CLUE_PER_TASK = "https://github.com/CLUEbenchmark/CLUE README.md, per-task dev/test tables"
OCNLI_README = "https://github.com/CLUEbenchmark/OCNLI README.md (mean of 5 runs; '-' labels dropped)"
PADDLENLP = "https://github.com/PaddlePaddle/PaddleNLP examples/benchmark/clue/README.md (dev, best of a grid search)"

#: The CLUE 1.0 classification leaderboard, test accuracy: model -> task -> value.
_LEADERBOARD: dict[str, dict[str, float]] = {
    "BERT-base": {"afqmc": 73.70, "tnews": 56.58, "iflytek": 60.29, "cmnli": 79.69, "cluewsc2020": 62.0,
                  "csl": 80.36},
    "BERT-wwm-ext": {"afqmc": 74.07, "tnews": 56.84, "iflytek": 59.43, "cmnli": 80.42, "cluewsc2020": 61.1,
                     "csl": 80.63},
    "ERNIE-base": {"afqmc": 73.83, "tnews": 58.33, "iflytek": 58.96, "cmnli": 80.29, "cluewsc2020": 60.8,
                   "csl": 79.1},
    "RoBERTa-large": {"afqmc": 74.02, "tnews": 57.86, "iflytek": 62.55, "cmnli": 81.70, "cluewsc2020": 72.7,
                      "csl": 81.36},
    "XLNet-mid": {"afqmc": 70.50, "tnews": 56.24, "iflytek": 57.85, "cmnli": 81.25, "cluewsc2020": 64.4,
                  "csl": 81.26},
    "ALBERT-xxlarge": {"afqmc": 75.6, "tnews": 59.46, "iflytek": 62.89, "cmnli": 83.14, "cluewsc2020": 61.54,
                       "csl": 83.63},
    "ALBERT-xlarge": {"afqmc": 69.96, "tnews": 57.36, "iflytek": 59.50, "cmnli": 81.13, "cluewsc2020": 64.34,
                      "csl": 81.20},
    "ALBERT-large": {"afqmc": 74.0, "tnews": 55.16, "iflytek": 57.00, "cmnli": 78.77, "cluewsc2020": 62.24,
                     "csl": 80.30},
    "ALBERT-base": {"afqmc": 72.55, "tnews": 55.06, "iflytek": 56.58, "cmnli": 77.58, "cluewsc2020": 64.34,
                    "csl": 78.5},
    "ALBERT-tiny": {"afqmc": 69.92, "tnews": 53.35, "iflytek": 48.71, "cmnli": 70.61, "cluewsc2020": 58.5,
                    "csl": 74.56},
    "RoBERTa-wwm-ext": {"afqmc": 74.04, "tnews": 56.94, "iflytek": 60.31, "cmnli": 80.51, "cluewsc2020": 67.8,
                        "csl": 81.0},
    "RoBERTa-wwm-large": {"afqmc": 76.55, "tnews": 58.61, "iflytek": 62.98, "cmnli": 82.12, "cluewsc2020": 74.6,
                          "csl": 82.13},
}

#: The CLUE README's per-task tables: model -> task -> (dev, test).
_PER_TASK: dict[str, dict[str, tuple[float, float]]] = {
    "BERT-base": {"afqmc": (74.16, 73.70), "tnews": (56.09, 56.58), "iflytek": (60.37, 60.29),
                  "cmnli": (79.47, 79.69), "cluewsc2020": (59.6, 62.0), "csl": (79.63, 80.23)},
    "RoBERTa-wwm-ext": {"afqmc": (74.30, 74.04), "tnews": (57.51, 56.94), "iflytek": (60.8, 60.31),
                        "cmnli": (80.70, 80.51), "cluewsc2020": (67.2, 67.8), "csl": (80.67, 80.63)},
}

#: OCNLI's README: model -> (dev, test).
_OCNLI: dict[str, tuple[float, float]] = {
    "BERT-base": (74.5, 72.2),
    "RoBERTa-wwm-large-ext": (78.8, 78.2),
}

#: PaddleNLP's CLUE benchmark, dev: model -> task -> value (model names as PaddleNLP writes them).
_PADDLENLP: dict[str, dict[str, float]] = {
    "BERT-Base-Chinese": {"afqmc": 74.63, "tnews": 57.13, "iflytek": 61.29, "cmnli": 80.97, "ocnli": 75.22,
                          "cluewsc2020": 81.91, "csl": 81.90},
    "HFL/RoBERTa-wwm-ext": {"afqmc": 74.60, "tnews": 58.08, "iflytek": 61.23, "cmnli": 81.11, "ocnli": 76.92,
                            "cluewsc2020": 88.49, "csl": 80.77},
}


def _score(model: str, split: str, version: str, value: float, source: str) -> PublishedScore:
    return PublishedScore(model=model, split=split, version=version, metric="accuracy", value=value,
                          source=source)


def _collect(task: str) -> tuple[PublishedScore, ...]:
    scores: list[PublishedScore] = []
    for model, values in _LEADERBOARD.items():
        if task in values:
            scores.append(_score(model, "test", "1.0", values[task], CLUE_LEADERBOARD))
    for model, pairs in _PER_TASK.items():
        if task not in pairs:
            continue
        dev, test = pairs[task]
        scores.append(_score(model, "dev", "1.0", dev, CLUE_PER_TASK))
        if _LEADERBOARD.get(model, {}).get(task) != test:
            scores.append(_score(model, "test", "1.0", test, CLUE_PER_TASK))
    if task == "ocnli":
        for model, (dev, test) in _OCNLI.items():
            scores += [_score(model, "dev", "1.1", dev, OCNLI_README), _score(model, "test", "1.1", test, OCNLI_README)]
    for model, values in _PADDLENLP.items():
        if task in values:
            scores.append(_score(model, "dev", "1.1", values[task], PADDLENLP))
    return tuple(scores)


TASKS = ("afqmc", "tnews", "iflytek", "ocnli", "cmnli", "cluewsc2020", "csl", "diagnostics")
PUBLISHED: dict[str, tuple[PublishedScore, ...]] = {task: _collect(task) for task in TASKS}
"""Every classic task's published scores (diagnostics: none in the sources above)."""
