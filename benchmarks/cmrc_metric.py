"""Benchmark: the CMRC2018 metric against the same metric written the straightforward way.

The "straightforward" metric follows the official script's structure: for every (gold
answer, prediction) pair it segments both strings again, calls the tokenizer on every
non-Chinese run and fills a full (n+1)×(m+1) matrix for the longest common run. Ours
segments each distinct string once (caches start empty in every repeat), skips NLTK for
plain words and keeps one row of the matrix. Both use the same NLTK tokenizers (the
offline equivalent of ``nltk.word_tokenize``), so the numbers must be equal — the script
asserts it — and only the time differs.

Data: 3,219 synthetic questions (the size of CMRC2018 dev) with 3 gold answers each,
built from a fixed seed: Chinese spans with numbers and Latin words mixed in,
punctuation, and predictions that overlap the gold partially, fully or not at all.

    python benchmarks/cmrc_metric.py            # full size, 5 repeats
    python benchmarks/cmrc_metric.py --quick    # 300 questions, 1 repeat
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "clue-tasks-mrc"))

from timing import best_of

from clue_tasks_mrc import cmrc_metric, word_tokens

SP_CHAR = list(cmrc_metric.OFFICIAL_PUNCTUATION)
HANZI = "".join(chr(code) for code in range(0x4E00, 0x4E00 + 600))  # a 600-character alphabet
LATIN = ["ω-force", "Nexon", "USS Port Royal", "CG-73", "2v2", "U.S. Army", "Mr. Li", "http://a.cn/x", "3.14", "1,000"]
PUNCT = "，。、：《》「」（）-·"


class StraightforwardMetric:
    """The official script's structure, kept deliberately naive (no caching, full matrix)."""

    def __init__(self, tokenize) -> None:
        self.tokenize = tokenize
        self.sp_char = SP_CHAR

    def mixed_segmentation(self, in_str: str, rm_punc: bool = False) -> list[str]:
        in_str = str(in_str).lower().strip()
        segs_out: list[str] = []
        temp_str = ""
        for char in in_str:
            if rm_punc and char in self.sp_char:
                continue
            if re.search("[\u4e00-\u9fa5]", char) or char in self.sp_char:
                if temp_str != "":
                    segs_out.extend(self.tokenize(temp_str))
                    temp_str = ""
                segs_out.append(char)
            else:
                temp_str += char
        if temp_str != "":
            segs_out.extend(self.tokenize(temp_str))
        return segs_out

    def remove_punctuation(self, in_str: str) -> str:
        in_str = str(in_str).lower().strip()
        return "".join(char for char in in_str if char not in self.sp_char)

    @staticmethod
    def find_lcs(s1: list[str], s2: list[str]) -> int:
        m = [[0 for _ in range(len(s2) + 1)] for _ in range(len(s1) + 1)]
        mmax = 0
        for i in range(len(s1)):
            for j in range(len(s2)):
                if s1[i] == s2[j]:
                    m[i + 1][j + 1] = m[i][j] + 1
                    mmax = max(mmax, m[i + 1][j + 1])
        return mmax

    def calc_f1_score(self, answers: list[str], prediction: str) -> float:
        f1_scores = []
        for ans in answers:
            ans_segs = self.mixed_segmentation(ans, rm_punc=True)
            prediction_segs = self.mixed_segmentation(prediction, rm_punc=True)
            lcs_len = self.find_lcs(ans_segs, prediction_segs)
            if lcs_len == 0:
                f1_scores.append(0)
                continue
            precision = 1.0 * lcs_len / len(prediction_segs)
            recall = 1.0 * lcs_len / len(ans_segs)
            f1_scores.append((2 * precision * recall) / (precision + recall))
        return max(f1_scores)

    def calc_em_score(self, answers: list[str], prediction: str) -> int:
        return int(any(self.remove_punctuation(a) == self.remove_punctuation(prediction) for a in answers))

    def score(self, golds: list[list[str]], predictions: list[str | None]) -> dict[str, float]:
        em = f1 = 0.0
        for answers, prediction in zip(golds, predictions):
            if prediction is None:
                continue
            f1 += self.calc_f1_score(answers, prediction)
            em += self.calc_em_score(answers, prediction)
        em_score, f1_score = 100.0 * em / len(golds), 100.0 * f1 / len(golds)
        return {"em": em_score, "f1": f1_score, "average": (em_score + f1_score) / 2}


def synthetic(n_questions: int, seed: int = 2018) -> tuple[list[list[str]], list[str | None]]:
    rng = random.Random(seed)

    def span(length: int) -> str:
        parts = []
        for _ in range(length):
            roll = rng.random()
            if roll < 0.08:
                parts.append(rng.choice(LATIN))
            elif roll < 0.15:
                parts.append(str(rng.randint(1, 2024)))
            elif roll < 0.22:
                parts.append(rng.choice(PUNCT))
            else:
                parts.append(rng.choice(HANZI))
        return "".join(parts)

    golds, predictions = [], []
    for _ in range(n_questions):
        base = span(rng.randint(2, 14))
        answers = [base, base, base]
        if rng.random() < 0.5:
            answers[1] = base[: max(1, len(base) - rng.randint(0, 3))]
        if rng.random() < 0.5:
            answers[2] = span(2) + base
        roll = rng.random()
        if roll < 0.02:
            prediction = None
        elif roll < 0.35:
            prediction = rng.choice(answers)
        elif roll < 0.75:
            prediction = base[rng.randint(0, len(base) // 2) :] + span(rng.randint(0, 4))
        else:
            prediction = span(rng.randint(1, 12))
        golds.append(answers)
        predictions.append(prediction)
    return golds, predictions


def empty_caches() -> None:
    """Every repeat starts cold: the caches would otherwise serve the second repeat for free."""
    cmrc_metric.mixed_segmentation.cache_clear()
    cmrc_metric.remove_punctuation.cache_clear()
    word_tokens._word_tokenize_cached.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="300 questions, one repeat")
    args = parser.parse_args()
    n_questions, repeats = (300, 1) if args.quick else (3219, 5)
    golds, predictions = synthetic(n_questions)

    # Both sides use the same NLTK tokenizers (imported here, outside the timing); the
    # straightforward side calls them on every run, as the official script does.
    sentences, words = word_tokens._tokenizers()
    naive = StraightforwardMetric(lambda text: [t for s in sentences.tokenize(text) for t in words.tokenize(s)])

    naive_time, naive_result = best_of(lambda: naive.score(golds, predictions), repeats, empty_caches)
    ours_time, ours_result = best_of(lambda: cmrc_metric.score(golds, predictions), repeats, empty_caches)
    for key in ("em", "f1", "average"):
        assert abs(naive_result[key] - ours_result[key]) < 1e-9, (key, naive_result, ours_result)

    print(f"CMRC2018 metric: {n_questions} questions x 3 gold answers, best of {repeats}")
    print(f"EM {ours_result['em']:.3f}  F1 {ours_result['f1']:.3f}  average {ours_result['average']:.3f} (equal)")
    print()
    print(f"{'implementation':<34}{'seconds':>10}{'ratio':>8}")
    print(f"{'straightforward (official shape)':<34}{naive_time:>10.4f}{1.0:>8.2f}")
    print(f"{'clue_tasks_mrc.cmrc_metric':<34}{ours_time:>10.4f}{naive_time / ours_time:>8.2f}")


if __name__ == "__main__":
    main()
