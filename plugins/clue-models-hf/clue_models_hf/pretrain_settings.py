"""The settings of ``clue-core pretrain``, declared like a model's and given with ``--set``.

The command is no task run, so the kernel's per-task merge does not apply; the values are
converted here from the same :class:`~clue_core.plugin.Setting` declarations, with the same
rules (JSON first: ``7``, ``true``, ``1e-4``; then the declared type and bounds) and one
``error:`` line naming the setting for a wrong one. Settings marked *schedule* change what
is trained: ``--resume`` refuses a run whose values differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from clue_core.plugin import ClueError, Setting
from clue_models_hf.settings import TINY


def _schedule(name: str, kind: type, default: Any, help: str, **bounds: Any) -> Setting:
    return Setting(name, kind, default, help, schedule=True, **bounds)


PRETRAIN: tuple[Setting, ...] = (
    _schedule("max_steps", int, 1000, "optimizer steps to train", minimum=1),
    _schedule("learning_rate", float, 1e-4, "AdamW peak learning rate", above=0.0),
    _schedule("weight_decay", float, 0.01, "AdamW weight decay (not on biases and LayerNorm weights)", minimum=0.0),
    _schedule("warmup_ratio", float, 0.01, "share of the steps with a linear warmup (then linear decay)",
              minimum=0.0, maximum=1.0),
    _schedule("max_grad_norm", float, 1.0, "gradient clipping norm (0 = off)", minimum=0.0),
    _schedule("batch_size", int, 32, "sequences per batch and process", minimum=1),
    _schedule("gradient_accumulation_steps", int, 1, "batches accumulated into one optimizer step", minimum=1),
    _schedule("max_length", int, 128, "tokens per packed sequence, [CLS] and [SEP] included", minimum=8),
    _schedule("mlm_probability", float, 0.15, "share of each sequence's tokens to predict", above=0.0,
              maximum=0.5),
    _schedule("whole_word_mask", bool, True, "mask whole words (jieba segmentation); false: single tokens"),
    _schedule("eval_share", float, 0.01, "share of documents held out for evaluation", above=0.0, maximum=0.5),
    _schedule("eval_sequences", int, 512, "held-out sequences each evaluation scores (at most)", minimum=1),
    _schedule("mixed_precision", str, "auto", "auto: bf16 where the hardware computes it natively, else no",
              choices=("auto", "no", "bf16", "fp16")),
    Setting("eval_every", int, 500, "evaluate the held-out loss every N optimizer steps", minimum=1),
    Setting("eval_batch_size", int, 64, "sequences per evaluation batch and process", minimum=1),
    Setting("save_every", int, 1000, "checkpoint every N optimizer steps (0 = by time only)", minimum=0),
    Setting("save_every_seconds", int, 600, "checkpoint when this many seconds passed since the last (0 = off)",
            minimum=0),
    Setting("save_total_limit", int, 2, "checkpoints kept, newest first (0 = all)", minimum=0),
    Setting("bad_files", str, "refuse", "refuse: stop before training if a file is empty or not UTF-8; skip: "
            "name it and leave it out", choices=("refuse", "skip")),
    Setting("tokenize_workers", int, 0, "processes that segment and tokenize the corpus (0 = one per CPU, "
            "at most 8)", minimum=0),
    Setting("logging_steps", int, 50, "loss, learning rate and tokens/s reporting interval", minimum=1),
    Setting("progress", bool, True, "progress bar on a terminal (plain lines otherwise)"),
    Setting("trust_remote_code", bool, False, "allow checkpoints that ship their own model code"),
)
ALL: tuple[Setting, ...] = PRETRAIN + TINY
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


@dataclass(frozen=True)
class PretrainSettings:
    """The values of :data:`PRETRAIN`, typed; ``log_with`` for the shared accelerator factory."""

    max_steps: int
    learning_rate: float
    weight_decay: float
    warmup_ratio: float
    max_grad_norm: float
    batch_size: int
    gradient_accumulation_steps: int
    max_length: int
    mlm_probability: float
    whole_word_mask: bool
    eval_share: float
    eval_sequences: int
    mixed_precision: str
    eval_every: int
    eval_batch_size: int
    save_every: int
    save_every_seconds: int
    save_total_limit: int
    bad_files: str
    tokenize_workers: int
    logging_steps: int
    progress: bool
    trust_remote_code: bool
    log_with: str = ""

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> PretrainSettings:
        return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})


def _convert(setting: Setting, raw: Any) -> Any:
    where = f"setting '{setting.name}' (--set)"
    value: Any = raw
    if setting.type is bool:
        text = str(raw).strip().lower()
        if text not in _TRUE | _FALSE:
            raise ClueError(f"{where}: expected true or false, got {raw!r}")
        return text in _TRUE
    if setting.type in (int, float):
        try:
            number = float(raw)
        except ValueError:
            raise ClueError(f"{where}: expected a number, got {raw!r}") from None
        if not -float("inf") < number < float("inf"):  # nan, inf: a NaN passes every bound below
            raise ClueError(f"{where}: expected a finite number, got {raw!r}")
        if setting.type is int:
            if not number.is_integer():
                raise ClueError(f"{where}: expected a whole number, got {raw!r}")
            value = int(number)
        else:
            value = number
        for bound, ok, words in ((setting.minimum, lambda b: value >= b, "at least"),
                                 (setting.maximum, lambda b: value <= b, "at most"),
                                 (setting.above, lambda b: value > b, "greater than")):
            if bound is not None and not ok(bound):
                raise ClueError(f"{where}: must be {words} {bound}, got {raw!r}")
        return value
    if setting.choices and value not in setting.choices:
        raise ClueError(f"{where}: expected one of {', '.join(map(repr, setting.choices))}, got {raw!r}")
    return value


def resolve(pairs: Iterable[str], tiny: bool) -> dict[str, Any]:
    """Declared defaults under ``--set name=value`` pairs; ``tiny_*`` only for ``hf-tiny``."""
    declared = {s.name: s for s in (ALL if tiny else PRETRAIN)}
    values = {name: s.default for name, s in declared.items()}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ClueError(f"--set {pair!r}: expected name=value")
        if name not in declared:
            from difflib import get_close_matches

            close = get_close_matches(name, list(declared), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            only = " (tiny_* settings are for --model hf-tiny)" if name.startswith("tiny_") else ""
            raise ClueError(f"unknown setting '{name}' (--set){hint}{only}; 'clue-core pretrain --help' lists them")
        values[name] = _convert(declared[name], raw.strip())
    if tiny and values["tiny_hidden_size"] % values["tiny_num_heads"]:
        raise ClueError(f"setting 'tiny_num_heads' ({values['tiny_num_heads']}) must divide tiny_hidden_size "
                        f"({values['tiny_hidden_size']})")
    return values


def schedule_names() -> set[str]:
    return {s.name for s in ALL if s.schedule}


def settings_help() -> str:
    return "\n".join(f"  {s.name} = {s.default!r}: {s.help}" for s in ALL)
