"""Issue 18: what the superclue tasks refuse, in one line and before anything is written.

An empty question file, a file without closed forms for ``superclue-close``, and a
``reference_run`` that is not a complete superclue run all stop the run with exit code 2 and
one line naming the file (and field where there is one), leaving no run folder behind.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clue_core.errors import ClueError, InputError
from clue_core.kernel import Kernel
from clue_tasks_superclue import hooks, pairwise
from clue_tasks_superclue.reader import read, read_close
from tests.superclue import scripted


def data_dir(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "data"
    folder.mkdir(exist_ok=True)
    (folder / "dev.jsonl").write_text(text, encoding="utf-8")
    return folder


def error_line(output: str) -> str:
    """The one ``error:`` line of the output (progress lines may come before it), no traceback."""
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in output, output
    return errors[0]


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
    assert result.output.strip() == error_line(result.output) and str(folder / "dev.jsonl") in result.output
    assert not (out / task).exists() and not (out / f".{task}.staging").exists()


# -- M9 / M7: a reference_run must be a complete superclue run ----------------------------

@pytest.fixture
def kernel() -> Kernel:
    kernel = Kernel()
    kernel.register(scripted.ScriptedModels(), "scripted-models")
    return kernel


@pytest.fixture
def reference(run_cli, tmp_path, kernel) -> Path:
    """A real, complete superclue run (scripted answers, judged): the output folder."""
    out = tmp_path / "reference"
    result = run_cli("run", "superclue", "--model", "scripted-answers", "--set", "judge=scripted-judge", "--sample",
                     "-o", out, kernel=kernel)
    assert result.exit_code == 0, result.output
    return out


def edit_manifest(folder: Path, **changes) -> Path:
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest.update(changes)
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return path


def bad_reference(kind: str, reference: Path, tmp_path: Path, run_cli, kernel) -> tuple[Path, str]:
    """A folder that holds ``predictions/dev.jsonl`` but is no complete superclue run, and the
    words the refusal must contain (the file or field it names)."""
    task_dir = reference / "superclue"
    if kind == "afqmc":
        out = tmp_path / "afqmc-run"
        result = run_cli("run", "afqmc", "--model", "baseline", "--sample", "-o", out, kernel=kernel)
        assert result.exit_code == 0, result.output
        return out / "afqmc", f"{out / 'afqmc' / 'manifest.json'}: field 'task'"
    if kind == "running":
        path = edit_manifest(task_dir, status="running")
        return reference, f"{path}: field 'status'"
    if kind == "staging":
        staging = reference / ".superclue.staging"
        shutil.copytree(task_dir, staging)
        return staging, f"{staging}: a staging folder"
    if kind == "only-staging":  # an output folder whose superclue run was interrupted
        (task_dir).rename(reference / ".superclue.staging")
        edit_manifest(reference / ".superclue.staging", status="running")
        return reference, "only an interrupted run, .superclue.staging"
    if kind == "other-tasks":  # an output folder holding other tasks' runs only
        out = tmp_path / "afqmc-run"
        result = run_cli("run", "afqmc", "--model", "baseline", "--sample", "-o", out, kernel=kernel)
        assert result.exit_code == 0, result.output
        return out, f"{out}: no superclue run here (it holds runs of afqmc)"
    if kind == "no-manifest":
        (task_dir / "manifest.json").unlink()
        return reference, f"{task_dir / 'manifest.json'}"
    if kind == "broken-manifest":
        (task_dir / "manifest.json").write_text("{not json", encoding="utf-8")
        return reference, f"{task_dir / 'manifest.json'}"
    records = task_dir / "predictions" / "dev.jsonl"
    if kind == "no-predictions":
        records.unlink()
        return reference, str(records)
    lines = records.read_text(encoding="utf-8").splitlines()
    if kind == "no-prediction-field":
        first = json.loads(lines[1])
        del first["prediction"]
        lines[1] = json.dumps(first, ensure_ascii=False)
        records.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return reference, f"{records}:2: field 'prediction'"
    if kind == "duplicate-id":
        records.write_text("\n".join([*lines, lines[0]]) + "\n", encoding="utf-8")
        return reference, f"{records}:{len(lines) + 1}: field 'id'"
    if kind == "empty-predictions":
        records.write_text("", encoding="utf-8")
        return reference, str(records)
    assert kind == "missing"
    return tmp_path / "nowhere", str(tmp_path / "nowhere")


BAD = ["afqmc", "running", "staging", "only-staging", "other-tasks", "no-manifest", "broken-manifest",
       "no-predictions", "no-prediction-field",
       "duplicate-id", "empty-predictions", "missing"]


@pytest.mark.parametrize("kind", BAD)
def test_a_reference_run_that_is_not_a_complete_superclue_run_is_refused(run_cli, tmp_path, kernel, reference,
                                                                          kind) -> None:
    folder, named = bad_reference(kind, reference, tmp_path, run_cli, kernel)
    out = tmp_path / "out"
    result = run_cli("run", "superclue", "--model", "scripted-rival", "--set", "judge=scripted-judge",
                     "--set", f"reference_run={folder}", "--sample", "-o", out, kernel=kernel)
    assert result.exit_code == 2, result.output
    line = error_line(result.output)
    assert "reference_run" in line and named in line, line
    assert not (out / "superclue").exists() and not (out / ".superclue.staging").exists()


@pytest.mark.parametrize("kind", BAD)
def test_the_plan_time_check_refuses_what_scoring_would(run_cli, tmp_path, kernel, reference, kind) -> None:
    folder, named = bad_reference(kind, reference, tmp_path, run_cli, kernel)
    with pytest.raises(ClueError) as caught:
        pairwise.check_settings({"judge": "scripted-judge", "reference_run": str(folder)})
    assert "reference_run" in str(caught.value) and named in str(caught.value)


def test_the_plan_time_check_accepts_a_good_run_either_folder_and_needs_a_judge(reference) -> None:
    for folder in (reference, reference / "superclue"):
        pairwise.check_settings({"judge": "scripted-judge", "reference_run": str(folder)})
    pairwise.check_settings({"judge": "", "reference_run": ""})  # nothing asked, nothing to check
    with pytest.raises(ClueError, match="needs a judge"):
        pairwise.check_settings({"judge": "", "reference_run": str(reference)})


@pytest.mark.parametrize("kind", ["missing", "running"])
def test_a_bad_reference_run_stops_a_run_of_several_tasks_before_the_first(run_cli, tmp_path, kernel, reference,
                                                                            kind) -> None:
    folder, named = bad_reference(kind, reference, tmp_path, run_cli, kernel)
    out = tmp_path / "out"
    result = run_cli("run", "afqmc", "superclue", "--model", "llm-tiny", "--sample", "--set", "judge=llm-tiny",
                     "--set", f"reference_run={folder}", "-o", out)
    assert result.exit_code == 2, result.output
    line = error_line(result.output)
    assert result.output.strip() == line and "reference_run" in line and named in line, result.output
    assert not out.exists() or not any(out.iterdir())  # no afqmc run, nothing half-written


# -- L7: counts print as whole numbers ---------------------------------------------------

COUNTS = ("questions", "judged", "unjudged", "repair_asked", "repaired", "pairwise_judged", "pairwise_unjudged",
          "pairwise_missing")


def test_the_run_table_prints_counts_as_whole_numbers_and_scores_with_decimals(run_cli, tmp_path, kernel,
                                                                                reference) -> None:
    result = run_cli("run", "superclue", "--model", "scripted-rival", "--set", "judge=scripted-judge",
                     "--set", f"reference_run={reference}", "--sample", "-o", tmp_path / "out", kernel=kernel)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("superclue "))
    shown = dict(item.rsplit(" ", 1) for item in row.split("  ")[2].strip().split(", ") if " " in item)
    dev = json.loads((tmp_path / "out" / "superclue" / "metrics.json").read_text(encoding="utf-8"))["dev"]
    assert {name: shown[name] for name in COUNTS} == {name: str(int(dev[name])) for name in COUNTS}, row
    assert shown["score"] == f"{dev['score']:.2f}" and shown["pairwise_win"] == f"{dev['pairwise_win']:.2f}"


def test_a_reference_run_gone_by_scoring_time_is_still_refused(run_cli, tmp_path, kernel, reference,
                                                               monkeypatch) -> None:
    """Planning saw it (check skipped here, as if the run was removed after planning); scoring refuses."""
    monkeypatch.setattr(pairwise, "check_settings", lambda settings: None)
    shutil.rmtree(reference)
    out = tmp_path / "out"
    result = run_cli("run", "superclue", "--model", "scripted-rival", "--set", "judge=scripted-judge",
                     "--set", f"reference_run={reference}", "--sample", "-o", out, kernel=kernel)
    assert result.exit_code == 2, result.output
    assert f"{reference}: no such run folder" in error_line(result.output)
    assert not (out / "superclue").exists() and not (out / ".superclue.staging").exists()
