"""KgCLUE asked of language models: the task's render and parse (clue_tasks_kgclue.prompting), end to end.

The LLM plugin names no task: it runs the kbqa_triple kind through the task's ``Prompt.render``,
``parse`` and ``answer``. Here: the prompt (closed book, and with the KB's candidates), the parse's
rules (a missing part is "", malformed answers), then ``clue-core run kgclue`` in-process with
``llm-tiny`` and with ``answers:<file>`` (recorded answers, so the scores are known exactly).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clue_models_llm.hooks as llm_hooks
from clue_core.kernel import Kernel
from clue_tasks_kgclue import hooks as kgclue_plugin
from clue_tasks_kgclue.prompting import EMPTY, answer, parse, render
from clue_tasks_kgclue.triples import KbqaExample, split_answer

SAMPLE = Path(kgclue_plugin.__file__).resolve().parent / "samples" / "kgclue"


@pytest.fixture
def llm_kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(kgclue_plugin, "clue-tasks-kgclue", distribution="clue-tasks-kgclue")
    isolated_kernel.register(llm_hooks, "clue-models-llm", distribution="clue-models-llm")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# -- prompt and parse -----------------------------------------------------------------------

QUESTION = KbqaExample(0, "刘晓华主要讲什么课啊？", ("刘晓华（广东工业大学教授）", "主讲课程", "《固体物理》"))


def test_closed_book_is_the_question_and_candidates_are_listed_one_a_line() -> None:
    assert render(QUESTION) == "问题：刘晓华主要讲什么课啊？"
    candidates = (("刘晓华（广东工业大学教授）", "主讲课程", "《固体物理》"), ("刘晓华（演员）", "代表作品", "甲"))
    with_kb = KbqaExample(0, "刘晓华主要讲什么课啊？", candidates=candidates)
    assert render(with_kb).splitlines()[-2:] == ["刘晓华（广东工业大学教授） ||| 主讲课程 ||| 《固体物理》",
                                                 "刘晓华（演员） ||| 代表作品 ||| 甲"]
    assert answer(QUESTION) == "刘晓华（广东工业大学教授） ||| 主讲课程 ||| 《固体物理》"
    assert answer(KbqaExample(1, "q")) == ""


@pytest.mark.parametrize("text, value", [
    ("刘晓华 ||| 主讲课程 ||| 《固体物理》", "刘晓华 ||| 主讲课程 ||| 《固体物理》"),
    ("答案：刘晓华|||主讲课程|||《固体物理》\n解释：……", "刘晓华 ||| 主讲课程 ||| 《固体物理》"),
    ("  刘晓华 ||| 主讲课程  ", "刘晓华 ||| 主讲课程 ||| "),  # the object missing: an empty part, not malformed
    ("刘晓华 ||| 主讲课程 |||", "刘晓华 ||| 主讲课程 ||| "),
])
def test_parts_are_read_and_a_missing_part_is_empty(text: str, value: str) -> None:
    assert parse(text, QUESTION) == (value, None)
    assert split_answer(value) is not None


@pytest.mark.parametrize("text", ["《固体物理》", "", "a ||| b ||| c ||| d"])
def test_malformed_answers_are_three_empty_parts_and_say_why(text: str) -> None:
    value, problem = parse(text, QUESTION)
    assert value == EMPTY == " |||  ||| " and problem and "subject ||| predicate ||| object" in problem


# -- end to end -----------------------------------------------------------------------------

def run(run_cli, kernel: Kernel, out: Path, model: str, *more: str) -> Path:
    result = run_cli("run", "kgclue", "--model", model, "--sample", "-o", out, *more, kernel=kernel)
    assert result.exit_code == 0, result.output
    return out / "kgclue"


def read(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text(encoding="utf-8"))


def test_llm_tiny_runs_the_sample_with_the_kbs_candidates_in_the_prompt(run_cli, llm_kernel: Kernel,
                                                                         tmp_path: Path) -> None:
    folder = run(run_cli, llm_kernel, tmp_path / "out", "llm-tiny", "--set", "kb=Knowledge.txt",
                 "--set", "max_new_tokens=24")
    records = lines(folder / "predictions" / "dev.jsonl")
    assert [r["id"] for r in records] == [r["id"] for r in lines(SAMPLE / "dev.json")]
    assert "刘晓华（广东工业大学教授） ||| 主讲课程 ||| 《固体物理》\n" in records[0]["raw"]["prompt"]
    assert all(split_answer(r["prediction"]) is not None for r in records)  # always a well-formed value
    scored = lines(folder / "predictions" / "test_public.jsonl") + lines(folder / "predictions" / "test-1.0.jsonl")
    info = read(folder, "manifest.json")["model_info"]
    assert info["malformed"] == sum("malformed" in r["raw"] for r in records + scored) and info["examples"] == 48
    metrics = read(folder, "metrics.json")
    assert metrics["dev"]["malformed"] == 0 and 0 <= metrics["dev"]["emf1"] <= 100
    assert (folder / "submission" / "kgclue_predict.json").is_file()


def test_recorded_answers_score_exactly(run_cli, llm_kernel: Kernel, tmp_path: Path) -> None:
    """8 answers right, 4 without their object, 4 malformed: each part's EM and F1 known in advance."""
    dev = lines(SAMPLE / "dev.json")
    said = {}
    for record in dev:
        subject, predicate, _ = record["answer"].split(" ||| ")
        i = record["id"]
        said[i] = record["answer"] if i < 8 else f"{subject} ||| {predicate}" if i < 12 else "我不知道"
    file = tmp_path / "answers.jsonl"
    file.write_text("".join(json.dumps({"id": i, "answer": a}, ensure_ascii=False) + "\n" for i, a in said.items()),
                    encoding="utf-8")
    folder = run(run_cli, llm_kernel, tmp_path / "out", f"answers:{file}")
    metrics = read(folder, "metrics.json")["dev"]
    assert metrics["em_s"] == pytest.approx(75.0) and metrics["em_p"] == pytest.approx(75.0)
    assert metrics["f1_s"] == pytest.approx(75.0) and metrics["f1_p"] == pytest.approx(75.0)
    assert metrics["em_o"] == pytest.approx(50.0) and metrics["f1_o"] == pytest.approx(50.0)
    assert metrics["emf1"] == pytest.approx(50.0) and metrics["em_all"] == pytest.approx(50.0)
    assert metrics["malformed"] == 0  # the model's values are always three parts
    records = lines(folder / "predictions" / "dev.jsonl")
    assert [r["prediction"] for r in records[12:]] == [EMPTY] * 4
    assert [bool(r["raw"].get("malformed")) for r in records] == [False] * 12 + [True] * 4
    assert read(folder, "manifest.json")["model_info"]["malformed"] == 4
