"""The output head on a generation step's few rows: ``Head.few`` (``W @ h.T``) against ``F.linear``.

A decode step of gemma-3-270m computes its 262,144 x 640 output layer for only the batch's
rows; ``clue_models_llm.chunked_head.Head.few`` computes that product as ``mm(W, h.T)``
instead of ``F.linear(h, W)``. This prints the best time of each for several row counts, the
ratio, and the largest difference between the two results (summation order only), on random
float32 operands of the head's shape, in one process, the two alternating.

    python benchmarks/head_rows.py [--vocab 262144 --hidden 640 --rows 1,4,8,16 --repeats 20]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch
from timing import best_of


class HeadOnly(torch.nn.Module):
    """A model that is only an output layer: what ``Head`` needs for ``few`` and ``logits``."""

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.linear = linear

    def get_output_embeddings(self) -> torch.nn.Linear:
        return self.linear


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", type=int, default=262_144)
    parser.add_argument("--hidden", type=int, default=640)
    parser.add_argument("--rows", default="1,4,8,16")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    from clue_models_llm.chunked_head import Head

    generator = torch.Generator().manual_seed(0)
    linear = torch.nn.Linear(args.hidden, args.vocab, bias=False)
    with torch.no_grad():
        linear.weight.copy_(torch.randn((args.vocab, args.hidden), generator=generator) * 0.02)
    head = Head(HeadOnly(linear))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; head {args.vocab} x {args.hidden}, "
          f"float32; best of {args.repeats}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'rows':>5} {'F.linear ms':>12} {'Head.few ms':>12} {'few faster':>11} {'max |diff|':>11}")
    with torch.inference_mode():
        for rows in (int(r) for r in args.rows.split(",")):
            hidden = torch.randn((rows, args.hidden), generator=generator)
            plain_s = few_s = float("inf")
            for _ in range(2):  # alternate, so neither side always runs on a warmer machine
                t, plain = best_of(lambda h=hidden: torch.nn.functional.linear(h, linear.weight), args.repeats // 2)
                plain_s = min(plain_s, t)
                t, few = best_of(lambda h=hidden: head.few(h), args.repeats // 2)
                few_s = min(few_s, t)
            diff = float((plain - few).abs().max())
            print(f"{rows:>5} {plain_s * 1e3:>12.2f} {few_s * 1e3:>12.2f} {plain_s / few_s:>10.2f}x {diff:>11.2e}")


if __name__ == "__main__":
    main()
