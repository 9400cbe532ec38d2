"""Scores published for the FewCLUE tasks, each with the source it was read from.

Plain data (no code runs here), so the hook module may import it. Only numbers whose split
the source states are listed: the PET table of FewCLUE's Keras baselines, headed
"test_public.json上实验结果" (accuracy on the public test set), one row per train/dev pair.
``version`` names that pair as the task setting ``split`` does (``few_all``, ``0``…``4``), so a
run is set beside the number of the pair it trained on; ``mode`` is ``pet`` (cloze training
with answer words, not plain fine-tuning). FewCLUE's main README states that its baselines use
the 12-layer chinese_roberta_wwm_ext.

Left out, because their source does not say which split they were measured on: the other
README tables of the mirror (P-tuning, LM-BFF, EFL, fine-tuning, the GPT zero-shot table) and
the main README's result table, which is an image.
"""

from __future__ import annotations

from clue_core.plugin import PublishedScore

PET_KERAS = ("https://github.com/CLUEbenchmark/FewCLUE baselines/models_keras/pet/readme.md "
             "(test_public.json; RoBERTa-wwm-ext per the FewCLUE README)")

_COLUMNS = ("eprstmt", "bustm", "ocnli", "csldcp", "tnews", "cluewsc", "iflytek", "csl", "chid")
#: train/dev pair -> the row of the table, in _COLUMNS' order (the table's "all" row is few_all).
_PET: dict[str, tuple[float, ...]] = {
    "0": (87.87, 57.45, 44.05, 52.91, 54.18, 58.09, 45.4, 58.32, 62.44),
    "1": (84.92, 50.68, 43.33, 51.51, 56.12, 62.09, 47.11, 59.13, 60.59),
    "2": (86.23, 57.67, 44.01, 50.39, 55.52, 57.27, 44.25, 59.62, 62.59),
    "3": (86.89, 63.83, 44.05, 50.78, 53.18, 56.35, 46.94, 58.07, 59.84),
    "4": (87.38, 50.56, 44.64, 52.86, 53.13, 53.79, 46.37, 61.63, 60.59),
    "few_all": (88.2, 62.19, 49.25, 58.8, 55.12, 64.65, 51.34, 66.28, 62.39),
}


def _collect(folder: str) -> tuple[PublishedScore, ...]:
    column = _COLUMNS.index(folder)
    return tuple(PublishedScore(model="PET (RoBERTa-wwm-ext)", split="test_public", version=pair, metric="accuracy",
                                value=row[column], source=PET_KERAS, mode="pet")
                 for pair, row in _PET.items())


PUBLISHED: dict[str, tuple[PublishedScore, ...]] = {folder: _collect(folder) for folder in _COLUMNS}
"""Every FewCLUE task's published scores, keyed by its folder name."""
