"""Issue 18: what the superclue tasks refuse, in one line and before anything is written.

An empty question file, a file without closed forms for ``superclue-close``, and a
``reference_run`` that is not a complete superclue run all stop the run with exit code 2 and
one line naming the file (and field where there is one), leaving no run folder behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.errors import InputError
from clue_tasks_superclue import hooks
from clue_tasks_superclue.reader import read, read_close


def data_dir(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "data"
    folder.mkdir(exist_ok=True)
    (folder / "dev.jsonl").write_text(text, encoding="utf-8")
    return folder


def one_line(output: str) -> bool:
    return output.strip().count("\n") == 0 and "Traceback" not in output


# -- M8: an empty file, a file without closed forms -----------------------------------------

@pytest.mark.parametrize("text", ["", "\n  \n\n"], ids=["empty", "blank-lines"])
def test_an_empty_question_file_is_refused_naming_it(tmp_path, text) -> None:
    folder = data_dir(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read(hooks.SUPERCLUE, folder, "dev")
    assert caught.value.path == str(folder / "dev.jsonl") and "no questions" in caught.value.reason


def test_a_file_without_closed_forms_is_refused_by_superclue_close(tmp_path) -> None:
    folder = data_dir(tmp_path, json.dumps({"id": "q1", "dimension": "计算", "turns": "1+1?"}) + "\n")
    assert len(read(hooks.SUPERCLUE, folder, "dev").examples) == 1  # the open task still reads it
    with pytest.raises(InputError) as caught:
        read_close(hooks.CLOSE, folder, "dev")
    assert caught.value.path == str(folder / "dev.jsonl") and "'close'" in caught.value.reason


@pytest.mark.parametrize(("task", "text"), [
    ("superclue", ""),
    ("superclue-close", json.dumps({"id": "q1", "dimension": "计算", "turns": "1+1?"}) + "\n"),
])
def test_the_cli_refuses_an_empty_split_in_one_line_and_writes_nothing(run_cli, tmp_path, task, text) -> None:
    folder = data_dir(tmp_path, text)
    out = tmp_path / "out"
    result = run_cli("run", task, "--model", "llm-tiny", "--data-dir", folder, "-o", out)
    assert result.exit_code == 2, result.output
    assert one_line(result.output) and str(folder / "dev.jsonl") in result.output
    assert not (out / task).exists() and not (out / f".{task}.staging").exists()
