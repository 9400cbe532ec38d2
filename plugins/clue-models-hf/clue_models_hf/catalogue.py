"""Well-known Chinese encoders and the fine-tuning recipe each size class needs.

Pure data, imported by ``hooks.py``: nothing here may import torch or transformers.
Parameter counts are those of the bare encoder (embeddings + layers + pooler), counted
from each checkpoint's published configuration; a task head adds a few thousand more.

Recipes start from the reference BERT-base settings of the CLUE baselines and adapt them
per size class: small models need a much higher learning rate and more epochs (at 5e-5 a
3-layer model underfits badly), large models a lower learning rate.
"""

from __future__ import annotations

from typing import Any

from clue_core.specs import Record

SIZE_CLASSES = ("toy", "tiny", "small", "base", "large")


class CatalogueEntry(Record):
    """One checkpoint on the Hugging Face hub, as listed by ``clue-core list models``."""

    hub_id: str
    size_class: str
    parameters: int
    description: str


CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry("bert-base-chinese", "base", 102_267_648, "Google's Chinese BERT-base (12 layers, 768 hidden)"),
    CatalogueEntry("hfl/chinese-bert-wwm-ext", "base", 102_267_648, "BERT-base with whole-word masking, extended data"),
    CatalogueEntry("hfl/chinese-roberta-wwm-ext", "base", 102_267_648, "RoBERTa-style BERT-base, whole-word masking"),
    CatalogueEntry("hfl/chinese-roberta-wwm-ext-large", "large", 325_522_432,
                   "RoBERTa-style BERT-large (24 layers, 1024 hidden)"),
    CatalogueEntry("hfl/chinese-macbert-base", "base", 102_267_648, "MacBERT base: MLM-as-correction pre-training"),
    CatalogueEntry("hfl/chinese-macbert-large", "large", 325_522_432, "MacBERT large (24 layers, 1024 hidden)"),
    CatalogueEntry("hfl/rbt3", "small", 38_476_800, "3-layer RoBERTa-wwm-ext (768 hidden)"),
    CatalogueEntry("hfl/rbt4", "small", 45_564_672, "4-layer RoBERTa-wwm-ext (768 hidden)"),
    CatalogueEntry("hfl/rbt6", "small", 59_740_416, "6-layer RoBERTa-wwm-ext (768 hidden)"),
    CatalogueEntry("hfl/rbtl3", "small", 61_001_728, "3-layer RoBERTa-wwm-ext-large (1024 hidden)"),
    CatalogueEntry("hfl/chinese-electra-180g-small-discriminator", "tiny", 12_280_576,
                   "ELECTRA small discriminator (12 layers, 256 hidden)"),
    CatalogueEntry("hfl/chinese-electra-180g-small-ex-discriminator", "small", 21_757_696,
                   "ELECTRA small-ex discriminator (24 layers, 256 hidden)"),
    CatalogueEntry("hfl/chinese-electra-180g-base-discriminator", "base", 101_677_056,
                   "ELECTRA base discriminator (12 layers, 768 hidden)"),
    CatalogueEntry("clue/albert_chinese_tiny", "tiny", 4_080_520,
                   "CLUE's ALBERT tiny (4 layers, 312 hidden, shared weights; BERT vocabulary)"),
    CatalogueEntry("clue/albert_chinese_small", "tiny", 4_742_272,
                   "CLUE's ALBERT small (6 layers, 384 hidden, shared weights; BERT vocabulary)"),
    CatalogueEntry("nghuyong/ernie-3.0-nano-zh", "small", 17_912_232, "ERNIE 3.0 nano (4 layers, 312 hidden)"),
    CatalogueEntry("nghuyong/ernie-3.0-micro-zh", "small", 23_400_576, "ERNIE 3.0 micro (4 layers, 384 hidden)"),
    CatalogueEntry("nghuyong/ernie-3.0-mini-zh", "small", 26_949_504, "ERNIE 3.0 mini (6 layers, 384 hidden)"),
    CatalogueEntry("nghuyong/ernie-3.0-base-zh", "base", 117_954_816, "ERNIE 3.0 base (12 layers, 768 hidden)"),
    CatalogueEntry("uer/chinese_roberta_L-4_H-256", "tiny", 8_765_696, "UER RoBERTa mini (4 layers, 256 hidden)"),
    CatalogueEntry("uer/chinese_roberta_L-4_H-512", "small", 23_953_920, "UER RoBERTa small (4 layers, 512 hidden)"),
)

#: The reference recipe for BERT-base-sized models (CLUE baselines), per task.
BASE_RECIPES: dict[str, dict[str, Any]] = {
    "afqmc": {"learning_rate": 2e-5, "epochs": 3, "batch_size": 32, "warmup_ratio": 0.1},
    "tnews": {"learning_rate": 2e-5, "epochs": 3, "batch_size": 32, "warmup_ratio": 0.1},
    "iflytek": {"learning_rate": 2e-5, "epochs": 3, "batch_size": 32, "warmup_ratio": 0.1},
    "ocnli": {"learning_rate": 3e-5, "epochs": 5, "batch_size": 32, "warmup_ratio": 0.1},
    "cmnli": {"learning_rate": 3e-5, "epochs": 2, "batch_size": 64, "warmup_ratio": 0.1},
    "cluewsc2020": {"learning_rate": 2e-5, "epochs": 50, "batch_size": 16, "warmup_ratio": 0.1},
    "csl": {"learning_rate": 1e-5, "epochs": 5, "batch_size": 16, "warmup_ratio": 0.1},
    "cmrc2018": {"learning_rate": 3e-5, "epochs": 2, "batch_size": 32, "warmup_ratio": 0.1},
    "drcd": {"learning_rate": 3e-5, "epochs": 2, "batch_size": 32, "warmup_ratio": 0.1},
    "chid": {"learning_rate": 2e-5, "epochs": 3, "batch_size": 24, "warmup_ratio": 0.06},
    "c3": {"learning_rate": 2e-5, "epochs": 8, "batch_size": 24, "warmup_ratio": 0.1},
}

#: Learning rate and epoch multiplier per size class (``toy`` is the offline backbone).
_SIZE_RULES: dict[str, dict[str, float]] = {
    "toy": {"learning_rate": 5e-3, "epoch_factor": 1.0},
    "tiny": {"learning_rate": 1e-4, "epoch_factor": 2.0},
    "small": {"learning_rate": 5e-5, "epoch_factor": 2.0},
    "base": {"learning_rate": 0.0, "epoch_factor": 1.0},
    "large": {"learning_rate": 0.0, "epoch_factor": 1.0},
}
_MAX_EPOCHS = 50


def recipe(size_class: str, task: str) -> dict[str, Any]:
    """The recommended learning rate, epochs, batch size and warmup of one size class on one task."""
    base = dict(BASE_RECIPES[task])
    rule = _SIZE_RULES[size_class]
    if rule["learning_rate"]:
        base["learning_rate"] = rule["learning_rate"]
    elif size_class == "large":
        base["learning_rate"] = round(base["learning_rate"] / 2, 7)
    base["epochs"] = min(_MAX_EPOCHS, max(base["epochs"], round(base["epochs"] * rule["epoch_factor"])))
    return base


def hyperparameters(size_class: str) -> dict[str, Any]:
    """A ModelSpec's ``hyperparameters``: flat defaults plus ``{"by_task": {task: recipe}}``.

    The flat ``learning_rate`` applies to tasks without a recipe; ``by_task`` entries
    override the task's own recommendations for the named task only.
    """
    flat: dict[str, Any] = {}
    rule = _SIZE_RULES[size_class]
    if rule["learning_rate"]:
        flat["learning_rate"] = rule["learning_rate"]
    elif size_class == "large":
        flat["learning_rate"] = 1e-5
    flat["by_task"] = {task: recipe(size_class, task) for task in BASE_RECIPES}
    return flat
