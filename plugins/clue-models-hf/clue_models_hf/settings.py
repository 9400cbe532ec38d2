"""The settings the Hugging Face learner reads, declared for the kernel.

The kernel merges every layer (declared default < task recommendation < model
recommendation < config file < ``--set``), converts each value to its declared type and
checks its bounds once, so a typo or a wrong value ends in one ``error:`` line before
anything is written. What reaches the factory is a dict of exactly these names;
:class:`Settings` is a typed view of it. Checks that one declaration cannot express
(``doc_stride`` against ``max_length``, the offline backbone's head count against its
width) are in :func:`cross_check`.

Run control is not a setting: the seed, ``--resume``, the primary metric and where
checkpoints go come from the run context.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from clue_core.plugin import CLASSIFICATION, SPAN, ClueError, Setting
from clue_models_hf.ner_tags import ENTITY_SPANS, HEADS, SPAN_HEAD

MIXED_PRECISION = ("no", "bf16", "fp16")
#: ``keep``: which weights a fit ends with (the best on dev, or the last step's).
KEEP_BEST, KEEP_LAST = "best", "last"
#: Scaled epochs never exceed this (CLUEWSC2020's reference is already 50).
MAX_SCALED_EPOCHS = 50


def _schedule(name: str, kind: type, default: Any, help: str, **bounds: Any) -> Setting:
    return Setting(name, kind, default, help, schedule=True, **bounds)


#: Settings of every hf model: the family, the catalogue and the offline backbone.
COMMON: tuple[Setting, ...] = (
    _schedule("learning_rate", float, 2e-5, "AdamW peak learning rate (before learning_rate_scale)", above=0.0,
              report=True),
    _schedule("learning_rate_scale", float, 1.0,
              "multiplies learning_rate (large models: 0.5, half the task's reference rate)", above=0.0),
    _schedule("epochs", int, 3, "passes over the training data (before epochs_scale)", minimum=1, report=True),
    _schedule("epochs_scale", float, 1.0,
              f"multiplies epochs, rounded, never below epochs nor above {MAX_SCALED_EPOCHS} (tiny and small "
              "models: 2)", minimum=1.0),
    _schedule("batch_size", int, 32, "training examples per optimizer step and process (before accumulation)",
              minimum=1, report=True),
    Setting("eval_batch_size", int, 64, "examples per prediction batch and process", minimum=1),
    _schedule("gradient_accumulation_steps", int, 1, "batches accumulated into one optimizer step", minimum=1),
    _schedule("warmup_ratio", float, 0.1, "share of the steps with a linear warmup (then linear decay)",
              minimum=0.0, maximum=1.0),
    _schedule("weight_decay", float, 0.01, "AdamW weight decay (not on biases and LayerNorm weights)", minimum=0.0),
    _schedule("max_grad_norm", float, 1.0, "gradient clipping norm (0 = off)", minimum=0.0),
    _schedule("max_length", int, 128, "tokens per input (span extraction: per window)", minimum=1, report=True),
    _schedule("max_steps", int, 0, "optimizer steps; overrides epochs when > 0", minimum=0),
    _schedule("doc_stride", int, 128, "span extraction: tokens shared by consecutive context windows", minimum=0),
    _schedule("max_query_length", int, 64, "span extraction: question tokens kept", minimum=1),
    Setting("max_answer_length", int, 50, "span extraction: longest answer in tokens", minimum=1),
    Setting("n_best", int, 20, "span extraction: start and end candidates per window", minimum=1),
    _schedule("mixed_precision", str, "no", "autocast: bf16 (GPU, CPU) or fp16 (GPU only)", choices=MIXED_PRECISION),
    _schedule("eval_every", int, "epoch", "evaluate on dev every N optimizer steps, or every epoch", minimum=1,
              also=("epoch",)),
    _schedule("early_stopping_patience", int, 0, "stop after this many evaluations without a better primary "
              "metric (0 = never)", minimum=0),
    Setting("save_every", int, 0, "checkpoint every N optimizer steps for --resume (0 = never)", minimum=0),
    Setting("save_total_limit", int, 2, "checkpoints kept, newest first (0 = all)", minimum=0),
    Setting("trust_remote_code", bool, False, "allow checkpoints that ship their own model code"),
    Setting("log_with", str, "", "'tensorboard': training curves in training/logs/", choices=("", "tensorboard")),
    Setting("logging_steps", int, 10, "loss and learning-rate reporting interval in optimizer steps", minimum=1),
    Setting("progress", bool, True, "tqdm progress bar (main process, terminals only)"),
    _schedule("method", str, "finetune", "finetune: a classification head; pet: the masked-LM head scores the "
              "task prompt's verbalizers at [MASK] slots (classification tasks)", choices=("finetune", "pet"),
              report=True),
    _schedule("pet_instruction", bool, False, "method=pet: start the cloze with the prompt's instruction"),
    _schedule("ner_head", str, SPAN_HEAD, "entity spans: span (start/end per type, CLUENER2020's strongest "
              "baseline) or bio (B-/I-/O per token)", choices=HEADS),
    _schedule("ner_stride", int, 32, "entity spans: tokens shared by consecutive windows of a text longer than "
              "max_length", minimum=0),
    # not a schedule setting: training is the same either way, only the weights fit ends with differ,
    # so --resume may change it (the resumed run's manifest records the value it ended with)
    Setting("keep", str, KEEP_BEST, "the weights fit ends with, saved and predicted with: best (the best "
            "dev evaluation, from training/best/) or last (the last step's, as DataCLUE's recipe)",
            choices=(KEEP_BEST, KEEP_LAST)),
)

#: Settings of the offline backbone ``hf-tiny`` only: its shape and vocabulary.
TINY: tuple[Setting, ...] = (
    _schedule("tiny_hidden_size", int, 64, "hf-tiny: hidden size", minimum=1),
    _schedule("tiny_num_layers", int, 2, "hf-tiny: encoder layers", minimum=1),
    _schedule("tiny_num_heads", int, 2, "hf-tiny: attention heads (must divide tiny_hidden_size)", minimum=1),
    _schedule("tiny_intermediate_size", int, 128, "hf-tiny: feed-forward width", minimum=1),
    _schedule("tiny_vocab_size", int, 6000, "hf-tiny: most frequent training characters kept in the vocabulary",
              minimum=16),
)


@dataclass(frozen=True)
class Settings:
    """The values of :data:`COMMON`, typed (no defaults here: the declarations own them)."""

    learning_rate: float
    learning_rate_scale: float
    epochs: int
    epochs_scale: float
    batch_size: int
    eval_batch_size: int
    gradient_accumulation_steps: int
    warmup_ratio: float
    weight_decay: float
    max_grad_norm: float
    max_length: int
    max_steps: int
    doc_stride: int
    max_query_length: int
    max_answer_length: int
    n_best: int
    mixed_precision: str
    eval_every: int | str
    early_stopping_patience: int
    save_every: int
    save_total_limit: int
    trust_remote_code: bool
    log_with: str
    logging_steps: int
    progress: bool
    method: str
    pet_instruction: bool
    ner_head: str
    ner_stride: int
    keep: str

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Settings:
        return cls(**{f.name: values[f.name] for f in fields(cls)})

    @property
    def effective_learning_rate(self) -> float:
        return self.learning_rate * self.learning_rate_scale

    @property
    def effective_epochs(self) -> int:
        return scaled_epochs(self.epochs, self.epochs_scale)


def scaled_epochs(epochs: int, scale: float) -> int:
    """``epochs`` times ``scale``, rounded; scaling never cuts epochs, nor raises them past 50.

    (A reference above 50 epochs, which only a user sets, is kept as it is.)
    """
    return max(epochs, min(MAX_SCALED_EPOCHS, round(epochs * scale)))


def complete(declared: tuple[Setting, ...], values: Mapping[str, Any]) -> dict[str, Any]:
    """The declared defaults under ``values`` (the kernel passes every name; Python callers may not).

    A name nothing declares is a programming error, not a user's: the kernel rejects those
    with a did-you-mean before any factory runs.
    """
    names = {s.name for s in declared}
    unknown = sorted(set(values) - names)
    if unknown:
        raise TypeError(f"not settings of this model: {', '.join(unknown)}")
    return {**{s.name: s.default for s in declared}, **values}


def cross_check(values: Mapping[str, Any], kind: str) -> None:
    """What single declarations cannot say; one ``ClueError`` line, before anything is written.

    The exact ``doc_stride`` bound depends on the tokenizer's special tokens and is checked
    again when windows are made; this catches the values no tokenizer can use.
    """
    if values.get("method") == "pet" and kind != CLASSIFICATION:
        raise ClueError(f"setting 'method=pet' scores classification labels; {kind} tasks use method=finetune")
    if kind == SPAN and values["doc_stride"] >= values["max_length"] - values["max_query_length"]:
        raise ClueError(f"setting 'doc_stride' ({values['doc_stride']}) must be smaller than max_length - "
                        f"max_query_length ({values['max_length']} - {values['max_query_length']}) minus the "
                        f"tokenizer's special tokens")
    if kind == ENTITY_SPANS and values["ner_stride"] >= values["max_length"] - 2:
        raise ClueError(f"setting 'ner_stride' ({values['ner_stride']}) must be smaller than max_length "
                        f"({values['max_length']}) minus the tokenizer's special tokens")
    if "tiny_num_heads" in values and values["tiny_hidden_size"] % values["tiny_num_heads"]:
        raise ClueError(f"setting 'tiny_num_heads' ({values['tiny_num_heads']}) must divide tiny_hidden_size "
                        f"({values['tiny_hidden_size']})")
