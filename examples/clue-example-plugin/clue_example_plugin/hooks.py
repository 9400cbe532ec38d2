"""Hook module: only builds specs, so importing it costs nothing.

The reader is named as a "module:attr" string; clue-core imports it only when a run
needs the data. Everything comes from the one public module, ``clue_core.plugin``.
"""

from __future__ import annotations

from clue_core.plugin import Prompt, TaskSpec, TestVersion, hookimpl


@hookimpl
def clue_tasks() -> list[TaskSpec]:
    return [
        TaskSpec(
            name="review-sentiment",
            kind="classification",
            description="Is a short product review positive or negative? (example plugin)",
            reader="clue_example_plugin.reader:read",
            labels=("negative", "positive"),
            label_descriptions={"negative": "差评", "positive": "好评"},
            metrics=("accuracy", "macro_f1"),
            primary_metric="accuracy",
            splits=("train", "dev"),
            test_versions=(TestVersion("1.0", "test", "review_sentiment_predict.json"),),
            writer="jsonl_labels",
            data_files=("train.json", "dev.json", "test.json"),
            sample="clue_example_plugin:sample",
            recommendations={"max_length": 64, "batch_size": 16, "learning_rate": 1e-4, "epochs": 3},
            prompt=Prompt(instruction="判断这条商品评论的情感是正面还是负面。", template="评论：{text}",
                          verbalizers={"negative": "负面", "positive": "正面"}),
        )
    ]
