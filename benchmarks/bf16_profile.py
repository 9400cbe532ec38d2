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
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/ (already there when run as a script)
from profile_arms import measure
from profile_report import report
from throughput_arms import Bench
from throughput_measure import native_bf16
from throughput_setup import BATCH_SIZE, DISTRIBUTIONS, SIZES, quiet_libraries


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
