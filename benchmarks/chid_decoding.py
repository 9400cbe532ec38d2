"""Benchmark: CHID joint decoding, exact and greedy, over a dev-sized split.

CHID gives each line 10 candidate idioms shared by all the blanks of its passages, and
no candidate answers two blanks of a line. ``clue_tasks_mrc.chid.decode`` assigns the
candidates to a line's blanks jointly: "exact" maximises the summed log-probabilities
over all assignments of distinct candidates (the default), "greedy" repeatedly fixes the
most probable remaining (blank, candidate) pair, as the CLUE baselines do. There is no
speed goal: the script prints both times, checks that exact never totals less than
greedy on any line, and shows how often the two disagree.

Data: 3,218 synthetic lines (the size of CHID dev), 10 candidates each, blanks per line
drawn around 7 (the real dev split has about 23,000 blanks on 3,218 lines; the real
records in the reference sample have 7, 7 and 9), from 1 to 10. Each blank gets a
prediction with random per-candidate logits turned into log-probabilities, as the HF
learner reports them, with the right candidate favoured so that lines look like a
half-trained model's (fixed seed).

    python benchmarks/chid_decoding.py            # 3,218 lines, best of 3
    python benchmarks/chid_decoding.py --quick    # 300 lines, 1 repeat
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins" / "clue-tasks-mrc")]

from timing import best_of  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

from clue_core.examples import MultipleChoiceExample, Prediction  # noqa: E402
from clue_tasks_mrc import chid  # noqa: E402

CANDIDATES = 10
IDIOMS = ["一马当先", "车水马龙", "画蛇添足", "守株待兔", "亡羊补牢", "对牛弹琴", "井底之蛙", "望梅止渴",
          "杯弓蛇影", "掩耳盗铃", "叶公好龙", "刻舟求剑", "狐假虎威", "胸有成竹", "卧薪尝胆", "破釜沉舟"]


def synthetic(n_lines: int, seed: int = 3218) -> tuple[list[MultipleChoiceExample], list[Prediction]]:
    rng = random.Random(seed)
    examples: list[MultipleChoiceExample] = []
    predictions: list[Prediction] = []
    tag = 577157
    for line in range(n_lines):
        candidates = tuple(rng.sample(IDIOMS, CANDIDATES))
        blanks = max(1, min(CANDIDATES, round(rng.gauss(7.2, 1.6))))
        answers = rng.sample(range(CANDIDATES), blanks)
        for answer in answers:
            tag += 1
            example = MultipleChoiceExample(f"#idiom{tag:06d}#", "____", "", candidates, answer, f"dev-{line}")
            logits = [rng.gauss(0.0, 1.0) + (1.5 if choice == answer else 0.0) for choice in range(CANDIDATES)]
            top = max(logits)
            log_total = math.log(sum(math.exp(v - top) for v in logits)) + top
            scores = tuple(v - log_total for v in logits)
            best = max(range(CANDIDATES), key=scores.__getitem__)
            examples.append(example)
            predictions.append(Prediction(example.id, best, scores))
    return examples, predictions


def line_totals(examples: Sequence[MultipleChoiceExample], predictions: Sequence[Prediction],
                decoded: Sequence[Prediction]) -> dict[str, float]:
    """Per line: the summed log-probability of the decoded choices."""
    scores = {p.id: p.scores for p in predictions}
    totals: dict[str, float] = {}
    for example, prediction in zip(examples, decoded):
        assert prediction.id == example.id
        totals[example.group] = totals.get(example.group, 0.0) + scores[example.id][prediction.value]
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="300 lines, one repeat")
    args = parser.parse_args()
    n_lines, repeats = (300, 1) if args.quick else (3218, 3)
    examples, predictions = synthetic(n_lines)

    exact_time, exact = best_of(lambda: chid.decode(examples, predictions, {"chid_decode": "exact"}), repeats)
    greedy_time, greedy = best_of(lambda: chid.decode(examples, predictions, {"chid_decode": "greedy"}), repeats)
    argmax_total = sum(line_totals(examples, predictions, predictions).values())
    exact_totals = line_totals(examples, predictions, exact)
    greedy_totals = line_totals(examples, predictions, greedy)
    worse = [line for line, total in exact_totals.items() if total < greedy_totals[line] - 1e-9]
    assert not worse, f"exact totals less than greedy on {len(worse)} lines, e.g. {worse[:3]}"
    for decoded in (exact, greedy):  # every line's blanks got distinct candidates
        chosen: dict[str, set[int]] = {}
        for example, prediction in zip(examples, decoded):
            assert prediction.value not in chosen.setdefault(example.group, set()), example.group
            chosen[example.group].add(prediction.value)
    better = sum(exact_totals[line] > greedy_totals[line] + 1e-9 for line in exact_totals)
    changed = sum(a.value != b.value for a, b in zip(exact, greedy))

    def accuracy(decoded: Sequence[Prediction]) -> float:
        return 100.0 * sum(p.value == e.label for e, p in zip(examples, decoded)) / len(examples)

    print(f"CHID joint decoding: {n_lines} lines, {len(examples)} blanks, {CANDIDATES} candidates, "
          f"best of {repeats}")
    print(f"exact beats greedy on {better} lines ({changed} blanks differ); exact never totals less: checked")
    print(f"summed log-probability: exact {sum(exact_totals.values()):.1f}, greedy "
          f"{sum(greedy_totals.values()):.1f}, independent argmax (may repeat a candidate) {argmax_total:.1f}")
    print()
    print(f"{'decoder':<10}{'seconds':>10}{'ms/line':>10}{'accuracy':>10}")
    for name, seconds, decoded in (("exact", exact_time, exact), ("greedy", greedy_time, greedy)):
        print(f"{name:<10}{seconds:>10.3f}{1000 * seconds / n_lines:>10.3f}{accuracy(decoded):>9.2f}%")
    print(f"{'argmax':<10}{'-':>10}{'-':>10}{accuracy(predictions):>9.2f}%")


if __name__ == "__main__":
    main()
