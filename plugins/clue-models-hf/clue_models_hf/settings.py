"""The run config keys the Hugging Face learner reads, checked once with clear errors.

Values come from the flat config the runner resolves (task < model < config file <
``--set``), so a typo or a wrong type must end in one ``error:`` line naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from clue_core.errors import ClueError

MIXED_PRECISION = ("no", "bf16", "fp16")


@dataclass(frozen=True)
class Settings:
    learning_rate: float = 2e-5
    epochs: int = 3
    batch_size: int = 32
    eval_batch_size: int = 64
    max_length: int = 128
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    gradient_accumulation_steps: int = 1
    max_grad_norm: float = 1.0
    seed: int = 42
    doc_stride: int = 128
    max_query_length: int = 64
    max_answer_length: int = 50
    n_best: int = 20
    mixed_precision: str = "no"
    eval_every: str | int = "epoch"
    early_stopping_patience: int = 0
    save_every: int = 0
    save_total_limit: int = 2
    resume: bool = False
    max_steps: int = 0
    trust_remote_code: bool = False
    log_with: str = ""
    logging_steps: int = 10
    progress: bool = True
    primary_metric: str = "accuracy"

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Settings:
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in config or config[f.name] is None:
                continue
            values[f.name] = _coerce(f.name, config[f.name], f.default)
        settings = cls(**values)
        settings._check()
        return settings

    def _check(self) -> None:
        positive = ("epochs", "batch_size", "eval_batch_size", "max_length", "gradient_accumulation_steps",
                    "max_query_length", "max_answer_length", "n_best", "logging_steps")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ClueError(f"config key '{name}': must be positive, got {getattr(self, name)}")
        for name in ("early_stopping_patience", "save_every", "max_steps", "doc_stride", "save_total_limit"):
            if getattr(self, name) < 0:
                raise ClueError(f"config key '{name}': must not be negative, got {getattr(self, name)}")
        if self.learning_rate <= 0:
            raise ClueError(f"config key 'learning_rate': must be positive, got {self.learning_rate}")
        if not 0 <= self.warmup_ratio < 1:
            raise ClueError(f"config key 'warmup_ratio': must be in [0, 1), got {self.warmup_ratio}")
        if self.mixed_precision not in MIXED_PRECISION:
            raise ClueError(f"config key 'mixed_precision': expected one of {', '.join(MIXED_PRECISION)}, "
                            f"got {self.mixed_precision!r}")
        if self.eval_every != "epoch" and (not isinstance(self.eval_every, int) or self.eval_every <= 0):
            raise ClueError(f"config key 'eval_every': expected 'epoch' or a positive number of steps, "
                            f"got {self.eval_every!r}")
        if self.log_with not in ("", "tensorboard"):
            raise ClueError(f"config key 'log_with': only 'tensorboard' is supported, got {self.log_with!r}")


def _coerce(name: str, value: Any, default: Any) -> Any:
    """Accept what ``--set`` and config files produce (``"1e-4"``, ``"true"``); reject the rest."""
    if name == "eval_every":
        if value == "epoch":
            return value
        name_type: type = int
    else:
        name_type = type(default)
    try:
        if name_type is bool:
            if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
                return value.lower() in ("true", "yes", "1")
            if isinstance(value, bool) or value in (0, 1):
                return bool(value)
            raise ValueError
        if name_type is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        if name_type is float:
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if name_type is str:
            return str(value)
    except (TypeError, ValueError):
        pass
    expected = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}[name_type]
    raise ClueError(f"config key '{name}': expected {expected}, got {value!r}")
