"""The table ``clue-core run`` prints: a metric's counts as whole numbers (issue 18 L7)."""

from __future__ import annotations

import dataclasses

import clue_example_plugin.hooks as example_hooks
from clue_core.kernel import Kernel
from clue_core.plugin import MetricSpec, hookimpl


def counted(examples, predictions):
    return {"share": 12.5, "questions": float(len(examples)), "skipped": 0.0}


class Plugin:
    @hookimpl
    def clue_tasks(self):
        task = example_hooks.clue_tasks()[0]
        return [dataclasses.replace(task, name="counted", metrics=("counted",), primary_metric="share")]

    @hookimpl
    def clue_metrics(self):
        return [MetricSpec("counted", "tests.core.test_results_table:counted", "a share and two counts",
                           produces=("share", "questions", "skipped"), counts=("questions", "skipped"))]


def test_counts_print_as_whole_numbers_and_scores_with_two_decimals(run_cli, isolated_kernel: Kernel, tmp_path):
    isolated_kernel.register(Plugin(), "counting")
    result = run_cli("run", "counted", "--model", "baseline", "--sample", "-o", tmp_path, kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("counted"))
    assert "share 12.50, questions 16, skipped 0" in row, row


def test_counts_must_be_among_the_totals(isolated_kernel: Kernel):
    class Stray:
        @hookimpl
        def clue_metrics(self):
            return [MetricSpec("stray", "tests.core.test_results_table:counted", "x", produces=("share",),
                               counts=("questions",))]

    info = isolated_kernel.register(Stray(), "stray")
    assert info.status != "ok" and "counts questions are not among the totals it produces" in str(info.error)


def test_counts_of_a_metric_scored_beside_the_tasks_print_whole(run_cli, tmp_path):
    """Circular evaluation's metric is a learner's extra: its ``circular_questions`` is a count too."""
    result = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--set", "circular=all", "-o", tmp_path)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("c3"))
    assert "circular_questions 3," in row and "circular_questions 3.00" not in row, row
