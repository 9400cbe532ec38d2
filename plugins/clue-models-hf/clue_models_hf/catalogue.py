"""Well-known Chinese encoders and the fine-tuning rule each size class needs.

Pure data, imported by ``hooks.py``: nothing here may import torch or transformers.
Parameter counts are those of the bare encoder (embeddings + layers + pooler), counted
from each checkpoint's published configuration; a task head adds a few thousand more.

Per-task reference values (learning rate, epochs, batch size, warmup, lengths) belong to
the task plugins (``TaskSpec.recommendations``, the CLUE BERT-base baselines). A size
class only states how its models depart from them, as recommendations for every kind:
small models need a much higher learning rate and more epochs (at 5e-5 a 3-layer model
underfits badly), large models half the reference rate. Multiplications are settings of
the model (``epochs_scale``, ``learning_rate_scale``), so ``--dry-run`` shows the task's
value and the factor, each with its source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SIZE_CLASSES = ("toy", "tiny", "small", "base", "large")


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
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

#: What each size class changes against the task's reference values (``toy`` is the
#: offline backbone ``hf-tiny``; ``base`` takes the task's values as they are).
SIZE_RULES: dict[str, dict[str, Any]] = {
    "toy": {"learning_rate": 5e-3},
    "tiny": {"learning_rate": 1e-4, "epochs_scale": 2.0},
    "small": {"learning_rate": 5e-5, "epochs_scale": 2.0},
    "base": {},
    "large": {"learning_rate_scale": 0.5},
}


def recommendations(size_class: str) -> Mapping[str, Mapping[str, Any]]:
    """A ModelSpec's ``recommendations``: the size class's rule, for every example kind."""
    rule = SIZE_RULES[size_class]
    return {"*": dict(rule)} if rule else {}
