"""The Accelerate training loop: accumulation, clipping, warmup, evaluation, checkpoints, resume.

Checkpoints (``save_every`` steps) hold Accelerate's state (model, optimizer, scheduler,
every process's RNG) plus ``trainer_state.json``, written last: a checkpoint without it
is incomplete and ignored. Resuming loads the newest complete checkpoint and skips the
batches of the current epoch already seen; batch order comes from ``(seed, epoch)`` and
the loaders own their generators, so nothing else touches the RNG streams and the
resumed run ends where the uninterrupted one would have (same seed, CPU).

The best model by the task's primary dev metric is kept in ``best/`` and restored at the
end of training.

The state also records throughput: seconds spent in the loop (evaluations and checkpoints
excluded), examples trained and the share of processed tokens that are real rather than
padding, so a slow run says why (``benchmarks/train_throughput.py`` reads these too).
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader

from clue_core.plugin import ClueError, write_json
from clue_models_hf.batching import Collator, LengthGroupedBatches
from clue_models_hf.checkpoints import CHECKPOINTS, STATE_FILE, latest_checkpoint, load_checkpoint, save_checkpoint
from clue_models_hf.encoding import Features
from clue_models_hf.heads import forward
from clue_models_hf.runtime import native_cpu_bf16
from clue_models_hf.settings import Settings

BEST = "best"
#: re-exported: the checkpoint layout lives in :mod:`clue_models_hf.checkpoints`
__all__ = ["BEST", "CHECKPOINTS", "STATE_FILE", "Trainer", "TrainerState", "latest_checkpoint"]


@dataclass
class TrainerState:
    global_step: int = 0
    epoch: int = 0
    batches_in_epoch: int = 0
    best_metric: float | None = None
    best_step: int | None = None
    bad_evaluations: int = 0
    last_evaluated_step: int | None = None
    stopped_early: bool = False
    world_size: int = 1
    total_steps: int = 0
    #: seconds in the training loop, evaluations and checkpoints excluded (summed over resumes)
    train_runtime: float = 0.0
    #: examples and token positions processed by all processes; real tokens exclude padding
    train_examples: int = 0
    train_tokens: int = 0
    train_real_tokens: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)


def no_decay(name: str) -> bool:
    """Biases and normalisation weights are not decayed (the usual BERT recipe)."""
    lowered = name.lower()
    return name.endswith("bias") or "layernorm" in lowered or "layer_norm" in lowered or ".norm" in lowered


def make_optimizer(groups: list[dict[str, Any]], learning_rate: float, device: torch.device) -> torch.optim.AdamW:
    """AdamW, fused into one kernel per step where PyTorch has one for the device.

    The plain implementation launches a dozen small operations per parameter tensor; on a
    CPU that costs a small model as much as a tenth of its step (see docs/models-hf.md).
    """
    fused = device.type in ("cpu", "cuda") and all(p.is_floating_point() for g in groups for p in g["params"])
    return torch.optim.AdamW(groups, lr=learning_rate, fused=fused or None)


def linear_schedule(warmup: int, total: int) -> Callable[[int], float]:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        return max(0.0, (total - step) / max(1, total - warmup))
    return factor


class Trainer:
    """Fine-tunes one prepared model; ``evaluate()`` returns dev metrics of the current weights."""

    def __init__(self, accelerator: Any, model: Any, kind: str, settings: Settings, output_dir: Path,
                 evaluate: Callable[[], dict[str, float]] | None, save_best: Callable[[Path], None],
                 log: Callable[[str], None], *, seed: int, resume: bool = False,
                 primary_metric: str = "accuracy") -> None:
        self.accelerator = accelerator
        self.seed = seed
        self.resume = resume
        self.primary_metric = primary_metric
        self.model = model
        self.kind = kind
        self.settings = settings
        self.output_dir = output_dir
        self.evaluate = evaluate
        self.save_best = save_best
        self.log = log
        self.state = TrainerState(world_size=accelerator.num_processes)
        self._clock = time.perf_counter()
        #: this process's examples, token positions and real tokens since the last fold into the state
        self._counts = torch.zeros(3, dtype=torch.long, device=accelerator.device)

    # ---- the loop -------------------------------------------------------------------------
    def train(self, features: Features, collator: Collator) -> None:
        """Train the model, which the caller has already passed through ``accelerator.prepare``."""
        s, acc = self.settings, self.accelerator
        if not len(features):
            raise ClueError("no training examples (pass --no-train to predict with the model as it is)")
        self._clock = time.perf_counter()
        sampler = LengthGroupedBatches(features.lengths, s.batch_size, self.seed)
        dataset = [dict(item, index=i) for i, item in enumerate(features.items)]
        loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=collator,
                            generator=torch.Generator().manual_seed(self.seed))
        learning_rate = s.effective_learning_rate
        optimizer = make_optimizer(self._parameter_groups(), learning_rate, acc.device)
        optimizer, loader = acc.prepare(optimizer, loader)
        model = self.model
        steps_per_epoch = math.ceil(len(loader) / s.gradient_accumulation_steps)
        total = s.max_steps or s.effective_epochs * steps_per_epoch
        epochs = math.ceil(total / steps_per_epoch)
        warmup = round(total * s.warmup_ratio)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer.optimizer, linear_schedule(warmup, total))
        acc.register_for_checkpointing(scheduler)
        self.state.total_steps = total
        if self.resume:
            self._resume()
        if s.log_with:
            acc.init_trackers("clue", config={k: v for k, v in asdict(s).items()
                                              if isinstance(v, int | float | str | bool)})
        self.log(f"training: {len(features)} features, {total} steps ({epochs} epochs × {steps_per_epoch}), "
                 f"learning rate {learning_rate:g}, world size {acc.num_processes}, "
                 f"mixed precision {s.mixed_precision}")
        if s.mixed_precision == "bf16" and acc.device.type == "cpu" and not native_cpu_bf16():
            self.log("note: this CPU has no native bf16 (AVX512-BF16/AMX); bf16 runs emulated, many times slower "
                     "than fp32 (mixed_precision=no is the fast choice here)")
        progress = self._progress(total)
        running, seen = torch.zeros((), device=acc.device), 0
        finished = self.state.global_step >= total or self.state.stopped_early
        for epoch in range(self.state.epoch, epochs):
            if finished:
                break
            sampler.use_epoch(epoch)
            skip = self.state.batches_in_epoch if epoch == self.state.epoch else 0
            batches = acc.skip_first_batches(loader, skip) if skip else loader
            position = skip
            model.train()
            for batch in batches:
                self._count(batch)
                with acc.accumulate(model):
                    loss, _ = forward(model, batch, self.kind, with_loss=True)
                    acc.backward(loss)
                    if acc.sync_gradients and s.max_grad_norm > 0:
                        acc.clip_grad_norm_(model.parameters(), s.max_grad_norm)
                    optimizer.step()
                    if acc.sync_gradients and not acc.optimizer_step_was_skipped:
                        scheduler.step()
                    optimizer.zero_grad()
                position += 1
                running += loss.detach()
                seen += 1
                if not acc.sync_gradients:
                    continue
                self.state.global_step += 1
                self.state.epoch, self.state.batches_in_epoch = epoch, position
                progress.update(1)
                if self.state.global_step % s.logging_steps == 0:
                    self._log_loss(running, seen, scheduler, progress)
                    running, seen = torch.zeros((), device=acc.device), 0
                if isinstance(s.eval_every, int) and self.state.global_step % s.eval_every == 0:
                    with self._paused():
                        self._evaluate()
                if s.save_every and self.state.global_step % s.save_every == 0:
                    with self._paused():
                        self._checkpoint()
                self.after_step(self.state.global_step)
                if self.state.stopped_early or self.state.global_step >= total:
                    finished = True
                    break
            if not finished or position >= len(loader):
                self.state.epoch, self.state.batches_in_epoch = epoch + 1, 0
                if s.eval_every == "epoch":
                    with self._paused():
                        self._evaluate()
            if self.state.stopped_early:
                finished = True
        self._fold()
        self._report_throughput()
        if self.state.last_evaluated_step != self.state.global_step:
            self._evaluate()
        progress.close()
        if s.log_with:
            acc.end_training()
        if acc.is_main_process:
            write_json(self.output_dir / STATE_FILE, asdict(self.state))

    def after_step(self, step: int) -> None:
        """Called after every optimizer step; tests replace it to simulate an interruption."""

    # ---- pieces ---------------------------------------------------------------------------
    def _count(self, batch: dict[str, torch.Tensor]) -> None:
        mask = batch["attention_mask"]
        self._counts[0] += batch["index"].numel()
        self._counts[1] += mask.numel()
        self._counts[2] += mask.sum()  # stays on the device: no synchronisation per batch

    def _fold(self) -> None:
        """Add the loop time and this stretch's counts (summed over processes) to the state."""
        now = time.perf_counter()
        self.state.train_runtime += now - self._clock
        self._clock = now
        examples, tokens, real = (int(v) for v in self.accelerator.reduce(self._counts, reduction="sum").tolist())
        self._counts.zero_()
        self.state.train_examples += examples
        self.state.train_tokens += tokens
        self.state.train_real_tokens += real

    @contextmanager
    def _paused(self) -> Iterator[None]:
        """Evaluations and checkpoints are not training: their time stays out of ``train_runtime``."""
        self._fold()
        try:
            yield
        finally:
            self._clock = time.perf_counter()

    def _report_throughput(self) -> None:
        st = self.state
        if st.train_runtime <= 0 or not st.train_examples:
            return
        share = st.train_real_tokens / max(1, st.train_tokens)
        self.log(f"trained {st.train_examples} examples in {st.train_runtime:.1f} s "
                 f"({st.train_examples / st.train_runtime:.1f} examples/s, {share:.1%} of tokens real)")

    def _parameter_groups(self) -> list[dict[str, Any]]:
        decay, plain = [], []
        for name, parameter in self.model.named_parameters():
            if parameter.requires_grad:
                (plain if no_decay(name) else decay).append(parameter)
        return [{"params": decay, "weight_decay": self.settings.weight_decay},
                {"params": plain, "weight_decay": 0.0}]

    def _progress(self, total: int) -> Any:
        from tqdm.auto import tqdm

        show = self.settings.progress and self.accelerator.is_local_main_process
        # disable=None: tqdm stays quiet when stderr is not a terminal (logs, CI)
        return tqdm(total=total, initial=self.state.global_step, disable=None if show else True, desc="train",
                    unit="step", dynamic_ncols=True, leave=False)

    def _log_loss(self, running: torch.Tensor, seen: int, scheduler: Any, progress: Any) -> None:
        loss = self.accelerator.reduce(running, reduction="mean").item() / max(1, seen)
        lr = scheduler.get_last_lr()[0]
        progress.set_postfix(loss=f"{loss:.4f}", lr=f"{lr:.2e}")
        if self.settings.log_with:
            self.accelerator.log({"train/loss": loss, "train/learning_rate": lr}, step=self.state.global_step)

    def _evaluate(self) -> None:
        self.state.last_evaluated_step = self.state.global_step
        if self.evaluate is None:
            return
        metrics = self.evaluate()
        primary = self.primary_metric
        if primary not in metrics:
            raise ClueError(f"the dev metrics {sorted(metrics)} lack the primary metric {primary!r}")
        value = float(metrics[primary])
        self.state.history.append({"step": self.state.global_step, "epoch": self.state.epoch, **metrics})
        if self.settings.log_with:
            self.accelerator.log({f"dev/{k}": v for k, v in metrics.items()}, step=self.state.global_step)
        improved = self.state.best_metric is None or value > self.state.best_metric
        self.log(f"step {self.state.global_step}: dev {primary} {value:.2f}"
                 + (" (best so far)" if improved else f" (best {self.state.best_metric:.2f})"))
        if improved:
            self.state.best_metric, self.state.best_step, self.state.bad_evaluations = value, self.state.global_step, 0
            self._save_best()
        else:
            self.state.bad_evaluations += 1
            patience = self.settings.early_stopping_patience
            if patience and self.state.bad_evaluations >= patience:
                self.state.stopped_early = True
                self.log(f"early stopping: no improvement in {patience} evaluations")
        self.model.train()

    def _save_best(self) -> None:
        acc = self.accelerator
        target = self.output_dir / BEST
        if acc.is_main_process:
            staging = self.output_dir / f".{BEST}.tmp"
            shutil.rmtree(staging, ignore_errors=True)
            try:
                self.save_best(staging)
                write_json(staging / "best.json", {"step": self.state.global_step, "metric": self.primary_metric,
                                                   "value": self.state.best_metric})
            except OSError:  # a disk fault: the half-written copy only takes space
                shutil.rmtree(staging, ignore_errors=True)
                raise
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)
        acc.wait_for_everyone()

    def _checkpoint(self) -> None:
        save_checkpoint(self.accelerator, self.output_dir, self.state.global_step, asdict(self.state),
                        self.settings.save_total_limit)

    def _resume(self) -> None:
        loaded = load_checkpoint(self.accelerator, self.output_dir)
        if loaded is None:
            self.log(f"resume: no checkpoint in {self.output_dir / CHECKPOINTS}; starting from the beginning")
            return
        checkpoint, saved = loaded
        saved["world_size"] = self.accelerator.num_processes
        self.state = TrainerState(**saved)
        self._clock = time.perf_counter()  # loading the checkpoint is not training
        self.log(f"resume: continuing from {checkpoint.name} (step {self.state.global_step} of "
                 f"{self.state.total_steps})")
