"""Progress lines name the split they are about: "scoring 16 examples by likelihood" printed twice
(dev, then test) said nothing of which was slow; the kernel now tells a learner the split it is
predicting (``context.split``) and llm-tiny's lines name it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from clue_builtin.baseline import BaselineLearner
from clue_core.context import RunContext
from clue_core.kernel import Kernel
from clue_core.scoring import TaskScoring


def _said(stderr: str, task: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(f"[{task}] llm-tiny: ")]


@pytest.mark.slow
def test_llm_progress_lines_name_each_split(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("CLUE_PROGRESS", "lines")
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")
    result = run_cli("run", "c3", "fewclue-eprstmt", "cmrc2018", "-m", "llm-tiny", "--sample", "-o", tmp_path / "r")
    assert result.exit_code == 0, result.output
    c3 = _said(result.stderr, "c3")
    assert [line for line in c3 if "by likelihood" in line] == [
        "[c3] llm-tiny: scoring 3 dev examples by likelihood (0 cached)",
        "[c3] llm-tiny: scoring 3 test 1.1 examples by likelihood (0 cached)",
        "[c3] llm-tiny: scoring 1 test 1.0 example by likelihood (0 cached)"]
    assert [line.split(":")[1] for line in c3 if "/" in line] == [" scoring dev", " scoring test 1.1",
                                                                  " scoring test 1.0"]
    assert "[fewclue-eprstmt] llm-tiny: scoring 6 test_public examples by likelihood (0 cached)" in result.stderr
    generating = [line for line in _said(result.stderr, "cmrc2018") if "cached)" in line]
    assert generating == ["[cmrc2018] llm-tiny: generating 6 dev answers (0 cached)",
                          "[cmrc2018] llm-tiny: generating 4 test 1.1 answers (0 cached)"]


class Watching(BaselineLearner):
    """The baseline, noting which split the context names at each predict call."""

    seen: list[str]
    context: RunContext

    def predict(self, examples: Sequence[Any]) -> list[Any]:
        self.seen.append(self.context.split)
        return super().predict(examples)


def test_context_split_names_each_predicted_split_and_is_empty_after():
    kernel = Kernel()
    task = kernel.task("afqmc")
    from clue_core.data import sample_dir
    from clue_core.reading import read_split

    dev = read_split(task, sample_dir(task), "dev").examples
    test = read_split(task, sample_dir(task), "test").examples
    learner = Watching(task.name, task.kind, task.labels)
    learner.seen, learner.context = [], RunContext(task=task)
    learner.fit(dev, dev, learner.context)
    assert learner.context.split == ""
    TaskScoring(kernel, task, dev, None).results(learner, {"1.1": test}, learner.context, {"public": dev})
    assert learner.seen == ["dev", "public", "test 1.1"] and learner.context.split == ""
