"""The measurements of ``benchmarks/train_throughput.py`` (a helper, not a script).

Batch shapes and real tokens, the CPU share other processes take meanwhile, matmul and FLOP
rates, and the timed passes (:class:`Timed`) the arms produce.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from clue_core.plugin import Prediction

# ---- measurement helpers --------------------------------------------------------------------------


@dataclass
class Shapes:
    """(rows, width, real tokens) of every batch a collator produced."""

    batches: list[tuple[int, int, int]] = field(default_factory=list)

    def add(self, mask: torch.Tensor) -> None:
        self.batches.append((int(mask.shape[0]), int(mask.shape[1]), int(mask.sum())))

    @property
    def real_share(self) -> float:
        total = sum(rows * width for rows, width, _ in self.batches)
        return sum(real for *_, real in self.batches) / max(1, total)

    @property
    def examples(self) -> int:
        return sum(rows for rows, _, _ in self.batches)


def counting(collate: Callable[[Any], dict[str, Any]], shapes: Shapes) -> Callable[[Any], dict[str, Any]]:
    """The same collator, recording the shape and real tokens of each batch it returns."""

    def wrapped(items: Any) -> dict[str, Any]:
        batch = collate(items)
        shapes.add(torch.as_tensor(batch["attention_mask"]))
        return batch

    return wrapped


class OtherLoad:
    """How much of the machine other processes used while a run was timed (0 = a quiet run).

    On two cores one busy neighbour takes half the machine, and two-thread kernels that
    wait for each other slow down far more than that; runs report this figure so a
    contended one can be recognised (and best-of-N usually skips it).
    """

    def __init__(self) -> None:
        self.start = self._sample()

    @staticmethod
    def _sample() -> tuple[float, float, float] | None:
        try:
            fields = [float(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        except (OSError, ValueError):
            return None
        ticks = os.sysconf("SC_CLK_TCK")
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)
        own = sum(os.times()[:2])
        return sum(fields) / ticks, idle / ticks, own

    def share(self) -> float | None:
        end = self._sample()
        if self.start is None or end is None:
            return None
        total, idle, own = (b - a for a, b in zip(self.start, end))
        return max(0.0, (total - idle - own) / total) if total > 0 else None


def contended(timed: Any) -> bool:
    """Other processes took more than a tenth of the machine during the pass."""
    return timed.others is not None and timed.others > 0.1


def wait_for_quiet(limit: float) -> None:
    """Wait (at most ``limit`` seconds) for half a second in which others use under a tenth of the CPUs."""
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        probe = OtherLoad()
        time.sleep(0.5)
        share = probe.share()
        if share is None or share < 0.1:
            return


def matmul_rate(dtype: torch.dtype, n: int, seconds: float) -> float:
    """FLOP/s of an n×n matmul in ``dtype`` (at least one timed call, else ``seconds`` worth)."""
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    a @ b
    calls, started = 0, time.perf_counter()
    while True:
        a @ b
        calls += 1
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return 2 * n**3 * calls / elapsed


def native_bf16() -> bool:
    from clue_models_hf.runtime import native_cpu_bf16

    return (torch.cuda.is_available() and torch.cuda.is_bf16_supported()) or native_cpu_bf16()


class FlopModel:
    """Training FLOPs of one batch shape, from ``FlopCounterMode`` on the real model.

    A BERT step costs ``rows × (p + q·width + r·width²)`` FLOPs (linear layers per token,
    attention per token pair, a per-row head); three measured widths give p, q and r.
    """

    def __init__(self, build: Callable[[], Any], vocab: int) -> None:
        from torch.utils.flop_counter import FlopCounterMode

        model = build()
        model.train()
        widths, totals = (16, 64, 128), []
        for width in widths:
            ids = torch.randint(5, vocab, (2, width))
            counter = FlopCounterMode(display=False)
            with counter:
                out = model(input_ids=ids, attention_mask=torch.ones_like(ids), labels=torch.zeros(2, dtype=torch.long))
                out.loss.backward()
            totals.append(counter.get_total_flops() / 2)
        matrix = torch.tensor([[1.0, w, w * w] for w in widths], dtype=torch.float64)
        self.coefficients = torch.linalg.solve(matrix, torch.tensor(totals, dtype=torch.float64)).tolist()

    def step(self, rows: int, width: int) -> float:
        p, q, r = self.coefficients
        return rows * (p + q * width + r * width * width)

    def total(self, shapes: Shapes) -> float:
        return sum(self.step(rows, width) for rows, width, _ in shapes.batches)


@dataclass
class Timed:
    """One timed training or prediction pass of one arm."""

    seconds: float
    examples: int
    shapes: Shapes
    #: share of the machine other processes used meanwhile (None where unknown)
    others: float | None = None
    accuracy: float | None = None
    #: clue-core only: the training loss of every step and when every step ended (perf_counter)
    losses: list[float] = field(default_factory=list)
    step_ends: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.examples / self.seconds


@dataclass
class Trained:
    """A trained arm: its training pass and how to predict the dev set with it."""

    train: Timed
    predict: Callable[[], Timed]
    #: clue-core only: the trained learner (for benchmarks/profile_predict.py)
    learner: Any = None


def timed_prediction(predict: Callable[[], Sequence[Prediction]], shapes: Shapes, score: Callable[..., float]
                     ) -> Timed:
    shapes.batches.clear()
    load = OtherLoad()
    started = time.perf_counter()
    predictions = predict()
    seconds = time.perf_counter() - started
    return Timed(seconds, len(predictions), Shapes(list(shapes.batches)), load.share(), score(predictions))


def percent(value: float | None) -> str:
    return "?" if value is None else f"{value:.0%}"
