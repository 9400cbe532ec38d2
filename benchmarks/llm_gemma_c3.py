"""C3 with gemma-3-270m by likelihood: clue-core against lm-evaluation-harness 0.4.13's HF backend.

Both score the same loglikelihood requests (one per option: the C3 prompt, the option) on
the same weights, each in a fresh process of its own so that each one's peak memory (VmHWM)
is its own: clue-core through ``LikelihoodScorer`` (``eval_batch_size`` 16, the model as
``llm:<file>.gguf`` loads it), lm-eval through ``HFLM(...).loglikelihood`` at ``--lm-eval-batch``
(default 2) in its own virtual environment, reading the same dequantised weights (the copy
``llm:`` keeps of the GGUF file, a ``save_pretrained`` folder). Printed: seconds per 100
questions and peak memory of each, their ratios against the goals (>= 5x faster, <= 0.5x the
memory) and the largest difference between the two tools' log-likelihoods.

    python benchmarks/llm_gemma_c3.py                             # 24 questions
    python benchmarks/llm_gemma_c3.py --questions 40 --lm-eval-python /tmp/lmeval/bin/python

lm-eval is installed in a separate environment for this benchmark only::

    python3 -m venv /tmp/lmeval && /tmp/lmeval/bin/pip install -c constraints.txt \\
        torch==2.13.0+cpu transformers==5.24.0 lm-eval==0.4.13 gguf

Without it the lm-eval column says n/a.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
SPEED_GOAL, MEMORY_GOAL, TOLERANCE = 5.0, 0.5, 1e-4


def peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def side_ours(job: dict) -> dict:
    sys.path.insert(0, str(HERE.parent))
    import llm_gemma_common as common

    from clue_models_llm.scoring import LikelihoodScorer

    model, tokenizer, _ = common.load(Path(job["cache"]))
    items = [(p, tuple(c)) for p, c in job["items"]]
    loaded = peak_rss_mib()
    started = time.perf_counter()
    requests = common.encode(tokenizer, items)
    scored = LikelihoodScorer(model, job["batch"], tokenizer.pad_token_id).score(requests)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "peak_mib": peak_rss_mib(), "loaded_mib": loaded,
            "logprobs": [list(s.logprobs) for s in scored]}


def side_lm_eval(job: dict) -> dict:
    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    torch.set_grad_enabled(False)
    lm = HFLM(pretrained=job["folder"], batch_size=job["batch"], device="cpu", dtype="float32")
    requests = [Instance("loglikelihood", {}, (prompt, choice), index)
                for index, (prompt, choices) in enumerate(job["items"]) for choice in choices]
    loaded = peak_rss_mib()
    started = time.perf_counter()
    results = lm.loglikelihood(requests, disable_tqdm=True)
    seconds = time.perf_counter() - started
    flat = iter(logprob for logprob, _ in results)
    return {"seconds": seconds, "peak_mib": peak_rss_mib(), "loaded_mib": loaded,
            "logprobs": [[next(flat) for _ in choices] for _, choices in job["items"]],
            "add_bos_token": bool(getattr(lm, "add_bos_token", False))}


def run_side(python: str, side: str, job: dict, scratch: Path) -> dict | str:
    path = scratch / f"{side}.json"
    path.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run([python, str(HERE), "--side", side, str(path)], capture_output=True, text=True,
                          cwd=HERE.parents[1])
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or ["failed"])[-1]
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=16, help="clue-core's eval_batch_size")
    parser.add_argument("--lm-eval-batch", type=int, default=2)
    parser.add_argument("--lm-eval-python", default="/tmp/lmeval/bin/python")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--side", choices=("ours", "lm-eval"), help=argparse.SUPPRESS)
    parser.add_argument("job", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        job = json.loads(Path(args.job).read_text(encoding="utf-8"))
        print(json.dumps((side_ours if args.side == "ours" else side_lm_eval)(job)))
        return
    sys.path.insert(0, str(HERE.parent))
    import llm_gemma_common as common

    from clue_core.data import clue_home
    from clue_models_llm import gguf_loading
    from clue_models_llm.loading import _file_digest

    cache = args.cache or clue_home() / "cache"
    gguf = common.gguf_file()
    folder = gguf_loading.converted_folder(cache, _file_digest(gguf))
    items = common.c3_questions(args.questions, args.seed)
    print(f"{len(items)} C3 questions, {sum(len(c) for _, c in items)} loglikelihood requests; model {gguf.name}")
    with tempfile.TemporaryDirectory() as scratch:
        ours = run_side(sys.executable, "ours", {"cache": str(cache), "items": items, "batch": args.batch},
                        Path(scratch))
        if isinstance(ours, str):
            raise SystemExit(f"clue-core's side failed: {ours}")
        if not Path(args.lm_eval_python).is_file():
            theirs: dict | str = f"no lm-eval environment at {args.lm_eval_python}"
        else:
            theirs = run_side(args.lm_eval_python, "lm-eval", {"folder": str(folder), "items": items,
                                                               "batch": args.lm_eval_batch}, Path(scratch))
    per100 = 100 / len(items)
    print(f"{'tool':<22} {'s/100 questions':>16} {'peak MiB':>9} {'model loaded MiB':>17}")
    print(f"{'clue-core (batch ' + str(args.batch) + ')':<22} {ours['seconds'] * per100:16.1f} "
          f"{ours['peak_mib']:9.0f} {ours['loaded_mib']:17.0f}")
    if isinstance(theirs, str):
        print(f"lm-eval 0.4.13: n/a ({theirs})")
        return
    print(f"{'lm-eval (batch ' + str(args.lm_eval_batch) + ')':<22} {theirs['seconds'] * per100:16.1f} "
          f"{theirs['peak_mib']:9.0f} {theirs['loaded_mib']:17.0f}")
    delta = max(abs(a - b) for x, y in zip(ours["logprobs"], theirs["logprobs"]) for a, b in zip(x, y))
    speed = theirs["seconds"] / ours["seconds"]
    memory = ours["peak_mib"] / theirs["peak_mib"]
    print(f"speed-up {speed:.2f}x (goal >= {SPEED_GOAL}x: {'met' if speed >= SPEED_GOAL else 'NOT met'}); "
          f"peak memory {memory:.2f}x lm-eval's (goal <= {MEMORY_GOAL}x: "
          f"{'met' if memory <= MEMORY_GOAL else 'NOT met'}); max |Δ logprob| {delta:.1e} "
          f"(lm-eval add_bos_token={theirs['add_bos_token']}; goal {TOLERANCE}: "
          f"{'met' if delta <= TOLERANCE else 'NOT met'})")


if __name__ == "__main__":
    main()
