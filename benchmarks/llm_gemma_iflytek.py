"""IFLYTEK with gemma-3-270m by likelihood (119 labels a question) against the bound its LM head sets.

Each question's prompt (the app description after the list of all 119 labels) runs once;
every label's tokens are then scored against its cache. Whatever else a scorer does, it must
apply the LM head (640 x 262,144, tied to the embeddings) to score the labels' tokens. That
matmul alone, timed in the same run (random hidden states, float32, the same chunking), is the
bound, counted two ways: at every label token (sum of the labels' lengths: the head once per
continuation position, as a scorer that runs each label on its own needs it) and at the
distinct positions this scorer reads (the prompt's last position, shared by every label's
first token, and each label's tokens but its last). The goal is a ratio of at most 2.

    python benchmarks/llm_gemma_iflytek.py                       # 8 questions, 2 runs
    python benchmarks/llm_gemma_iflytek.py --questions 20 --runs 3 --cache /tmp/clue-cache

Printed: seconds per question (median of runs), the head bound per question, their ratio,
and the largest logits block the head computed (MiB).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import llm_gemma_common as common

GOAL = 2.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--cache", type=Path, default=None, help="where the dequantised copy is kept "
                        "(default $CLUE_HOME/cache)")
    args = parser.parse_args()
    import torch

    from clue_core.data import clue_home
    from clue_models_llm.scoring import LikelihoodScorer

    started = time.perf_counter()
    model, tokenizer, who = common.load(args.cache or clue_home() / "cache")
    print(f"model: {common.gguf_file().name} sha256 {who['sha256'][:12]}… loaded in "
          f"{time.perf_counter() - started:.1f} s; torch threads {torch.get_num_threads()}")
    requests = common.encode(tokenizer, common.iflytek_questions(args.questions))
    scorer = LikelihoodScorer(model, args.batch_size, tokenizer.pad_token_id)
    largest = [0]
    scorer.observe = lambda n: largest.__setitem__(0, max(largest[0], n))
    positions = sum(1 + sum(len(c) - 1 for c in r.continuations) for r in requests)
    tokens = sum(len(c) for r in requests for c in r.continuations)
    prompt_tokens = statistics.mean(len(r.prefix) for r in requests)
    label_tokens = statistics.mean(len(c) for r in requests for c in r.continuations)
    print(f"{len(requests)} questions, 119 labels each; prompt {prompt_tokens:.0f} tokens, a label "
          f"{label_tokens:.2f} tokens on average; per question: {tokens / len(requests):.1f} label tokens, "
          f"{positions / len(requests):.1f} distinct head positions")
    # The FLOP floor of any exact scorer: the head at the distinct positions, plus the decoder's
    # matmuls over each question's own tokens (its description after the shared instruction, and
    # every label token but the last), which no cache can skip.
    shared = scorer.shared_prefix(requests)
    own = sum(len(r.prefix) - shared + sum(len(c) - 1 for c in r.continuations) for r in requests)
    layer_params = sum(m.weight.numel() for m in model.get_decoder().layers.modules()
                       if isinstance(m, torch.nn.Linear))
    head_params = scorer.head.linear.weight.numel()
    floor = (positions * head_params + own * layer_params) / (positions * head_params)
    print(f"per question {own / len(requests):.0f} tokens of its own through the layers "
          f"({layer_params / 1e6:.0f}M matmul weights, the head {head_params / 1e6:.0f}M): any exact scorer "
          f"needs at least {floor:.2f}x the distinct-position bound, {floor * positions / tokens:.2f}x the other")
    hidden = torch.randn(tokens, model.config.hidden_size)
    ours, bound, strict = [], [], []
    for _ in range(args.runs):
        t = time.perf_counter()
        scorer.score(requests)
        ours.append((time.perf_counter() - t) / len(requests))
        for count, into in ((tokens, bound), (positions, strict)):
            t = time.perf_counter()
            with torch.inference_mode():
                for start in range(0, count, scorer.head.chunk):
                    scorer.head.linear(hidden[start:min(start + scorer.head.chunk, count)])
            into.append((time.perf_counter() - t) / len(requests))
    mine = statistics.median(ours)
    print(f"{'bound':<28} {'s/question':>11} {'bound s':>8} {'ratio':>6} {'goal':>5}  goal met")
    for name, times in (("head at every label token", bound), ("head at distinct positions", strict)):
        head = statistics.median(times)
        print(f"{name:<28} {mine:11.3f} {head:8.3f} {mine / head:6.2f} {'<= 2':>5}  "
              f"{'met' if mine / head <= GOAL else 'NOT met'}")
    print(f"largest logits block {largest[0] * 4 / 2**20:.1f} MiB")
    print(f"peak RSS {common.peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
