"""IFLYTEK with gemma-3-270m by likelihood (119 labels a question) against the bound its LM head sets.

Each question's prompt (the app description after the list of all 119 labels) runs once;
every label's tokens are then scored against its cache. Whatever else a scorer does, it must
apply the LM head (640 x 262,144, tied to the embeddings) at every position whose next-token
distribution a label's score reads: the prompt's last position and every label token but the
last. That matmul alone, timed in the same run on the same number of positions (random
hidden states, float32, the same chunking), is the bound; the goal is a ratio of at most 2.

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
    prompt_tokens = statistics.mean(len(r.prefix) for r in requests)
    label_tokens = statistics.mean(len(c) for r in requests for c in r.continuations)
    print(f"{len(requests)} questions, 119 labels each; prompt {prompt_tokens:.0f} tokens, a label "
          f"{label_tokens:.2f} tokens on average; head positions per question {positions / len(requests):.1f}")
    hidden = torch.randn(positions, model.config.hidden_size)
    ours, bound = [], []
    for _ in range(args.runs):
        t = time.perf_counter()
        scorer.score(requests)
        ours.append((time.perf_counter() - t) / len(requests))
        t = time.perf_counter()
        with torch.inference_mode():
            for start in range(0, positions, scorer.head.chunk):
                scorer.head.linear(hidden[start:start + scorer.head.chunk])
        bound.append((time.perf_counter() - t) / len(requests))
    mine, head = statistics.median(ours), statistics.median(bound)
    ratio = mine / head
    print(f"{'s/question':>11} {'head bound s':>13} {'ratio':>6} {'goal':>6} {'largest logits MiB':>19}  goal met")
    print(f"{mine:11.3f} {head:13.3f} {ratio:6.2f} {'<= 2':>6} {largest[0] * 4 / 2**20:19.1f}  "
          f"{'met' if ratio <= GOAL else 'NOT met'}")
    print(f"peak RSS {common.peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
