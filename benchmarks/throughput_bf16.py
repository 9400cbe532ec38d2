"""The fp32 / bf16 comparison of ``benchmarks/train_throughput.py`` (a helper, not a script).

clue-core training at BERT-base size (``--bf16-size``) in both precisions, alternating: the
throughput ratio against its goal and the training losses against ``BF16_LOSS_TOLERANCE``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from throughput_arms import Bench
from throughput_measure import Timed, native_bf16, percent, wait_for_quiet
from throughput_setup import BATCH_SIZE, DISTRIBUTIONS, SIZES

GOAL_BF16_SPEEDUP = 2.0
#: |loss_bf16 - loss_fp32| <= this share of loss_fp32 (mean training loss of the last BF16_LOSS_WINDOW steps).
#: Both precisions train the same batches from the same weights, so their losses differ only by
#: bf16 rounding: at the small size the per-step gap stayed under 0.01% for 30 steps
#: (``--bf16-only --bf16-force --bf16-size small --bf16-repeats 1``; emulated bf16 rounds as native
#: bf16 does). 2% is far above that, and below the 0.08 (3%) the fp32 loss falls over the base-size
#: run's 30 steps (docs/performance.md, bf16), so a bf16 run that stopped learning would fail.
BF16_LOSS_TOLERANCE = 0.02
BF16_LOSS_WINDOW = 10
#: the usual learning-rate scale for BERT-base (the small model's 1e-3 is not used at that size)
BF16_LEARNING_RATE = 1e-4
#: --bf16-dry: steps and examples per step of the code-path check on CPUs without native bf16
DRY_STEPS, DRY_BATCH = 2, 4

BF16_GOAL = f"c bf16 / fp32 training throughput >= {GOAL_BF16_SPEEDUP:g}"
BF16_LOSS_GOAL = (f"c |loss bf16 - loss fp32| <= {BF16_LOSS_TOLERANCE:g} x loss fp32 "
                  f"(mean of the last {BF16_LOSS_WINDOW} steps)")


def compare_bf16(args: argparse.Namespace) -> list[tuple[str, str, bool | None]]:
    """clue-core fp32 against bf16 at BERT-base size on the TNEWS-like data: speed and training loss.

    Runs only where bf16 is native (AVX512-BF16/AMX, or a bf16 GPU); elsewhere autocast
    emulates bf16 matmuls far below the fp32 rate and the goal is ``n/a``. ``--bf16-force``
    runs it anyway (the losses mean what they mean, the speed does not); ``--bf16-dry`` runs
    the same path with a few tiny steps: it shows the code works, nothing more.
    """
    native, dry = native_bf16(), args.bf16_dry
    forced = (args.bf16_force or dry) and not native
    shape = f"{args.bf16_size} shape"
    if not native and not forced:
        reason = ("no native bf16 on this CPU (neither AVX512-BF16 nor AMX; torch emulates bf16 matmuls): "
                  "n/a, not run (--bf16-dry runs the code path)")
        print(f"\nbf16 against fp32 (clue-core, {shape}): {reason}")
        return [(BF16_GOAL, "n/a: no native bf16", None), (BF16_LOSS_GOAL, "not run", None)]
    steps = DRY_STEPS if dry else args.bf16_steps
    batch = DRY_BATCH if dry else BATCH_SIZE
    repeats = 1 if dry else args.bf16_repeats
    window = min(BF16_LOSS_WINDOW, steps)
    dist = DISTRIBUTIONS[0]
    bench = Bench(dist, SIZES[args.bf16_size], steps, 0, batch_size=batch, learning_rate=BF16_LEARNING_RATE)
    label = "DRY RUN, the figures measure nothing: " if dry else ""
    emulated = ", bf16 EMULATED: its speed is not representative" if forced else ""
    print(f"\nbf16 against fp32 ({label}clue-core, hf-tiny at {shape} {SIZES[args.bf16_size]}, "
          f"{dist.description}; {steps} steps of {batch} examples, lr {BF16_LEARNING_RATE:g}, "
          f"{repeats} run{'s' if repeats > 1 else ''} of each precision, alternating{emulated})")
    runs: dict[str, list[Timed]] = {"no": [], "bf16": []}
    for repeat in range(repeats):
        for precision in ("no", "bf16") if repeat % 2 == 0 else ("bf16", "no"):
            wait_for_quiet(args.wait)
            with tempfile.TemporaryDirectory(prefix="bench-bf16-") as folder:
                run = bench.train_arm("c", Path(folder), mixed_precision=precision).train
            assert len(run.losses) == steps, (len(run.losses), steps)
            runs[precision].append(run)
            print(f"  run {repeat + 1} {PRECISION[precision]}: {run.rate:7.2f} ex/s ({run.seconds:6.1f} s), "
                  f"loss first {run.losses[0]:.4f} last-{window} mean {statistics.fmean(run.losses[-window:]):.4f} "
                  f"(others {percent(run.others)})", flush=True)
    rate = {p: statistics.median(r.rate for r in rs) for p, rs in runs.items()}
    loss = {p: statistics.median(statistics.fmean(r.losses[-window:]) for r in rs) for p, rs in runs.items()}
    speedup = rate["bf16"] / rate["no"]
    difference, tolerance = abs(loss["bf16"] - loss["no"]), BF16_LOSS_TOLERANCE * loss["no"]
    steady = {p: statistics.median(_steady_seconds(r) for r in rs) for p, rs in runs.items()}
    print(f"  median: fp32 {rate['no']:.2f} ex/s, bf16 {rate['bf16']:.2f} ex/s, ratio {speedup:.2f}; "
          f"without step 1 (warm-up) {steady['no'] / steady['bf16']:.2f}")
    fp32, bf16 = runs["no"][0].losses, runs["bf16"][0].losses
    gaps = [abs(b - a) / a for a, b in zip(fp32, bf16)]
    print(f"  training loss, mean of the last {window} steps: fp32 {loss['no']:.4f}, bf16 {loss['bf16']:.4f}; "
          f"difference {difference:.4f}, tolerance {tolerance:.4f}")
    print(f"  same batches, same initial weights: largest per-step loss difference {max(gaps):.3%} (step "
          f"{gaps.index(max(gaps)) + 1}); fp32 loss over the run: mean of the first {window} steps "
          f"{statistics.fmean(fp32[:window]):.4f}, of the last {window} {statistics.fmean(fp32[-window:]):.4f}")
    _first_widths(runs)
    if forced or dry:
        kind = "dry run" if dry else "forced"
        return [(BF16_GOAL, f"{speedup:.2f} ({kind}{', emulated' if forced else ''})", None),
                (BF16_LOSS_GOAL, f"{loss['no']:.3f} / {loss['bf16']:.3f} ({kind})", None)]
    return [(BF16_GOAL, f"{speedup:.2f}", speedup >= GOAL_BF16_SPEEDUP),
            (BF16_LOSS_GOAL, f"{loss['no']:.3f} / {loss['bf16']:.3f}", difference <= tolerance)]


PRECISION = {"no": "fp32", "bf16": "bf16"}


def _steady_seconds(run: Timed) -> float:
    """Seconds of steps 2 to N (step 1 allocates the optimizer state and the first kernels)."""
    return run.step_ends[-1] - run.step_ends[0]


def _first_widths(runs: dict[str, list[Timed]]) -> None:
    """Step time by whether the batch width was new in the run: kernels created per shape (oneDNN) show here."""
    widths = [width for _, width, _ in runs["no"][0].shapes.batches]
    new = [i for i in range(1, len(widths)) if widths[i] not in widths[:i]]
    seen = [i for i in range(1, len(widths)) if widths[i] in widths[:i]]
    parts = []
    for precision, rs in runs.items():
        times = {i: statistics.median(r.step_ends[i] - r.step_ends[i - 1] for r in rs) for i in range(1, len(widths))}
        mean = {kind: f"{statistics.fmean(times[i] for i in steps) * 1000:.0f}" if steps else "-"
                for kind, steps in (("new", new), ("seen", seen))}
        parts.append(f"{PRECISION[precision]} {mean['new']} / {mean['seen']} ms")
    print(f"  mean step time, steps 2-{len(widths)} whose batch width is new in the run ({len(new)}) / was seen "
          f"before ({len(seen)}): " + "; ".join(parts))
