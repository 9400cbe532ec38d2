"""The set-up of ``benchmarks/train_throughput.py`` (a helper, not a script): what every arm trains.

The shared hyperparameters and model sizes, the synthetic CLUE-like data, and the clue-core
learner built as ``clue-core run`` builds it, with the probe that records its losses and steps.
``benchmarks/bf16_profile.py`` trains the same.
"""

from __future__ import annotations

import os
import random
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from clue_core.plugin import ClassificationExample, TaskSpec

MAX_LENGTH = 128
BATCH_SIZE = 32
EVAL_BATCH_SIZE = 64
LEARNING_RATE = 1e-3
SEED = 13

SIZES: dict[str, dict[str, int]] = {
    "small": {"tiny_hidden_size": 128, "tiny_num_layers": 4, "tiny_num_heads": 4, "tiny_intermediate_size": 512},
    "base": {"tiny_hidden_size": 768, "tiny_num_layers": 12, "tiny_num_heads": 12, "tiny_intermediate_size": 3072},
}


# ---- synthetic CLUE-like data ------------------------------------------------------------------

ALPHABET = [chr(0x4E00 + i) for i in range(3000)]
#: Zipf-like character frequencies, as in real Chinese text
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(ALPHABET))]
#: one marker character per label, outside the background alphabet: the learnable signal
MARKERS = [chr(0x6000 + i) for i in range(64)]


@dataclass(frozen=True)
class Distribution:
    name: str
    description: str
    lengths: tuple[int, int]
    pair: bool
    labels: int


DISTRIBUTIONS = (
    Distribution("tnews", "TNEWS-like titles, 10-40 chars", (10, 40), False, 15),
    Distribution("afqmc", "AFQMC-like pairs, 10-30 chars each", (10, 30), True, 2),
    Distribution("iflytek", "IFLYTEK-like texts, 100-500 chars", (100, 500), False, 20),
)


def make_examples(dist: Distribution, count: int, seed: int) -> list[ClassificationExample]:
    """Random texts of the distribution's lengths; the label's marker sits in the first 60 characters."""
    rng = random.Random(seed)

    def text(low: int, high: int, marker: str | None) -> str:
        chars = rng.choices(ALPHABET, WEIGHTS, k=rng.randint(low, high))
        if marker is not None:
            chars[rng.randrange(min(60, len(chars)))] = marker
        return "".join(chars)

    examples = []
    for i in range(count):
        label = rng.randrange(dist.labels)
        first = text(*dist.lengths, MARKERS[label])
        second = text(*dist.lengths, MARKERS[label] if label else None) if dist.pair else None
        examples.append(ClassificationExample(i, first, second, str(label)))
    return examples


# ---- the clue-core learner, as a run builds it ----------------------------------------------------


def hf_tiny_learner(task: TaskSpec, values: Mapping[str, Any]) -> Any:
    """``hf-tiny`` for ``task`` with ``values`` given as a user would (``--set``).

    The model spec comes from the plugin's hook and the kernel merges its declared defaults,
    the task's and the model's recommendations and ``values``, converting and checking every
    one, as ``clue-core run`` does; the factory then gets exactly the declared settings.
    """
    from clue_core.run_settings import Layer, merge_declarations, plugin_layers, resolve
    from clue_core.specs import resolve as resolve_ref
    from clue_models_hf.hooks import TINY_NAME, clue_models

    spec = next(m for m in clue_models() if m.name == TINY_NAME)
    declared = merge_declarations(spec.settings, f"model {spec.name}")
    layers = [*plugin_layers(task, spec, spec.name), Layer("benchmark", dict(values), user=True)]
    settings = resolve(declared, layers)
    return resolve_ref(spec.factory)(None, task, settings.values_for(spec.settings))


@contextmanager
def training_probe(losses: list[torch.Tensor], step_ends: list[float]) -> Iterator[None]:
    """Record every training loss (detached: no synchronisation) and when every optimizer step ended.

    Instrumented, not replaced: the loop's own forward (``clue_models_hf.training.forward``)
    runs and its loss is kept; ``Trainer.after_step`` is the loop's hook after each step.
    """
    from clue_models_hf import training

    forward, after_step = training.forward, training.Trainer.after_step

    def recording(model: Any, batch: dict[str, torch.Tensor], kind: str, with_loss: bool) -> Any:
        loss, outputs = forward(model, batch, kind, with_loss)
        if with_loss and loss is not None:
            losses.append(loss.detach())
        return loss, outputs

    def stamp(self: Any, step: int) -> None:
        step_ends.append(time.perf_counter())
        after_step(self, step)

    training.forward, training.Trainer.after_step = recording, stamp  # type: ignore[method-assign]
    try:
        yield
    finally:
        training.forward, training.Trainer.after_step = forward, after_step  # type: ignore[method-assign]


def quiet(line: str) -> None:
    """The run context's echo: the learner's log lines are not part of the report."""


def quiet_libraries() -> None:
    warnings.filterwarnings("ignore")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
