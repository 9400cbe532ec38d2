"""Where prediction time goes: clue-core's ``HFLearner.predict`` against the best-configured Trainer.

Trains arms b (Trainer, dynamic padding + group_by_length) and c (clue-core) of
``benchmarks/train_throughput.py`` for a few steps on one distribution (IFLYTEK-like by
default: every text fills 128 tokens), then times their predictions of the dev set
alternately, ``--passes`` times each, and prints every arm's best and median rate with the
ratio c/b of the bests. ``--profile`` adds one ``torch.profiler`` pass of each arm and its
top operators by self CPU time; ``--phases`` splits c's pass into tokenization, the model
loop and decoding.

    python benchmarks/profile_predict.py [--data iflytek|tnews|afqmc] [--passes N] [--dev N]
                                         [--threads N] [--profile] [--phases]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/ (already there when run as a script)
from throughput_arms import Bench
from throughput_measure import Timed, percent
from throughput_setup import DISTRIBUTIONS, EVAL_BATCH_SIZE, SIZES, quiet_libraries


def phases(bench: Bench, learner: object) -> None:
    """c's prediction split into its three parts (each timed on its own, best of three)."""
    from clue_models_hf.runtime import infer

    def best(function: object) -> tuple[float, object]:
        times, result = [], None
        for _ in range(3):
            started = time.perf_counter()
            result = function()  # type: ignore[operator]
            times.append(time.perf_counter() - started)
        return min(times), result

    encode_s, features = best(lambda: learner._encode(bench.dev, with_labels=False))  # type: ignore[attr-defined]
    infer_s, outputs = best(lambda: infer(learner.accelerator, learner.prepared, features,  # type: ignore[attr-defined]
                                          learner._collator(), learner.settings.eval_batch_size,  # type: ignore[attr-defined]
                                          learner.forward_kind))  # type: ignore[attr-defined]
    decode_s, _ = best(lambda: learner._classes(bench.dev, outputs))  # type: ignore[attr-defined]
    print(f"c phases: tokenize {encode_s * 1e3:.1f} ms, model loop {infer_s * 1e3:.1f} ms, "
          f"decode {decode_s * 1e3:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=[d.name for d in DISTRIBUTIONS], default="iflytek")
    parser.add_argument("--passes", type=int, default=5, help="timed predictions of each arm (default 5)")
    parser.add_argument("--dev", type=int, default=8 * EVAL_BATCH_SIZE, help="dev examples (default 512)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own choice)")
    parser.add_argument("--profile", action="store_true", help="one torch.profiler pass of each arm")
    parser.add_argument("--phases", action="store_true", help="c's tokenization, model loop and decoding")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    quiet_libraries()
    dist = next(d for d in DISTRIBUTIONS if d.name == args.data)
    bench = Bench(dist, SIZES["small"], 6, args.dev)
    with tempfile.TemporaryDirectory(prefix="profile-predict-") as folder:
        trained = {arm: bench.train_arm(arm, Path(folder) / arm) for arm in ("b", "c")}
        runs: dict[str, list[Timed]] = {"b": [], "c": []}
        for arm in ("b", "c"):  # a warm-up pass each, untimed
            trained[arm].predict()
        for turn in range(args.passes):
            for arm in (("b", "c") if turn % 2 == 0 else ("c", "b")):
                runs[arm].append(trained[arm].predict())
        print(f"{args.data}, {args.dev} dev examples, {torch.get_num_threads()} threads, {args.passes} passes each")
        for arm, timed in runs.items():
            rates = [t.rate for t in timed]
            print(f"  {arm}: best {max(rates):7.1f} ex/s, median {statistics.median(rates):7.1f} ex/s, others "
                  f"{', '.join(percent(t.others) for t in timed)}; real tokens {timed[0].shapes.real_share:.3f}, "
                  f"dev acc {timed[0].accuracy:.1f}")
        best_b, best_c = (max(t.rate for t in runs[arm]) for arm in ("b", "c"))
        print(f"  predict c/b (bests): {best_c / best_b:.2f}")
        if args.phases:
            phases(bench, trained["c"].learner)
        if args.profile:
            from torch.profiler import ProfilerActivity, profile

            for arm in ("b", "c"):
                with profile(activities=[ProfilerActivity.CPU]) as prof:
                    trained[arm].predict()
                print(f"\n---- arm {arm}: top operators by self CPU time")
                print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=18))


if __name__ == "__main__":
    sys.exit(main())
