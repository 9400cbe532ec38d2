"""``clue-core compare`` says what is wrong with what it was given (issue 18: L8, L9)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compare.fixtures import write_run

QUESTIONS = [("q1", "计算", 8.0), ("q2", "逻辑推理", 6.0)]


def _error(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output, result.output
    return result.stderr


def test_a_folder_of_other_runs_is_no_superclue_run(compare, tmp_path: Path) -> None:
    ref = write_run(tmp_path / "ref", "ref", QUESTIONS)
    clue = tmp_path / "base"
    for task in ("afqmc", "tnews"):
        write_run(clue, "hf-tiny", QUESTIONS, task=task)
    out = tmp_path / "out"
    message = _error(compare(clue, "--reference", ref, "-o", out))
    assert f"{clue}: no superclue run here (it holds runs of afqmc, tnews" in message and "--task" in message
    assert "manifest.json" not in message
    assert not out.exists()


def test_an_interrupted_run_is_named(compare, tmp_path: Path) -> None:
    ref = write_run(tmp_path / "ref", "ref", QUESTIONS)
    staged = tmp_path / "a"
    write_run(staged, "a", QUESTIONS)
    (staged / "superclue").rename(staged / ".superclue.staging")
    message = _error(compare(staged, "--reference", ref, "-o", tmp_path / "out"))
    assert f"{staged}: no superclue run here" in message and ".superclue.staging" in message and "--resume" in message


def test_human_names_that_match_no_model_are_listed(compare, tmp_path: Path) -> None:
    runs = [write_run(tmp_path / name, name, [("q1", "计算", points)])
            for name, points in (("qwen-7b", 8.0), ("glm-4", 7.0), ("yi-34b", 6.0))]
    human = tmp_path / "elo.json"
    human.write_text(json.dumps({"Qwen-7B": 1200, "GLM-4": 1100, "Yi-34B": 1000}), encoding="utf-8")
    message = _error(compare(*runs[1:], "--reference", runs[0], "-o", tmp_path / "out", "--human", human))
    assert "0 model(s) both compared and in the human ranking" in message
    assert "names in the file: Qwen-7B, GLM-4, Yi-34B" in message
    assert "compared models: qwen-7b, glm-4, yi-34b" in message
    assert not (tmp_path / "out" / "comparison.json").exists()
