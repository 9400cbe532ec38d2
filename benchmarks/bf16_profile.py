"""Where a clue-core training step's time goes, fp32 against bf16 (``torch.profiler``, CPU).

``benchmarks/train_throughput.py`` measures the bf16 speed-up at BERT-base size; this script
explains the small size, where clue-core's bf16 training gains little or nothing. It trains
hf-tiny (``--size small``: hidden 128, 4 layers, as train_throughput.py's default) on the
same TNEWS-like data for ``--warmup`` + ``--steps`` optimizer steps in each precision, and
profiles the last ``--steps``. Two arms per precision:

  clue   ``HFLearner.fit`` (built through the kernel's settings resolution, as ``clue-core
         run`` builds it): Accelerate's autocast wrapper, gradient clipping, the scheduler,
         the loop's counters, and the collator (collation is part of each step)
  plain  the same model, initial weights and batches (those the clue arm's collator
         produced) in a plain autocast loop: forward, backward, fused AdamW, zero_grad

It prints the unprofiled step time of each (median of the steps after the warm-up), the
profiled step split by phase (collate, forward, backward, gradient clipping, optimizer step,
zero_grad, the rest of the loop), the top ops by self CPU time, the ops whose calls per step
differ between the arms and between the precisions, every dtype conversion by phase and
direction, and, from a ``TorchDispatchMode`` census of one bf16 step (it sees each op after
autocast and autograd, in the dtype it really computes in), which ops run in fp32 and which
in bf16 under autocast.

On a CPU without native bf16 (AVX512-BF16 or AMX) torch emulates bf16 matmuls at a few per
cent of the fp32 rate and runs bf16 element-wise ops and conversions slower than a native
CPU would, so the bf16 times here are not representative; the op counts, the conversions,
the dtypes and the fp32 profile are. The last table is an ESTIMATE, not a measurement, of
the bf16 / fp32 training throughput on a native-bf16 CPU, built from those: the profiled
fp32 step, minus the fp32 time of the matmuls that autocast runs in bf16 (the census says
which), plus that time divided by an assumed bf16 matmul speed-up k, plus the conversions
autocast adds (their elements at this machine's fp32 copy rate, their calls at its per-call
cost). It assumes bf16 element-wise ops cost what their fp32 counterparts do.

    python benchmarks/bf16_profile.py [--size small|base] [--steps N] [--warmup N] [--top N]
                                      [--threads N] [--trace DIR] [--bf16-census-only]

Defaults: small, 2 warm-up steps, 6 profiled steps, 12 top ops; a few minutes on two cores
without native bf16 (the bf16 runs dominate). ``--threads 1`` keeps figures steadier while
other processes share the machine. ``--trace DIR`` writes a Chrome trace of each profiled run.
``--bf16-census-only`` skips the timed and profiled bf16 runs (emulated bf16 at ``--size base``
takes minutes per step) and keeps the census, which is all the estimate needs of bf16.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.autograd.profiler import record_function
from torch.profiler import ProfilerActivity, profile, schedule
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/ (already there when run as a script)
from train_throughput import (
    BATCH_SIZE,
    DISTRIBUTIONS,
    SEED,
    SIZES,
    Bench,
    hf_tiny_learner,
    native_bf16,
    quiet,
    quiet_libraries,
    training_probe,
)

from clue_core.plugin import RunContext

PRECISIONS = ("no", "bf16")
LABEL = {"no": "fp32", "bf16": "bf16"}
ARMS = ("clue", "plain")
COLUMNS = [(arm, precision) for arm in ARMS for precision in PRECISIONS]
#: the ops that do a step's matmul FLOPs (attention too: BERT's SDPA runs its math kernel, bmm, in training)
MATMUL_OPS = ("aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm",
              "aten::_scaled_dot_product_flash_attention_for_cpu",
              "aten::_scaled_dot_product_flash_attention_for_cpu_backward")
CASTS = ("aten::to", "aten::_to_copy", "aten::copy_")
#: step phases, by the annotation an op sits under (the outermost one wins)
PHASES = {
    "clue::collate": "collate",
    "clue::forward": "forward",
    "clue::backward": "backward",
    "clue::clip_grad_norm": "clip_grad_norm",
    "Optimizer.step#AdamW.step": "optimizer step",
    "Optimizer.zero_grad#AdamW.zero_grad": "zero_grad",
}
PHASE_ORDER = ("collate", "forward", "backward", "clip_grad_norm", "optimizer step", "zero_grad", "rest of the loop")
#: the assumed k of the estimate (bf16 matmul time = fp32 matmul time / k); inf: bf16 matmuls cost nothing
SPEEDUPS = (2.0, 4.0, 8.0, float("inf"))
SHORT = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float64: "fp64", torch.float16: "fp16"}


# ---- what one profiled run found -----------------------------------------------------------------------


@dataclass
class Profiled:
    """The profiled steps of one arm in one precision; every figure is per step."""

    steps: int
    #: unprofiled run: median seconds of a step after the warm-up
    step_seconds: float
    #: profiled: wall ms of a step, and ms per phase
    wall_ms: float = 0.0
    phase_ms: dict[str, float] = field(default_factory=dict)
    #: aten op -> (calls, self ms)
    ops: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: (phase, source dtype) -> (calls, elements) of aten::_to_copy
    conversions: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    aten_calls: float = 0.0

    @property
    def self_ms(self) -> float:
        return sum(ms for _, ms in self.ops.values())

    def ms(self, names: Iterator[str] | tuple[str, ...]) -> float:
        return sum(self.ops.get(name, (0.0, 0.0))[1] for name in names)

    def calls(self, name: str) -> float:
        return self.ops.get(name, (0.0, 0.0))[0]


def _ancestors(event: Any) -> Iterator[Any]:
    node = event.cpu_parent
    while node is not None:
        yield node
        node = node.cpu_parent


def _phase(event: Any) -> str:
    """The outermost annotated phase an event sits in (itself included)."""
    found = PHASES.get(event.name, "rest of the loop")
    for node in _ancestors(event):
        found = PHASES.get(node.name, found)
    return found


def _elements(shape: Any) -> int:
    count = 1
    for size in shape or ():
        count *= int(size)
    return count


def summarise(prof: Any, steps: int, step_seconds: float) -> Profiled:
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CPU]
    result = Profiled(steps, step_seconds)
    result.wall_ms = statistics.fmean(e.cpu_time_total for e in events if e.name.startswith("ProfilerStep")) / 1000
    phases: dict[str, float] = defaultdict(float)
    ops: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    conversions: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for event in events:
        if event.name in PHASES and not any(node.name in PHASES for node in _ancestors(event)):
            phases[PHASES[event.name]] += event.cpu_time_total / 1000
        if not event.name.startswith("aten::"):  # annotations, ProfilerStep
            continue
        result.aten_calls += 1
        ops[event.name][0] += 1
        ops[event.name][1] += event.self_cpu_time_total / 1000
        if event.name == "aten::_to_copy":
            source = {"float": "fp32", "c10::BFloat16": "bf16", "double": "fp64"}.get(
                (event.input_dtypes or ["-"])[0] or "-", "other")
            key = (_phase(event), source)
            conversions[key][0] += 1
            conversions[key][1] += _elements((event.input_shapes or [[]])[0])
    result.phase_ms = {name: ms / steps for name, ms in phases.items()}
    result.phase_ms["rest of the loop"] = result.wall_ms - sum(result.phase_ms.values())
    result.ops = {name: (calls / steps, ms / steps) for name, (calls, ms) in ops.items()}
    result.conversions = {key: (calls / steps, n / steps) for key, (calls, n) in conversions.items()}
    result.aten_calls /= steps
    return result


#: matmuls the census skips (their result: zeros of the right shape and dtype); op -> output shape
SKIPPED: dict[str, Callable[..., tuple[int, ...]]] = {
    "mm": lambda a, b, *_: (a.shape[0], b.shape[1]),
    "addmm": lambda bias, a, b, *_: (a.shape[0], b.shape[1]),
    "bmm": lambda a, b, *_: (a.shape[0], a.shape[1], b.shape[2]),
}


class Census(TorchDispatchMode):
    """Every aten op of one step in the dtype it computes in (seen below autocast and autograd).

    It counts while ``counting`` is set. It only counts ops, so it skips the matmuls
    (:data:`SKIPPED`: zeros of the right shape and dtype instead); emulated bf16 matmuls
    would take minutes per step at BERT-base size, and nothing in a BERT step branches on
    their values.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counting = False
        #: (op, dtype of its first floating tensor input) -> calls
        self.ops: Counter[tuple[str, str]] = Counter()
        #: (from, to) -> [calls, elements] of dtype conversions (_to_copy, and copy_ across dtypes)
        self.conversions: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if name in SKIPPED and not kwargs and func._overloadname == "default":
            out = torch.zeros(SKIPPED[name](*args), dtype=args[1].dtype)
        else:
            out = func(*args, **kwargs)
        if not self.counting:
            return out
        tensors = [a for a in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
        floating = [t for t in tensors if t.is_floating_point()]
        self.ops[(name, SHORT.get(floating[0].dtype, str(floating[0].dtype)) if floating else "-")] += 1
        pair = None
        if name == "_to_copy" and isinstance(out, torch.Tensor) and tensors and tensors[0].dtype != out.dtype:
            pair = (tensors[0], out)
        elif name == "copy_" and len(tensors) >= 2 and tensors[0].dtype != tensors[1].dtype:
            pair = (tensors[1], tensors[0])
        if pair and pair[0].is_floating_point() and pair[1].is_floating_point():
            key = (SHORT.get(pair[0].dtype, str(pair[0].dtype)), SHORT.get(pair[1].dtype, str(pair[1].dtype)))
            self.conversions[key][0] += 1
            self.conversions[key][1] += out.numel() if isinstance(out, torch.Tensor) else 0
        return out


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


# ---- machine constants for the estimate ----------------------------------------------------------------


def copy_rates() -> tuple[float, float]:
    """(ns per element of an fp32 copy of 256K elements, µs per call of a conversion of one element)."""
    big, small = torch.randn(256 * 1024), torch.randn(1)

    def per_call(function: Callable[[], Any], calls: int) -> float:
        function()
        best = float("inf")
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(calls):
                function()
            best = min(best, (time.perf_counter() - started) / calls)
        return best

    return (per_call(big.clone, 200) / big.numel() * 1e9,
            per_call(lambda: small.to(torch.bfloat16), 2000) * 1e6)


# ---- the report ----------------------------------------------------------------------------------------


def report(results: dict[tuple[str, str], Profiled], censuses: dict[str, Census], args: argparse.Namespace,
           native: bool) -> None:
    columns = [c for c in COLUMNS if c in results]

    def _header(first: str, width: int = 36) -> str:
        return f"  {first:<{width}}" + "".join(f"{arm + ' ' + LABEL[p]:>14}" for arm, p in columns)

    emulated = "" if native else " (bf16 EMULATED on this CPU: its times are not representative)"
    print(f"\nStep time, ms{emulated}")
    print(_header(""))
    print(f"  {'unprofiled':<36}" + "".join(f"{results[c].step_seconds * 1000:>14.1f}" for c in columns))
    print(f"  {'profiled (wall)':<36}" + "".join(f"{results[c].wall_ms:>14.1f}" for c in columns))
    print(f"  {'aten ops per step':<36}" + "".join(f"{results[c].aten_calls:>14.0f}" for c in columns))

    print("\nWhere a profiled step goes, ms per step (share of the step)")
    print(_header("phase"))
    for phase in PHASE_ORDER:
        cells = []
        for c in columns:
            ms = results[c].phase_ms.get(phase)
            cells.append("-" if ms is None else f"{ms:.1f} ({ms / results[c].wall_ms:.0%})")
        print(f"  {phase:<36}" + "".join(f"{cell:>14}" for cell in cells))

    for arm, precision in [c for c in (("clue", "no"), ("clue", "bf16")) if c in results]:
        r = results[(arm, precision)]
        print(f"\nTop {args.top} ops by self CPU time, {arm} {LABEL[precision]} "
              f"(per step; share of all ops' self time)")
        for name, (calls, ms) in sorted(r.ops.items(), key=lambda item: -item[1][1])[: args.top]:
            print(f"  {name:<56} {calls:6.0f} calls {ms:8.2f} ms {ms / r.self_ms:6.1%}")

    for title, a, b in (("clue fp32 against plain fp32 (what clue-core's loop adds)", ("clue", "no"), ("plain", "no")),
                        ("clue bf16 against clue fp32 (what autocast adds)", ("clue", "bf16"), ("clue", "no"))):
        if a not in results:
            continue
        ra, rb = results[a], results[b]
        print(f"\nOps whose calls per step differ, {title}: calls {LABEL[a[1]]} / {LABEL[b[1]]}, self ms")
        names = [n for n in set(ra.ops) | set(rb.ops) if abs(ra.calls(n) - rb.calls(n)) >= 0.5]
        names.sort(key=lambda n: -abs(ra.calls(n) - rb.calls(n)))
        for name in names[: args.top]:
            print(f"  {name:<56} {ra.calls(name):6.0f} / {rb.calls(name):6.0f}  "
                  f"{ra.ops.get(name, (0, 0))[1]:8.2f} / {rb.ops.get(name, (0, 0))[1]:8.2f} ms")

    print("\nDtype conversions per step (profiled): aten::_to_copy calls by phase and source dtype "
          "(elements converted)")
    keys = sorted({key for c in columns for key in results[c].conversions},
                  key=lambda k: (PHASE_ORDER.index(k[0]), k[1]))
    print(_header("phase, from"))
    for key in keys:
        cells = []
        for c in columns:
            calls, elements = results[c].conversions.get(key, (0.0, 0.0))
            cells.append(f"{calls:.0f} ({elements / 1e6:.2f}M)" if calls else "-")
        print(f"  {key[0] + ', from ' + key[1]:<36}" + "".join(f"{cell:>14}" for cell in cells))
    for name in CASTS:
        print(f"  {name + ' calls (all)':<36}" + "".join(f"{results[c].calls(name):>14.0f}" for c in columns))
    print(f"  {'_to_copy + copy_ self ms':<36}"
          + "".join(f"{results[c].ms(('aten::_to_copy', 'aten::copy_')):>14.1f}" for c in columns))

    print("\nCensus of one clue-core step (TorchDispatchMode: each op in the dtype it computes in); calls")
    for precision, census in censuses.items():
        moves = ", ".join(f"{a}->{b} {calls} calls ({n / 1e6:.2f}M elements)"
                          for (a, b), (calls, n) in sorted(census.conversions.items()))
        print(f"  {LABEL[precision]} conversions: {moves or 'none'}")
    bf16 = censuses["bf16"]
    plain_views = {"view", "t", "transpose", "expand", "unsqueeze", "slice", "select", "detach", "_unsafe_view",
                   "_to_copy", "copy_", "empty", "empty_like", "empty_strided", "clone", "alias", "as_strided"}
    names = sorted({name for name, _ in bf16.ops} - plain_views)
    fp32_ms = results[("clue", "no")]
    rows = [(name, bf16.ops.get((name, "bf16"), 0), bf16.ops.get((name, "fp32"), 0),
             fp32_ms.ops.get(f"aten::{name}", (0.0, 0.0))[1]) for name in names]
    rows = [row for row in rows if row[1] or row[2]]
    rows.sort(key=lambda row: -row[3])
    print("  compute ops in the bf16 step by dtype (self ms of the op in the profiled fp32 step):")
    print(f"  {'op':<40} {'bf16':>6} {'fp32':>6} {'fp32 ms':>9}")
    for name, in_bf16, in_fp32, ms in rows[: max(args.top, 24)]:
        print(f"  {name:<40} {in_bf16:>6} {in_fp32:>6} {ms:>9.2f}")

    print(f"  attention on bf16 inputs (torch.nn.functional.scaled_dot_product_attention): {attention_kernels()}")

    print("\nMatmul-class ops (addmm, mm, bmm, flash attention), self ms per step")
    for c in columns:
        r = results[c]
        mm = r.ms(MATMUL_OPS)
        print(f"  {c[0]} {LABEL[c[1]]:<5} {mm:8.1f} ms = {mm / r.wall_ms:4.0%} of the profiled step; "
              f"everything else {r.wall_ms - mm:8.1f} ms")

    per_element_ns, per_call_us = copy_rates()
    # what a native-bf16 CPU speeds up: the matmul ops the census saw computing in bf16
    in_bf16 = tuple(f"aten::{name}" for name, dtype in bf16.ops if dtype == "bf16" and f"aten::{name}" in MATMUL_OPS)
    in_fp32 = tuple(name for name in MATMUL_OPS if name not in in_bf16 and results[("clue", "no")].calls(name))
    added_calls = sum(calls for calls, _ in bf16.conversions.values()) - sum(
        calls for calls, _ in censuses["no"].conversions.values())
    added_elements = sum(n for _, n in bf16.conversions.values()) - sum(
        n for _, n in censuses["no"].conversions.values())
    casts_ms = (added_elements * per_element_ns / 1e6) + added_calls * per_call_us / 1000
    print("\nESTIMATE, not a measurement: bf16 / fp32 training throughput of these steps on a CPU with native bf16")
    print(f"  t_bf16 = fp32 step - its ms in the matmuls autocast runs in bf16 ({', '.join(in_bf16)}) x (1 - 1/k) "
          f"+ added conversions; fp32 step and matmul ms from the same profiled run")
    print(f"  added conversions: {added_calls} calls, {added_elements / 1e6:.2f}M elements per step at this machine's "
          f"fp32 copy rate ({per_element_ns:.2f} ns/element) and per-call cost ({per_call_us:.1f} µs) = "
          f"{casts_ms:.1f} ms")
    print(f"  matmuls that stay fp32 under autocast here (not sped up): {', '.join(in_fp32) or 'none'}")
    print(f"  {'arm':<8} {'fp32 ms':>8} {'bf16-able ms':>13}" + "".join(
        f"{'k=' + (f'{k:g}' if k != float('inf') else 'inf'):>9}" for k in SPEEDUPS))
    for arm in ARMS:
        fp32 = results[(arm, "no")]
        step_ms = fp32.wall_ms
        sped = fp32.ms(in_bf16)
        cells = [step_ms / (step_ms - sped * (1 - (0.0 if k == float("inf") else 1 / k)) + casts_ms) for k in SPEEDUPS]
        print(f"  {arm:<8} {step_ms:>8.1f} {sped:>13.1f}" + "".join(f"{cell:>9.2f}" for cell in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--steps", type=int, default=6, help="profiled optimizer steps (default 6)")
    parser.add_argument("--warmup", type=int, default=2, help="steps before the profiled ones (default 2, minimum 2)")
    parser.add_argument("--top", type=int, default=12, help="ops listed per table (default 12)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own choice)")
    parser.add_argument("--trace", help="folder for Chrome traces of the profiled runs")
    parser.add_argument("--bf16-census-only", action="store_true",
                        help="no timed or profiled bf16 runs, only the one-step bf16 census the estimate needs "
                        "(emulated bf16 at --size base takes about a minute per step)")
    args = parser.parse_args()
    if args.warmup < 2:
        parser.error("--warmup must be at least 2 (the profiler warms up on the step before the profiled ones)")
    if args.threads:
        torch.set_num_threads(args.threads)
    quiet_libraries()
    native = native_bf16()
    dist = DISTRIBUTIONS[0]
    bench = Bench(dist, SIZES[args.size], args.warmup + args.steps, 0)
    print(f"bf16 profile: torch {torch.__version__}, {torch.get_num_threads()} threads, CPU capability "
          f"{torch.backends.cpu.get_cpu_capability()}, native bf16: {native}")
    print(f"clue-core HFLearner and a plain autocast loop, hf-tiny {args.size} {SIZES[args.size]}, {dist.description}, "
          f"batch {BATCH_SIZE}; {args.warmup} warm-up + {args.steps} profiled steps per run")
    began = time.perf_counter()
    results, censuses = measure(bench, args)
    report(results, censuses, args, native)
    print(f"\nwall time {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
