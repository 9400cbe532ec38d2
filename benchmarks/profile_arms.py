"""The two arms ``benchmarks/bf16_profile.py`` profiles (a helper, not a script), and how it runs them.

clue  ``HFLearner.fit`` with its loop annotated (forward, backward, clipping, collation)
plain the same model, initial weights and batches in a plain autocast loop
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from profile_steps import LABEL, PRECISIONS, Census, Profiled, summarise
from throughput_arms import Bench
from throughput_setup import SEED, hf_tiny_learner, quiet, training_probe
from torch.autograd.profiler import record_function
from torch.profiler import ProfilerActivity, profile, schedule

from clue_core.plugin import RunContext

# ---- the two arms ----------------------------------------------------------------------------------------


@contextmanager
def annotated_loop(step_hook: Callable[[int], None]) -> Iterator[None]:
    """Annotate clue-core's loop (forward, backward, clipping) and call ``step_hook`` after every step.

    Instrumented, not replaced: each wrapper runs the loop's own function inside a
    ``record_function`` range; ``Trainer.after_step`` is the loop's per-step hook.
    """
    from accelerate import Accelerator

    from clue_models_hf import training

    forward, after_step = training.forward, training.Trainer.after_step
    backward, clip = Accelerator.backward, Accelerator.clip_grad_norm_

    def annotated_forward(*args: Any, **kwargs: Any) -> Any:
        with record_function("clue::forward"):
            return forward(*args, **kwargs)

    def annotated_backward(self: Any, *args: Any, **kwargs: Any) -> Any:
        with record_function("clue::backward"):
            return backward(self, *args, **kwargs)

    def annotated_clip(self: Any, *args: Any, **kwargs: Any) -> Any:
        with record_function("clue::clip_grad_norm"):
            return clip(self, *args, **kwargs)

    def stepped(self: Any, step: int) -> None:
        after_step(self, step)
        step_hook(step)

    training.forward, training.Trainer.after_step = annotated_forward, stepped  # type: ignore[method-assign]
    Accelerator.backward, Accelerator.clip_grad_norm_ = annotated_backward, annotated_clip  # type: ignore[method-assign]
    try:
        yield
    finally:
        training.forward, training.Trainer.after_step = forward, after_step  # type: ignore[method-assign]
        Accelerator.backward, Accelerator.clip_grad_norm_ = backward, clip  # type: ignore[method-assign]


def clue_fit(bench: Bench, precision: str, folder: Path, batches: list[dict[str, torch.Tensor]] | None = None,
             **overrides: Any) -> None:
    """One ``HFLearner.fit``; collation is annotated, and ``batches`` collects what the collator produced."""
    learner = hf_tiny_learner(bench.task, {**bench.config, "mixed_precision": precision, **overrides})
    make_collator = learner._collator

    def collator() -> Callable[[Any], dict[str, torch.Tensor]]:
        collate = make_collator()

        def wrapped(items: Any) -> dict[str, torch.Tensor]:
            with record_function("clue::collate"):
                batch = collate(items)
            if batches is not None:
                batches.append({k: v.clone() for k, v in batch.items()})
            return batch
        return wrapped

    learner._collator = collator  # type: ignore[method-assign]  # instrumented, not replaced
    learner.fit(bench.train, [], RunContext(task=bench.task, seed=SEED, run_dir=folder, echo=quiet))


def plain_loop(bench: Bench, precision: str, batches: list[dict[str, torch.Tensor]],
               step_hook: Callable[[int], None]) -> list[float]:
    """The same model, initial weights and batches in a plain autocast loop; when every step ended."""
    model = bench.build_model()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=bench.config["learning_rate"], weight_decay=0.01,
                                  fused=True)
    inputs = ("input_ids", "attention_mask", "token_type_ids", "labels")
    ends = []
    for step, batch in enumerate(batches, 1):
        with record_function("clue::forward"), torch.autocast("cpu", torch.bfloat16, enabled=precision == "bf16"):
            loss = model(**{k: batch[k] for k in inputs if k in batch}).loss
        with record_function("clue::backward"):
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        ends.append(time.perf_counter())
        step_hook(step)
    return ends


def profiler(args: argparse.Namespace, name: str) -> Any:
    handler = None
    if args.trace:
        Path(args.trace).mkdir(parents=True, exist_ok=True)
        handler = torch.profiler.tensorboard_trace_handler(args.trace, worker_name=name)
    return profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                   schedule=schedule(wait=args.warmup - 1, warmup=1, active=args.steps, repeat=1),
                   on_trace_ready=handler)


def _median_step(ends: list[float], warmup: int) -> float:
    """Median seconds of the steps after the first ``warmup`` (``ends``: when each step ended)."""
    return statistics.median([b - a for a, b in itertools.pairwise(ends)][warmup - 1:])


def census_of_step(bench: Bench, precision: str, folder: Path) -> Census:
    """The census of clue-core's second training step (the first allocates the optimizer state)."""
    census = Census()

    def hook(step: int) -> None:
        census.counting = step == 1

    with census, annotated_loop(hook):
        clue_fit(bench, precision, folder, max_steps=2)
    return census


def measure(bench: Bench, args: argparse.Namespace) -> tuple[dict[tuple[str, str], Profiled], dict[str, Census]]:
    results: dict[tuple[str, str], Profiled] = {}
    censuses: dict[str, Census] = {}
    for precision in PRECISIONS:
        with tempfile.TemporaryDirectory(prefix="bf16-profile-") as folder:
            if precision == "bf16" and args.bf16_census_only:
                censuses[precision] = census_of_step(bench, precision, Path(folder) / "census")
                continue
            # unprofiled: the step times, and the batches the plain arm replays
            batches: list[dict[str, torch.Tensor]] = []
            losses: list[torch.Tensor] = []
            ends: list[float] = []
            with training_probe(losses, ends):
                clue_fit(bench, precision, Path(folder) / "timed", batches)
            del batches[bench.steps:]  # one the loader fetched ahead
            clue_seconds = _median_step(ends, args.warmup)
            plain_seconds = _median_step(plain_loop(bench, precision, batches, lambda step: None), args.warmup)
            widths = Counter(int(b["input_ids"].shape[1]) for b in batches)
            real = statistics.fmean(int(b["attention_mask"].sum()) for b in batches)
            print(f"  {LABEL[precision]}: {len(batches)} batches of widths {sorted(widths)} ({len(widths)} distinct, "
                  f"{real:.0f} real tokens per batch); unprofiled step (median of steps {args.warmup + 1}-"
                  f"{bench.steps}): clue {clue_seconds * 1000:.1f} ms, plain {plain_seconds * 1000:.1f} ms; clue "
                  f"loss at the last step {float(losses[-1]):.4f}", flush=True)
            with profiler(args, f"clue-{LABEL[precision]}") as prof, annotated_loop(lambda step: prof.step()):
                clue_fit(bench, precision, Path(folder) / "profiled")
            results[("clue", precision)] = summarise(prof, args.steps, clue_seconds)
            with profiler(args, f"plain-{LABEL[precision]}") as prof:
                plain_loop(bench, precision, batches, lambda step: prof.step())
            results[("plain", precision)] = summarise(prof, args.steps, plain_seconds)
            censuses[precision] = census_of_step(bench, precision, Path(folder) / "census")
    return results, censuses


def attention_kernels() -> str:
    """Which kernel ``scaled_dot_product_attention`` runs on bf16 inputs with a mask, with and without dropout."""
    q = torch.randn(2, 4, 16, 32, dtype=torch.bfloat16, requires_grad=True)
    mask = torch.zeros(2, 1, 16, 16, dtype=torch.bfloat16)
    found = []
    for dropout in (0.0, 0.1):
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            out = torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask, dropout_p=dropout)
            out.sum().backward()
        kernels = sorted({e.name.removeprefix("aten::") for e in prof.events()
                          if e.name.startswith("aten::_scaled_dot_product")})
        bmm = sorted({(e.input_dtypes or ["?"])[0] for e in prof.events() if e.name == "aten::bmm"})
        found.append(f"dropout_p {dropout:g}: {', '.join(kernels)}"
                     + (f" (bmm inputs: {', '.join(bmm)})" if bmm else ""))
    return "; ".join(found)
