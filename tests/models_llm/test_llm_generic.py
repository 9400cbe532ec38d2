"""Kinds the LLM plugin does not know, answered through the task's Prompt.parse/render/answer (clue_models_llm.generic).

The tasks here are CLUENER2020's spec with its prompt functions taken away or replaced by this
module's, so every refusal is the one a third party's task would meet: one ``error:`` line, before
any task runs, never a traceback.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import clue_models_llm.hooks as llm_hooks
import clue_tasks_ner.hooks as ner_hooks
from clue_core.kernel import Kernel
from clue_core.plugin import TaskSpec, hookimpl
from clue_tasks_ner.prompting import answer as gold_answer

HERE = __name__


def raising_parse(answer: str, example: Any) -> Any:
    raise KeyError("oops")


def shapeless_parse(answer: str, example: Any) -> Any:
    return ["not", "a", "pair"]


class Tasks:
    """An in-test plugin: CLUENER2020 under other names, with other prompt functions."""

    def __init__(self, *tasks: TaskSpec) -> None:
        self.tasks = list(tasks)

    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return self.tasks


def variant(name: str, **prompt: Any) -> TaskSpec:
    return replace(ner_hooks.CLUENER2020, name=name, published=(), prompt=replace(ner_hooks.PROMPT, **prompt))


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(ner_hooks, "clue-tasks-ner", distribution="clue-tasks-ner")
    isolated_kernel.register(llm_hooks, "clue-models-llm", distribution="clue-models-llm")
    isolated_kernel.register(Tasks(variant("ner-noparse", parse=None, answer=None),
                                   variant("ner-noanswer", answer=None),
                                   variant("ner-raising", parse=f"{HERE}:raising_parse"),
                                   variant("ner-shapeless", parse=f"{HERE}:shapeless_parse")), "ner-variants")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel


def error_lines(result: Any) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("error:")]


def test_a_generic_kind_without_parse_is_refused_in_one_line_before_any_task_runs(run_cli, kernel: Kernel,
                                                                                 tmp_path: Path) -> None:
    result = run_cli("run", "cluener2020", "ner-noparse", "--model", "llm-tiny", "--sample", "-o", tmp_path / "o",
                     kernel=kernel)
    assert result.exit_code == 2, result.output
    assert error_lines(result) == [line for line in result.output.splitlines() if line.strip()][-1:]
    assert "ner-noparse" in result.output and "Prompt.parse" in result.output
    assert not (tmp_path / "o" / "cluener2020" / "metrics.json").exists()  # refused at planning: nothing ran


def test_shots_without_the_tasks_answer_function_is_refused_at_planning(run_cli, kernel: Kernel,
                                                                        tmp_path: Path) -> None:
    result = run_cli("run", "ner-noanswer", "--model", "llm-tiny", "--sample", "--set", "shots=1",
                     "-o", tmp_path / "o", kernel=kernel)
    assert result.exit_code == 2 and "Prompt.answer" in result.output and len(error_lines(result)) == 1


@pytest.mark.parametrize("task, said", [("ner-raising", "raised on example 0 (KeyError"),
                                        ("ner-shapeless", "must return (value, problem), got list")])
def test_a_parse_that_breaks_its_contract_is_one_line_naming_it(run_cli, kernel: Kernel, tmp_path: Path,
                                                                task: str, said: str) -> None:
    result = run_cli("run", task, "--model", "llm-tiny", "--sample", "--set", "max_new_tokens=4",
                     "-o", tmp_path / "o", kernel=kernel)
    assert result.exit_code == 2, result.output
    assert len(error_lines(result)) == 1 and said in result.output and f"{task}: its parse {HERE}:" in result.output


def test_a_prompt_function_that_is_no_reference_is_a_problem_on_its_plugins_row(isolated_kernel: Kernel) -> None:
    isolated_kernel.register(ner_hooks, "clue-tasks-ner", distribution="clue-tasks-ner")
    info = isolated_kernel.register(Tasks(variant("ner-badref", parse="not a reference")), "ner-variants")
    assert info.status == "error" and "prompt parse must be 'module:attr', got 'not a reference'" in str(info.error)


def test_few_shot_demos_are_the_tasks_answers_and_the_questions_its_template(run_cli, kernel: Kernel,
                                                                             tmp_path: Path) -> None:
    result = run_cli("run", "cluener2020", "--model", "llm-tiny", "--sample", "--set", "shots=1",
                     "--set", "max_new_tokens=4", "-o", tmp_path / "o", kernel=kernel)
    assert result.exit_code == 0, result.output
    folder = tmp_path / "o" / "cluener2020"
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    demo_id = manifest["model_info"]["shots"]["ids"][0]
    from clue_tasks_ner.reader import read

    demo = next(e for e in read(ner_hooks.CLUENER2020, Path(ner_hooks.__file__).parent / "samples" / "cluener2020",
                                "train").examples if e.id == demo_id)
    first = json.loads((folder / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert f"句子：{demo.text}\n答案：{gold_answer(demo)}\n\n句子：" in first["raw"]["prompt"]
