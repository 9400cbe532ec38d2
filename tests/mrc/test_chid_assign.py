"""The exact CHID assignment against the memoised recursion it replaced and against brute force."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from clue_tasks_mrc import chid


def recursive_exact(table):
    """The first implementation: memoised recursion over (blank, used), first maximum wins."""
    n_blanks, n_choices = len(table), len(table[0])
    memo = {}

    def best(blank, used):
        if blank == n_blanks:
            return 0.0, ()
        if (blank, used) not in memo:
            top = None
            for choice in range(n_choices):
                if used & (1 << choice):
                    continue
                rest, tail = best(blank + 1, used | (1 << choice))
                total = table[blank][choice] + rest
                if top is None or total > top[0]:
                    top = (total, (choice, *tail))
            memo[(blank, used)] = top
        return memo[(blank, used)]

    return list(best(0, 0)[1])


def random_table(rng: random.Random, blanks: int, choices: int, ties: bool) -> list[list[float]]:
    if ties:  # few distinct values: many equal totals, so the tie rule decides
        return [[float(rng.randint(-2, 0)) for _ in range(choices)] for _ in range(blanks)]
    return [[math.log(rng.random()) for _ in range(choices)] for _ in range(blanks)]


@pytest.mark.parametrize("ties", [False, True])
def test_same_answer_as_the_recursion(ties: bool) -> None:
    rng = random.Random(17)
    for _ in range(150):
        choices = rng.randint(1, 10)
        table = random_table(rng, rng.randint(1, choices), choices, ties)
        assert chid.assign_exact(table) == recursive_exact(table), table


def test_optimal_and_lexicographically_first_by_brute_force() -> None:
    rng = random.Random(4)
    for _ in range(60):
        choices = rng.randint(2, 6)
        blanks = rng.randint(1, choices)
        table = random_table(rng, blanks, choices, ties=rng.random() < 0.5)
        # permutations come in lexicographic order, so max keeps the first of equal totals
        best = max(itertools.permutations(range(choices), blanks),
                   key=lambda p: sum(table[b][c] for b, c in enumerate(p)))
        got = chid.assign_exact(table)
        assert len(set(got)) == blanks
        assert sum(table[b][c] for b, c in enumerate(got)) == pytest.approx(
            sum(table[b][c] for b, c in enumerate(best)))
        if all(float(v).is_integer() for row in table for v in row):  # exact sums: the tie rule is testable
            assert got == list(best)


def test_nan_and_infinite_scores() -> None:
    nan, inf = float("nan"), float("inf")
    assert chid.assign_exact([[nan, -1.0, -2.0], [-0.5, nan, -3.0]]) == [1, 0]
    assert chid.assign_exact([[-inf, -inf], [-inf, -inf]]) == [0, 1]
    assert chid.assign_exact([[nan, nan]]) == [0]
    assert chid.assign_exact([]) == []
