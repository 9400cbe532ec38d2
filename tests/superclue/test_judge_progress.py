"""Judging shows its progress, judge by judge and round by round (issue 22).

Progress lines are forced on (``CLUE_PROGRESS=lines``, a line at every move). A scripted judge
shows no progress of its own, so each round's line comes when the round ends; an ``llm-tiny``
judge's answers move the judging line as they are committed, and its own ``generating`` line
is not shown beside it.
"""

from __future__ import annotations

import re

import pytest

from clue_core.kernel import Kernel
from tests.superclue import scripted

JUDGING = re.compile(r"^superclue: (judge(?:\.\d)?) (\S+)( \(repairs\))?: (\d+)/(\d+) judgments")


def judging_lines(stderr: str) -> list[tuple[str, str, bool, int, int]]:
    found = (JUDGING.match(line) for line in stderr.splitlines())
    return [(m.group(1), m.group(2), bool(m.group(3)), int(m.group(4)), int(m.group(5))) for m in found if m]


@pytest.fixture
def kernel() -> Kernel:
    kernel = Kernel()
    kernel.register(scripted.ScriptedModels(), "scripted-models")
    return kernel


@pytest.fixture(autouse=True)
def lines_always(monkeypatch):
    monkeypatch.setenv("CLUE_PROGRESS", "lines")
    monkeypatch.setenv("CLUE_PROGRESS_EVERY", "0")


def test_a_panel_shows_each_judge_and_its_repairs(run_cli, tmp_path, kernel, monkeypatch) -> None:
    monkeypatch.setattr(scripted, "ANSWERS", {"calc-001": "<<bad4>>", "know-002": "<<bad6>>"})
    result = run_cli("run", "superclue", "--model", "scripted-answers", "--set", "judge=scripted-judge,scripted-judge",
                     "--sample", "-o", tmp_path / "o", kernel=kernel)
    assert result.exit_code == 0, result.output
    found = judging_lines(result.stderr)
    asked = {total for _, _, repairs, _, total in found if not repairs}
    assert len(asked) == 1, found
    judged = asked.pop()
    assert judged > 2
    assert found == [("judge.0", "scripted-judge", False, judged, judged), ("judge.0", "scripted-judge", True, 2, 2),
                     ("judge.1", "scripted-judge", False, judged, judged), ("judge.1", "scripted-judge", True, 2, 2)]
    assert "superclue: judge.1 scripted-judge (repairs): 2/2 judgments in " in result.stderr


def test_progress_off_shows_no_judging_line(run_cli, tmp_path, kernel, monkeypatch) -> None:
    monkeypatch.setenv("CLUE_PROGRESS", "off")
    result = run_cli("run", "superclue", "--model", "scripted-answers", "--set", "judge=scripted-judge",
                     "--sample", "-o", tmp_path / "o", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert judging_lines(result.stderr) == []


@pytest.mark.slow
def test_an_llm_judge_moves_the_judging_line_answer_by_answer(run_cli, tmp_path, kernel) -> None:
    result = run_cli("run", "superclue", "--model", "scripted-answers", "--set", "judge=llm-tiny",
                     "--set", "judge.max_new_tokens=4", "--set", "judge.eval_batch_size=8", "--sample",
                     "-o", tmp_path / "o", kernel=kernel)
    assert result.exit_code == 0, result.output
    found = judging_lines(result.stderr)
    for repairs in (False, True):  # a random model never follows the format: every judgment is repaired
        rounds = [(done, total) for _, name, again, done, total in found if again is repairs and name == "llm-tiny"]
        assert rounds, (repairs, result.stderr)
        total = rounds[0][1]
        done = [d for d, t in rounds if t == total]
        assert len(done) == len(rounds) and done[-1] == total and len(done) >= total // 8
        assert all(0 < b - a <= 8 for a, b in zip([0, *done], done)), done  # one line per committed batch
    assert "[superclue] llm-tiny: generating dev:" not in result.stderr  # gathered into the judging line
    assert re.search(r"\[superclue\] llm-tiny: generating \d+ dev answers \(0 cached\)", result.stderr)
