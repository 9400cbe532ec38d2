"""Scores published for CLUENER2020, for reports to set runs beside.

From the CLUEbenchmark/CLUENER2020 README, "效果对比" (test set, the leaderboard's "线上效果f1",
Overall@Macro: the official mean of the ten per-type F1s, the task's ``macro_f1``). The same README
gives a human score of 63.41 (not a model, so not listed). The pytorch baseline's "dev F1 0.8076"
(``pytorch_version/README.md``) is an offset-exact micro F1 of another model, not listed either.
This module imports nothing heavy: the hook module reads it when specs are built.
"""

from __future__ import annotations

from clue_core.plugin import PublishedScore

README = "CLUEbenchmark/CLUENER2020 README, 效果对比 (test, 线上效果f1, Overall@Macro)"

CLUENER2020 = tuple(
    PublishedScore(model=model, split="test", version="1.0", metric="macro_f1", value=value, source=README)
    for model, value in (("BiLSTM+CRF", 70.00), ("BERT-base", 78.82), ("RoBERTa-wwm-large-ext", 80.42))
)
