"""The pre-training loop: fine-tuning's Accelerate loop, for masked-LM on packed sequences.

It shares the pieces of :mod:`clue_models_hf.training` (AdamW with the no-decay groups,
the linear warmup schedule, the accelerator) and its checkpoints
(:mod:`clue_models_hf.checkpoints`): Accelerate's state plus ``trainer_state.json``
written last, every ``save_every`` steps or ``save_every_seconds``. Batches come from a
permutation of the sequence indices by ``(seed, epoch)``; resuming skips the batches of
the epoch already seen, so a resumed run ends with the weights an uninterrupted one has.

SIGINT and SIGTERM do not kill the loop mid-step: the current step finishes, a checkpoint
is written, and :class:`Interrupted` is raised (with several processes they agree on the
step, through one small all-reduce per step). A second signal stops at once.
"""

from __future__ import annotations

import random
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader

from clue_core.plugin import write_json
from clue_models_hf.checkpoints import CHECKPOINTS, STATE_FILE, load_checkpoint, save_checkpoint
from clue_models_hf.mlm import MaskingCollator
from clue_models_hf.pretrain_settings import PretrainSettings
from clue_models_hf.runtime import prepare_loader
from clue_models_hf.training import linear_schedule, make_optimizer, no_decay


class Interrupted(Exception):
    """A signal stopped training after a checkpoint at ``step``."""

    def __init__(self, step: int, checkpoint: Path) -> None:
        super().__init__(f"interrupted at step {step}; checkpoint {checkpoint.name} saved")
        self.step, self.checkpoint = step, checkpoint


@dataclass
class PretrainState:
    global_step: int = 0
    epoch: int = 0
    batches_in_epoch: int = 0
    total_steps: int = 0
    world_size: int = 1
    #: seconds in the loop (evaluations and checkpoints excluded) and token positions trained, summed over resumes
    train_runtime: float = 0.0
    train_tokens: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)


class EpochBatches:
    """Full batches of a permutation of ``range(count)`` from ``(seed, epoch)``; the short tail is dropped."""

    def __init__(self, count: int, batch_size: int, seed: int) -> None:
        self.count, self.batch_size, self.seed, self.epoch = count, batch_size, seed, 0
        self.drop_last = True

    def use_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.count // self.batch_size

    def __iter__(self) -> Iterator[list[int]]:
        order = list(range(self.count))
        random.Random(self.seed * 1_000_003 + self.epoch).shuffle(order)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            yield order[start:start + self.batch_size]


class PretrainLoop:
    def __init__(self, accelerator: Any, module: Any, settings: PretrainSettings, output_dir: Path, seed: int,
                 log: Callable[[str], None], resume: bool) -> None:
        self.acc, self.module, self.settings = accelerator, module, settings
        self.output_dir, self.seed, self.log, self.resume = Path(output_dir), seed, log, resume
        self.state = PretrainState(world_size=accelerator.num_processes)
        self._stop_requested = False
        self._last_save = time.monotonic()
        self._clock = time.perf_counter()

    def after_step(self, step: int) -> None:
        """Called after every optimizer step; tests replace it to simulate a kill."""

    # ---- the loop -------------------------------------------------------------------------
    def train(self, train_set: Any, eval_set: Any, collator: MaskingCollator, eval_collator: MaskingCollator
              ) -> PretrainState:
        s, acc = self.settings, self.acc
        sampler = EpochBatches(len(train_set), s.batch_size, self.seed)
        # loaders own their generators: an iterator made on resume must not draw from the global RNG
        loader = DataLoader(train_set, batch_sampler=sampler, collate_fn=collator,
                            generator=torch.Generator().manual_seed(self.seed))
        groups = [{"params": [p for n, p in self.module.named_parameters() if not no_decay(n)],
                   "weight_decay": s.weight_decay},
                  {"params": [p for n, p in self.module.named_parameters() if no_decay(n)], "weight_decay": 0.0}]
        optimizer = make_optimizer(groups, s.learning_rate, acc.device)
        optimizer, loader = acc.prepare(optimizer, loader)
        per_epoch = max(1, len(loader) // s.gradient_accumulation_steps)
        total = s.max_steps
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer.optimizer,
                                                      linear_schedule(round(total * s.warmup_ratio), total))
        acc.register_for_checkpointing(scheduler)
        self.state.total_steps = total
        if self.resume:
            self._resume()
        evaluator = prepare_loader(acc, DataLoader(eval_set, batch_size=s.eval_batch_size, collate_fn=eval_collator,
                                                   generator=torch.Generator()))
        if not self.state.history:
            self._evaluate(evaluator)
        tokens_per_batch = s.batch_size * s.max_length * acc.num_processes
        self.log(f"pre-training: {len(train_set)} sequences of {s.max_length} tokens, {total} steps "
                 f"({per_epoch} per epoch), batch {s.batch_size} × {acc.num_processes} process(es) × "
                 f"{s.gradient_accumulation_steps}, learning rate {s.learning_rate:g}, mixed precision "
                 f"{acc.mixed_precision}")
        bar = _Progress(total, self.state.global_step, s, acc.is_local_main_process)
        running, seen = torch.zeros((), device=acc.device), 0
        self._clock = time.perf_counter()
        window = (time.perf_counter(), self.state.train_tokens)
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        for sig in previous:
            signal.signal(sig, self._on_signal)
        try:
            epoch = self.state.epoch
            while self.state.global_step < total:
                sampler.use_epoch(epoch)
                collator.use_epoch(epoch)
                skip = self.state.batches_in_epoch if epoch == self.state.epoch else 0
                position = skip
                self.module.train()
                for batch in acc.skip_first_batches(loader, skip) if skip else loader:
                    with acc.accumulate(self.module):
                        loss, _, _ = self.module(batch["input_ids"], batch["attention_mask"], batch["labels"])
                        acc.backward(loss)
                        if acc.sync_gradients and s.max_grad_norm > 0:
                            acc.clip_grad_norm_(self.module.parameters(), s.max_grad_norm)
                        optimizer.step()
                        if acc.sync_gradients and not acc.optimizer_step_was_skipped:
                            scheduler.step()
                        optimizer.zero_grad()
                    position += 1
                    self.state.train_tokens += tokens_per_batch
                    running += loss.detach()
                    seen += 1
                    if not acc.sync_gradients:
                        continue
                    self.state.global_step += 1
                    self.state.epoch, self.state.batches_in_epoch = epoch, position
                    step = self.state.global_step
                    if step % s.logging_steps == 0 or step == total:
                        loss_value = acc.reduce(running, reduction="mean").item() / max(1, seen)
                        window = bar.report(step, loss_value, scheduler.get_last_lr()[0], window,
                                            self.state.train_tokens)
                        running, seen = torch.zeros((), device=acc.device), 0
                    bar.update(step)
                    if step % s.eval_every == 0 and step < total:
                        self._paused(lambda: self._evaluate(evaluator))
                    self.after_step(step)
                    stop, due = self._decide(step)
                    if due or stop:
                        folder = self._paused(self._checkpoint)
                        if stop:
                            raise Interrupted(step, folder)
                    if step >= total:
                        break
                if self.state.global_step < total:
                    epoch += 1
                    self.state.epoch, self.state.batches_in_epoch = epoch, 0
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            bar.close()
        self._fold()
        if self.state.history[-1]["step"] != self.state.global_step:
            self._evaluate(evaluator)
        if acc.is_main_process:
            write_json(self.output_dir / STATE_FILE, asdict(self.state))
        return self.state

    # ---- pieces ---------------------------------------------------------------------------
    def _on_signal(self, signum: int, frame: Any) -> None:
        if self._stop_requested:
            raise KeyboardInterrupt
        self._stop_requested = True
        self.log(f"{signal.Signals(signum).name}: finishing this step, then a checkpoint (again to stop at once)")

    def _decide(self, step: int) -> tuple[bool, bool]:
        """(stop, checkpoint due), the same on every process."""
        s = self.settings
        due = bool(s.save_every and step % s.save_every == 0)
        timed = bool(s.save_every_seconds and time.monotonic() - self._last_save >= s.save_every_seconds)
        stop = self._stop_requested
        if self.acc.num_processes > 1:
            flags = torch.tensor([float(stop), float(timed and self.acc.is_main_process)], device=self.acc.device)
            stop, timed = (bool(v) for v in (self.acc.reduce(flags, reduction="sum") > 0).tolist())
        return stop, due or timed

    def _fold(self) -> None:
        now = time.perf_counter()
        self.state.train_runtime += now - self._clock
        self._clock = now

    def _paused(self, work: Callable[[], Any]) -> Any:
        """Evaluations and checkpoints are not training: their time stays out of ``train_runtime``."""
        self._fold()
        try:
            return work()
        finally:
            self._clock = time.perf_counter()

    def _evaluate(self, loader: Any) -> float:
        acc = self.acc
        was_training = self.module.training
        self.module.eval()
        total = torch.zeros(2, dtype=torch.float64, device=acc.device)
        with torch.no_grad():
            for batch in loader:
                _, sums, counts = self.module(batch["input_ids"], batch["attention_mask"], batch["labels"])
                sums, counts = acc.gather_for_metrics((sums, counts))
                total += torch.stack((sums.double().sum(), counts.double().sum()))
        self.module.train(was_training)
        loss = float(total[0] / total[1]) if total[1] else float("nan")
        self.state.history.append({"step": self.state.global_step, "eval_loss": loss,
                                   "eval_tokens": int(total[1])})
        self.log(f"step {self.state.global_step}: held-out MLM loss {loss:.4f}")
        return loss

    def _checkpoint(self) -> Path:
        self._last_save = time.monotonic()
        return save_checkpoint(self.acc, self.output_dir, self.state.global_step, asdict(self.state),
                               self.settings.save_total_limit)

    def _resume(self) -> None:
        loaded = load_checkpoint(self.acc, self.output_dir)
        if loaded is None:
            self.log(f"resume: no checkpoint in {self.output_dir / CHECKPOINTS}; starting from the beginning")
            return
        checkpoint, saved = loaded
        saved["world_size"] = self.acc.num_processes
        self.state = PretrainState(**saved)
        self.log(f"resume: continuing from {checkpoint.name} (step {self.state.global_step} of "
                 f"{self.state.total_steps})")


class _Progress:
    """A tqdm bar with tokens/s on a terminal; plain lines every ``logging_steps`` elsewhere."""

    def __init__(self, total: int, initial: int, settings: PretrainSettings, main: bool) -> None:
        self.total, self.main = total, main
        self.tty = settings.progress and main and sys.stderr.isatty()
        self.bar: Any = None
        if self.tty:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=initial, desc="pretrain", unit="step", dynamic_ncols=True,
                            leave=False)
        self.shown = initial

    def update(self, step: int) -> None:
        if self.bar is not None:
            self.bar.update(step - self.shown)
        self.shown = step

    def report(self, step: int, loss: float, lr: float, window: tuple[float, int], tokens: int
               ) -> tuple[float, int]:
        now = time.perf_counter()
        rate = (tokens - window[1]) / max(1e-9, now - window[0])
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{loss:.4f}", lr=f"{lr:.2e}", tok_s=f"{rate:,.0f}")
        elif self.main:
            print(f"step {step}/{self.total}  loss {loss:.4f}  lr {lr:.2e}  {rate:,.0f} tokens/s", file=sys.stderr,
                  flush=True)
        return now, tokens

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

