"""Training and prediction throughput: clue-core's loop against the Hugging Face Trainer.

Three arms train the same model (the offline backbone ``hf-tiny`` at a small size; ``--size
base`` for a BERT-base shape) from the same initial weights on the same synthetic data, with
the same batch size, learning rate, schedule, number of steps and precision (fp32):

  a  transformers' Trainer as ``run_glue.py`` sets it up by default: every example padded to
     ``max_length`` 128 at tokenization, ``default_data_collator``, random batches
  b  the Trainer at its best: dynamic padding (``DataCollatorWithPadding``) and
     ``train_sampling_strategy="group_by_length"`` (``group_by_length=True`` before transformers 5)
  c  clue-core: ``HFLearner.fit`` / ``HFLearner.predict`` of ``clue-models-hf``, the code a
     ``clue-core run`` executes

on three CLUE-like length distributions (TNEWS-like titles of 10-40 characters, AFQMC-like
pairs of 10-30 characters each, IFLYTEK-like texts of 100-500 characters cut at 128 tokens).
Arms train alternately, their order rotating every repeat; the trained arms then predict the
dev set alternately. Every pass measures the CPU share other processes used meanwhile; a pass
they contended (over 10%) is run again (``--retries``), and each arm's best pass counts
(other processes only ever slow a pass down).

Training time is each loop's own: ``Trainer.train()`` for a and b, the ``train_runtime``
clue-core's loop records in ``trainer_state.json`` for c (no evaluation happens in any arm).
Prediction time covers tokenization and prediction in every arm. The real-token share counts
the attention masks of the batches each arm's collator actually produced.

CPU efficiency: the machine's matmul rate (fp32, bf16) against the FLOP rate a training step
achieves (FLOPs counted by ``torch.utils.flop_counter`` for the batch shapes each arm ran).

bf16 is measured where it has something to gain: clue-core training a BERT-base shape (12
layers, hidden 768, 12 heads, feed-forward 3072; random initialisation and the character
vocabulary ``hf-tiny`` builds, through hf-tiny's ``tiny_*`` settings) on the TNEWS-like data
for a fixed number of steps (``--bf16-steps``, default 30), fp32 and bf16 runs alternating
(``--bf16-repeats`` of each, default 3, the order flipping every repeat). It prints the median
training throughput of each precision and their ratio against the goal (>= 2), and the
training loss of both (the mean over the last 10 steps) against a stated tolerance,
``|loss_bf16 - loss_fp32| <= 0.02 * loss_fp32`` (why 2%: see ``BF16_LOSS_TOLERANCE`` in throughput_bf16.py). Only
CPUs that compute bf16 natively (AVX512-BF16 or AMX) and bf16-capable GPUs measure it;
elsewhere the goal prints ``n/a`` with the reason, since torch then emulates bf16 matmuls at
a few per cent of the fp32 rate. ``--bf16-force`` runs it there anyway (the losses are
meaningful, emulated bf16 rounds as native bf16 does; the speed is not, and no goal is judged);
``--bf16-dry`` runs the same code path with 2 steps of 4 examples and one run of each
precision, to show it works; its figures measure nothing. ``--bf16-size small`` compares at
the small shape instead. ``--bf16-only`` runs just this comparison.

    python benchmarks/train_throughput.py [--quick] [--size small|base] [--steps N] [--repeats N]
                                          [--predictions N] [--threads N] [--wait SECONDS]
                                          [--bf16-only] [--bf16-dry] [--bf16-force] [--bf16-size small|base]
                                          [--bf16-steps N] [--bf16-repeats N]

``--quick`` (under two minutes on two quiet cores) runs one repeat of fewer steps and skips
the bf16 comparison (unless ``--bf16-dry``, ``--bf16-force`` or ``--bf16-only`` asks for it); the full run takes
about seven minutes plus the bf16 comparison. ``--threads 1`` keeps figures steady while
another process holds a core. Goals are printed as ``met`` or ``MISSED`` with their figures;
nothing here asserts a timing. ``benchmarks/bf16_profile.py`` profiles both precisions.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/ (already there when run as a script)
from throughput_arms import Bench
from throughput_bf16 import BF16_GOAL, DRY_BATCH, DRY_STEPS, compare_bf16
from throughput_measure import FlopModel, Timed, Trained, contended, matmul_rate, native_bf16, percent, wait_for_quiet
from throughput_setup import (
    BATCH_SIZE,
    DISTRIBUTIONS,
    EVAL_BATCH_SIZE,
    LEARNING_RATE,
    SIZES,
    quiet_libraries,
)

GOAL_C_OVER_A = 3.0  # on the TNEWS-like data
GOAL_C_OVER_B = 1.0  # on every distribution
GOAL_REAL_SHARE = 0.9

ARMS = ("a", "b", "c")
ARM_NAMES = {
    "a": "Trainer, run_glue defaults (pad to 128)",
    "b": "Trainer, dynamic padding + group_by_length",
    "c": "clue-core HFLearner",
}


# ---- reporting ---------------------------------------------------------------------------------------


def verdict(met: bool | None) -> str:
    return "n/a" if met is None else ("met" if met else "MISSED")


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer steps, no bf16 comparison unless --bf16-dry/--bf16-only (under two minutes)")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--steps", type=int, help="optimizer steps per training run (default 20, quick 6)")
    parser.add_argument("--repeats", type=int, help="alternating repeats of every arm (default 3, quick 1)")
    parser.add_argument("--predictions", type=int,
                        help="alternating prediction passes per repeat (default 1, quick 2)")
    parser.add_argument("--bf16-only", action="store_true",
                        help="only the fp32/bf16 comparison at BERT-base size (no Trainer arms)")
    parser.add_argument("--bf16-dry", action="store_true",
                        help=f"run the fp32/bf16 comparison's code path even without native bf16: {DRY_STEPS} steps "
                        f"of {DRY_BATCH} examples, one run each; the figures measure nothing")
    parser.add_argument("--bf16-force", action="store_true",
                        help="run the fp32/bf16 comparison even without native bf16 (emulated: the losses are "
                        "meaningful, the speed is not)")
    parser.add_argument("--bf16-size", choices=sorted(SIZES), default="base",
                        help="model shape of the fp32/bf16 comparison (default base)")
    parser.add_argument("--bf16-steps", type=int, default=30,
                        help="optimizer steps per run of the fp32/bf16 comparison (default 30)")
    parser.add_argument("--bf16-repeats", type=int, default=3,
                        help="runs of each precision in the fp32/bf16 comparison, alternating (default 3)")
    parser.add_argument("--wait", type=float, default=2.0,
                        help="seconds to wait at most for a quiet machine before each pass (default 2)")
    parser.add_argument("--retries", type=int, default=2,
                        help="extra passes for a pass other processes contended (>10%% of the CPUs; default 2)")
    parser.add_argument("--threads", type=int, help="torch threads for every arm (default: torch's own choice); "
                        "1 keeps figures steady while another process holds a core")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    steps = args.steps or (6 if args.quick else 20)
    repeats = args.repeats or (1 if args.quick else 3)
    passes = args.predictions or (2 if args.quick else 1)
    # real dev sets hold thousands of examples (TNEWS 10,000, IFLYTEK 2,599); a few hundred
    # would leave every length-sorted prediction batch spanning several lengths
    dev_size = 8 * EVAL_BATCH_SIZE if args.quick else 16 * EVAL_BATCH_SIZE
    began = time.perf_counter()
    # retries stop once the run nears its time budget (ten minutes, two with --quick)
    retry_until = began + (60 if args.quick else 330)
    quiet_libraries()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, CPU capability "
          f"{torch.backends.cpu.get_cpu_capability()}, native bf16: {native_bf16()}, "
          f"GPU: {torch.cuda.get_device_name() if torch.cuda.is_available() else 'none'}; "
          f"load average {load_average()}")
    peak = matmul_rates(args.wait)
    if args.bf16_only:
        ratio = f"{peak['bf16'] / peak['fp32']:.2f}"
        rows = [*compare_bf16(args), ("bf16 matmul rate / fp32 matmul rate", ratio, None)]
        print_goals(f"Goals (clue-core, hf-tiny {args.bf16_size} shape, TNEWS-like)", rows)
        print(f"\nwall time {time.perf_counter() - began:.0f} s; load average at the end {load_average()}")
        return
    print(f"model: hf-tiny {args.size} {SIZES[args.size]}; batch {BATCH_SIZE}, eval batch {EVAL_BATCH_SIZE}, "
          f"lr {LEARNING_RATE}, {steps} steps per training run, {dev_size} dev examples, {repeats} alternating "
          f"repeats, fp32\n")

    train_runs: dict[str, dict[str, list[Timed]]] = {}
    predict_runs: dict[str, dict[str, list[Timed]]] = {}
    benches: dict[str, Bench] = {}
    for dist in DISTRIBUTIONS:
        bench = benches[dist.name] = Bench(dist, SIZES[args.size], steps, dev_size)
        train_runs[dist.name] = {arm: [] for arm in ARMS}
        predict_runs[dist.name] = {arm: [] for arm in ARMS}
        for repeat in range(repeats):
            order = ARMS[repeat % 3:] + ARMS[: repeat % 3]
            with tempfile.TemporaryDirectory(prefix="bench-") as folder:
                trained: dict[str, Trained] = {}
                for arm in order:
                    for attempt in range(1 + args.retries):
                        wait_for_quiet(args.wait)
                        trained[arm] = bench.train_arm(arm, Path(folder) / f"{arm}{attempt}")
                        train_runs[dist.name][arm].append(trained[arm].train)
                        if not contended(trained[arm].train) or time.perf_counter() > retry_until:
                            break
                for arm in order * passes:
                    for _ in range(1 + args.retries):
                        wait_for_quiet(args.wait)
                        predict_runs[dist.name][arm].append(trained[arm].predict())
                        if not contended(predict_runs[dist.name][arm][-1]) or time.perf_counter() > retry_until:
                            break
            for arm in ARMS:
                train, predict = train_runs[dist.name][arm][-1], predict_runs[dist.name][arm][-1]
                print(f"  {dist.name:<8} {arm}  train {train.rate:6.1f} ex/s (others {percent(train.others):>4})  "
                      f"predict {predict.rate:6.1f} ex/s (others {percent(predict.others):>4})  real tokens "
                      f"{train.shapes.real_share:.2f} / {predict.shapes.real_share:.2f}  dev acc "
                      f"{predict.accuracy:4.1f}", flush=True)
    best_train = {name: {arm: _best(runs) for arm, runs in arms.items()} for name, arms in train_runs.items()}
    best_predict = {name: {arm: _best(runs) for arm, runs in arms.items()} for name, arms in predict_runs.items()}
    flops = FlopModel(benches["tnews"].build_model, len(benches["tnews"].tokenizer))
    bf16 = compare_bf16(args) if not args.quick or args.bf16_dry or args.bf16_force else None

    print(f"\nThroughput, examples/s (fp32, hf-tiny {args.size}; the best of {repeats} training runs and of "
          f"{passes * repeats} predictions; 'others': CPU share other processes used meanwhile)")
    print(f"{'data':<8} {'arm':<46} {'train':>7} {'others':>6} {'predict':>8} {'others':>6} "
          f"{'real tok train':>14} {'predict':>8}")
    for name in best_train:
        for arm in ARMS:
            train, predict = best_train[name][arm], best_predict[name][arm]
            print(f"{name:<8} {arm + ' ' + ARM_NAMES[arm]:<46} {train.rate:>7.1f} {percent(train.others):>6} "
                  f"{predict.rate:>8.1f} {percent(predict.others):>6} "
                  f"{train.shapes.real_share:>14.3f} {predict.shapes.real_share:>8.3f}")
    ratios: dict[str, dict[str, float]] = {}
    print(f"\n{'data':<8} {'train c/a':>10} {'train c/b':>10} {'predict c/a':>12} {'predict c/b':>12}")
    for name in best_train:
        t, pr = best_train[name], best_predict[name]
        ratios[name] = {
            "train c/a": t["c"].rate / t["a"].rate,
            "train c/b": t["c"].rate / t["b"].rate,
            "predict c/a": pr["c"].rate / pr["a"].rate,
            "predict c/b": pr["c"].rate / pr["b"].rate,
        }
        print(f"{name:<8} " + " ".join(f"{value:>{max(10, len(key))}.2f}" for key, value in ratios[name].items()))

    print("\nCPU efficiency of training (FLOPs counted by torch.utils.flop_counter for every batch shape run)")
    efficiency: dict[str, float] = {}
    for name, arms in best_train.items():
        for arm in ARMS:
            train = arms[arm]
            rate = efficiency[f"{name} {arm}"] = flops.total(train.shapes) / train.seconds
            real = sum(flops.step(rows, real // rows) for rows, _, real in train.shapes.batches)
            print(f"  {name:<8} {arm}: {rate / 1e9:6.1f} GFLOP/s = {rate / peak['fp32']:4.0%} of the fp32 matmul "
                  f"rate; on real tokens only {real / train.seconds / 1e9:5.1f} GFLOP/s")

    rows: list[tuple[str, str, bool | None]] = []
    tnews = ratios["tnews"]
    for key in ("train c/a", "predict c/a"):
        rows.append((f"{key} >= {GOAL_C_OVER_A:g} (TNEWS-like)", f"{tnews[key]:.2f}", tnews[key] >= GOAL_C_OVER_A))
    for name, r in ratios.items():
        for key in ("train c/b", "predict c/b"):
            rows.append((f"{key} >= {GOAL_C_OVER_B:g} ({name.upper()}-like)", f"{r[key]:.2f}",
                         r[key] >= GOAL_C_OVER_B))
    for name in best_train:
        share = min(best_train[name]["c"].shapes.real_share, best_predict[name]["c"].shapes.real_share)
        rows.append((f"c real-token share >= {GOAL_REAL_SHARE:g}, train and predict ({name.upper()}-like)",
                     f"{share:.3f}", share >= GOAL_REAL_SHARE))
    rows.append(("c training FLOP rate / fp32 matmul rate (TNEWS-like)",
                 f"{efficiency['tnews c'] / peak['fp32']:.0%}", None))
    rows.append(("bf16 matmul rate / fp32 matmul rate", f"{peak['bf16'] / peak['fp32']:.2f}", None))
    rows.extend(bf16 or [(BF16_GOAL, "skipped (--quick)", None)])
    print_goals(f"Goals (hf-tiny {args.size}, {steps} steps, {torch.get_num_threads()} threads; bf16 rows: "
                f"{args.bf16_size} shape)", rows)
    print(f"\nwall time {time.perf_counter() - began:.0f} s; load average at the end {load_average()}")


def matmul_rates(wait: float) -> dict[str, float]:
    """The best fp32 and bf16 matmul rates of this machine (emulated bf16: one size, it is slow)."""
    peak: dict[str, float] = {}
    shown: dict[str, tuple[int, ...]] = {}
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        wait_for_quiet(wait)
        shown[name] = (256, 512, 1024) if name == "fp32" or native_bf16() else (512,)
        peak[name] = max(matmul_rate(dtype, n, 0.3) for n in shown[name])
    print(f"matmul rate: fp32 {peak['fp32'] / 1e9:.1f} GFLOP/s (best of {', '.join(map(str, shown['fp32']))}²), "
          f"bf16 {peak['bf16'] / 1e9:.1f} GFLOP/s (best of {', '.join(map(str, shown['bf16']))}²)")
    return peak


def print_goals(title: str, rows: list[tuple[str, str, bool | None]]) -> None:
    width = max(len(goal) for goal, _, _ in rows)
    figures = max(17, *(len(figure) for _, figure, _ in rows))
    print(f"\n{title}")
    for goal, figure, met in rows:
        print(f"  {goal:<{width}}  {figure:>{figures}}  {verdict(met)}")


def _best(runs: list[Timed]) -> Timed:
    """The fastest pass: other processes only ever slow a run down."""
    return max(runs, key=lambda r: r.rate)


if __name__ == "__main__":
    sys.exit(main())
