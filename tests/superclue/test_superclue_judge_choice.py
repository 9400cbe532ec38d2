"""The model named as judge is checked when the run is planned, before any question is answered."""

from __future__ import annotations


def test_a_judge_that_cannot_answer_open_questions_is_refused_up_front(run_cli, tmp_path):
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--set", "judge=hf-tiny", "--sample",
                     "-o", tmp_path / "o")
    assert result.exit_code == 2
    assert ("setting 'judge' names model hf-tiny, which cannot answer open_question examples"
            in result.output.strip().splitlines()[-1])
    assert "generating" not in result.output
    assert not (tmp_path / "o").exists()


def test_an_unknown_judge_is_refused_up_front(run_cli, tmp_path):
    result = run_cli("run", "superclue", "--model", "llm-tiny", "--set", "judge=no-such-model", "--sample",
                     "-o", tmp_path / "o")
    assert result.exit_code == 2
    assert "no-such-model" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "o").exists()
