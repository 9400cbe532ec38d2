"""Faults a hostile review of the run record (issue 19) provoked in its one reader and one writer.

Each test names what was done to a run directory and what the new code did before its fix:
a ``schema`` that is no name at all taken for a newer clue-core's, fields of the wrong type read
and then crashing ``submit`` or ``report`` with a traceback, ``submit`` reading the test data of
the current folder, NaN accepted in prediction lines, a huge integer or a deep nesting ending in
a Python traceback, and the writer writing a run its own reader refuses. The attacks that held
(unknown fields, runs of the previous release, BOM, blank lines, a symbolic link, a metrics file
that is a folder, a truncated staging manifest) are kept here so that they go on holding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clue_core.errors import ClueError, InputError
from clue_core.record import MANIFEST, METRICS, NewerRecord, iter_predictions, read_manifest, read_metrics, read_run

TASK = "review-sentiment"
NAN = float("nan")


@pytest.fixture
def run_dir(run_cli, tmp_path: Path) -> Path:
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    return tmp_path / "out" / TASK


@pytest.fixture
def afqmc_run(run_cli, tmp_path: Path) -> Path:
    """A run of a task with a leaderboard file (submit checks it against the test data)."""
    result = run_cli("run", "afqmc", "--model", "baseline", "--sample", "-o", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    return tmp_path / "runs" / "afqmc"


def _edit(path: Path, field: str, value: Any) -> None:
    """Set ``field`` (``data.data_dir`` reaches into an object) as json.dumps writes it (NaN too)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    *outer, last = field.split(".")
    target = data
    for key in outer:
        if not isinstance(target.get(key), dict):
            target[key] = {}  # a full run's "partial" is null
        target = target[key]
    target[last] = value
    path.write_text(json.dumps(data), encoding="utf-8")


def _one_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output


# -- schema --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [MANIFEST, METRICS])
@pytest.mark.parametrize("schema", [1, ["clue-core/run@1"], None, True, {"name": "clue-core/run@1"}, ""])
def test_a_schema_that_is_no_name_is_a_damaged_file_not_a_newer_one(run_dir: Path, name: str, schema: Any) -> None:
    """It was refused as 'written by a newer clue-core; upgrade clue-core' (a NewerRecord): an upgrade reads it
    no better, and --resume passed that advice on instead of pointing at --overwrite."""
    _edit(run_dir / name, "schema", schema)
    with pytest.raises(InputError) as refused:
        read_run(run_dir)
    assert not isinstance(refused.value, NewerRecord)
    assert refused.value.field == "schema" and "expected the schema name clue-core/run@1" in str(refused.value)
    assert "upgrade" not in str(refused.value)


def test_resume_over_a_run_with_a_damaged_schema_points_at_overwrite(run_cli, run_dir: Path) -> None:
    _edit(run_dir / MANIFEST, "schema", 1)
    line = _one_line(run_cli("run", TASK, "--model", "baseline", "--sample", "-o", run_dir.parent, "--resume"))
    assert "holds no complete run" in line and "--overwrite" in line and "upgrade" not in line


def test_the_schema_with_fields_this_release_does_not_know_reads(run_dir: Path) -> None:
    for name in (MANIFEST, METRICS):
        _edit(run_dir / name, "from_the_future", {"x": [1, 2]})
        _edit(run_dir / name, "another", "field")
    run = read_run(run_dir)
    assert run.manifest.data["from_the_future"] == {"x": [1, 2]} and run.metrics.data["another"] == "field"


# -- every field of the wrong type -----------------------------------------------------------

MANIFEST_WRONG = [
    ("status", 5), ("task", []), ("model", {}), ("clue_core", 1), ("kind", 3), ("model_spec", [1]),
    ("seed", "7"), ("seed", 7.5), ("seed", True), ("world_size", "1"), ("no_train", "no"), ("started", 5),
    ("finished", []), ("python", 3.11), ("settings", []), ("setting_sources", "x"), ("schedule", 1),
    ("test_versions", []), ("model_info", "x"), ("plugins", []), ("counts", []), ("counts.dev", "16"),
    ("submission_files", "a.json"), ("submission_files", [1]), ("notes", [{"x": 1}]), ("command", "run"),
    ("command", [None]), ("partial", []), ("partial.limit", "3"), ("data", []), ("data.source", ["x"]),
    ("data.data_dir", 5), ("data.user_data_dir", 7), ("data.files", [1]), ("model_info.cost", NAN),
]


@pytest.mark.parametrize(("field", "value"), MANIFEST_WRONG, ids=[f"{f}={v!r}" for f, v in MANIFEST_WRONG])
def test_a_manifest_field_of_the_wrong_type_is_named(run_dir: Path, field: str, value: Any) -> None:
    """Before, data.*, model_spec, kind, no_train, world_size, counts, the list items and NaN were read as they
    were: report crashed on data.files as a list ('list' has no 'items') or model_spec as a list
    (unhashable), submit on data.data_dir as a number (TypeError)."""
    _edit(run_dir / MANIFEST, field, value)
    with pytest.raises(InputError) as refused:
        read_manifest(run_dir)
    assert refused.value.path == str(run_dir / MANIFEST)
    assert refused.value.field is not None and refused.value.field.startswith(field.split(".")[0])


METRICS_WRONG = [
    ("task", 5), ("primary_metric", None), ("model", 1), ("split", []), ("model_category", 1), ("primary", "x"),
    ("train_seconds", "x"), ("train_seconds", NAN), ("dev", []), ("dev.accuracy", "x"), ("counts.dev", None),
    ("partial", "no"), ("sample", "yes"), ("report_settings", []), ("model_info", 1), ("leaderboards", {}),
    ("leaderboards", [1]), ("model_info.cost", float("inf")),
]


@pytest.mark.parametrize(("field", "value"), METRICS_WRONG, ids=[f"{f}={v!r}" for f, v in METRICS_WRONG])
def test_a_metrics_field_of_the_wrong_type_is_named(run_dir: Path, field: str, value: Any) -> None:
    """Before, split, train_seconds, partial/sample ("no" read as true) and NaN outside dev were read."""
    _edit(run_dir / METRICS, field, value)
    with pytest.raises(InputError) as refused:
        read_metrics(run_dir)
    assert refused.value.path == str(run_dir / METRICS)
    assert refused.value.field is not None and refused.value.field.startswith(field.split(".")[0])


@pytest.mark.parametrize(("field", "value"), [("data.files", [1]), ("model_spec", [1]), ("data.data_dir", 5)])
@pytest.mark.parametrize("command", ["submit", "report"])
def test_submit_and_report_of_a_damaged_manifest_are_one_line(run_cli, afqmc_run: Path, tmp_path: Path,
                                                              field: str, value: Any, command: str) -> None:
    """They ended in a traceback (TypeError, AttributeError) or, for report, in a report that used the field."""
    _edit(afqmc_run / MANIFEST, field, value)
    args = ["-o", tmp_path / "s.zip"] if command == "submit" else ["--json"]
    line = _one_line(run_cli(command, afqmc_run, *args))
    assert f"field '{field}'" in line


@pytest.mark.parametrize("data_dir", ["", None, "drop"])
def test_submit_of_a_manifest_that_names_no_data_folder_does_not_read_the_current_one(
        run_cli, afqmc_run: Path, tmp_path: Path, monkeypatch, data_dir: Any) -> None:
    """``Path(source.get("data_dir", ""))`` is the current folder: submit looked for the test file there
    (a stray test.json in it would have been taken for the run's test data); a null was a TypeError."""
    manifest = json.loads((afqmc_run / MANIFEST).read_text(encoding="utf-8"))
    manifest["data"]["source"] = "dir"
    if data_dir == "drop":
        del manifest["data"]["data_dir"]
    else:
        manifest["data"]["data_dir"] = data_dir
    (afqmc_run / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    line = _one_line(run_cli("submit", afqmc_run, "-o", tmp_path / "s.zip"))
    assert "field 'data.data_dir': names no data folder" in line and not (tmp_path / "s.zip").exists()


# -- prediction lines ------------------------------------------------------------------------


def _predictions(run_dir: Path, text: str | bytes) -> Path:
    path = run_dir / "predictions" / "dev.jsonl"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


@pytest.mark.parametrize(("line", "field"), [
    ('{"id": 1, "prediction": NaN}', "prediction"),
    ('{"id": 1, "prediction": "a", "gold": Infinity}', "gold"),
    ('{"id": 1, "prediction": "a", "raw": {"logprobs": [-1.0, -Infinity]}}', "raw.logprobs[1]"),
    ('{"id": 1, "prediction": "a", "scoring": {"f1": NaN}}', "scoring.f1"),
])
def test_nan_anywhere_in_a_prediction_line_is_refused_with_its_field(run_dir: Path, line: str, field: str) -> None:
    """Only ``scores`` was checked: a NaN prediction, gold, raw log-probability or scoring detail was read
    (the writer refuses every one of them, so no clue-core wrote it)."""
    path = _predictions(run_dir, '{"id": 0, "prediction": "a"}\n' + line + "\n")
    with pytest.raises(InputError) as refused:
        list(iter_predictions(run_dir))
    assert (refused.value.path, refused.value.line, refused.value.field) == (str(path), 2, field)
    assert "expected a finite number" in str(refused.value)


def test_an_integer_too_long_for_python_is_one_line_with_its_line(run_dir: Path) -> None:
    """A ValueError ('Exceeds the limit (4300 digits) for integer string conversion') escaped as a traceback."""
    path = _predictions(run_dir, '{"id": 0, "prediction": "a"}\n\n{"id": %s, "prediction": "a"}\n' % ("9" * 5000))
    with pytest.raises(InputError) as refused:
        list(iter_predictions(run_dir))
    assert (refused.value.path, refused.value.line) == (str(path), 3)
    assert "an integer too long to read" in str(refused.value)


def test_a_nesting_too_deep_to_decode_is_one_line(run_dir: Path) -> None:
    """A RecursionError escaped from the predictions and from the manifest."""
    deep = "[" * 100_000 + "]" * 100_000
    path = _predictions(run_dir, f'{{"id": 0, "prediction": {deep}}}\n')
    with pytest.raises(InputError, match="nested too deeply") as refused:
        list(iter_predictions(run_dir))
    assert (refused.value.path, refused.value.line) == (str(path), 1)
    (run_dir / MANIFEST).write_text(f'{{"notes": {deep}}}', encoding="utf-8")
    with pytest.raises(ClueError, match=r"manifest.json: unreadable manifest \(nested too deeply to read\)"):
        read_manifest(run_dir)


def test_ids_bom_and_blank_lines_that_read(run_dir: Path) -> None:
    """Held: a BOM before the first line, blank and CRLF lines, a 40-digit id, a negative id, a long text id."""
    _predictions(run_dir, b'\xef\xbb\xbf{"id": 99999999999999999999999999999999999999, "prediction": "a"}\r\n\r\n\n'
                          b'{"id": -1, "prediction": "b"}\n{"id": "' + b"7" * 100_000 + b'", "prediction": "c"}')
    records = list(iter_predictions(run_dir))
    assert [r.line for r in records] == [1, 4, 5] and records[0].id == 10**38 - 1 and len(records[2].id) == 100_000


def test_a_bom_on_a_later_line_is_named(run_dir: Path) -> None:
    _predictions(run_dir, '{"id": 0, "prediction": "a"}\n\ufeff{"id": 1, "prediction": "a"}\n')
    with pytest.raises(InputError, match=r"dev.jsonl:2: invalid JSON"):
        list(iter_predictions(run_dir))


# -- the writer writes only what the reader reads ----------------------------------------------


def test_the_writer_refuses_a_manifest_its_reader_would_refuse(isolated_kernel, tmp_path: Path, monkeypatch) -> None:
    """A RunRequest with seed "7" (what api.run passed on) was written as a complete run that every later
    --resume, submit and report refused ('field seed: expected an integer')."""
    import clue_example_plugin.hooks as hooks
    from clue_core import runner

    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    isolated_kernel.register(hooks, "example")
    request = runner.RunRequest(tasks=[TASK], model="baseline", sample=True, output_dir=tmp_path / "out", seed="7")
    with pytest.raises(InputError, match="field 'seed': expected an integer, got a string"):
        runner.run(isolated_kernel, request, echo=lambda line: None)
    assert not (tmp_path / "out").exists()


# -- what held ---------------------------------------------------------------------------------


def _drop_schema(run_dir: Path) -> None:
    """The files as the release before the schema field (f079bfe) wrote them: the same, without it."""
    for name in (MANIFEST, METRICS):
        data = json.loads((run_dir / name).read_text(encoding="utf-8"))
        data.pop("schema")
        (run_dir / name).write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_a_run_of_the_previous_release_is_resumed_submitted_and_reported(run_cli, afqmc_run: Path,
                                                                          tmp_path: Path) -> None:
    _drop_schema(afqmc_run)
    out = afqmc_run.parent
    resumed = run_cli("run", "afqmc", "--model", "baseline", "--sample", "-o", out, "--resume")
    assert resumed.exit_code == 0 and "already complete; nothing to resume" in resumed.output
    assert run_cli("submit", afqmc_run, "-o", tmp_path / "s.zip").exit_code == 0
    reported = run_cli("report", out, "--json")
    assert reported.exit_code == 0 and "afqmc" in reported.stdout


def test_an_interrupted_run_of_the_previous_release_resumes_into_a_run_1_record(run_cli, afqmc_run: Path) -> None:
    _drop_schema(afqmc_run)
    staging = afqmc_run.parent / ".afqmc.staging"
    afqmc_run.rename(staging)
    manifest = json.loads((staging / MANIFEST).read_text(encoding="utf-8"))
    manifest.update(status="running")
    (staging / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    (staging / METRICS).unlink()
    result = run_cli("run", "afqmc", "--model", "baseline", "--sample", "-o", afqmc_run.parent, "--resume")
    assert result.exit_code == 0, result.output
    assert read_run(afqmc_run).manifest.data["schema"] == "clue-core/run@1" and not staging.exists()


def test_a_metrics_file_that_is_a_folder_is_one_line(run_cli, run_dir: Path) -> None:
    (run_dir / METRICS).unlink()
    (run_dir / METRICS).mkdir()
    with pytest.raises(ClueError, match="unreadable metrics"):
        read_run(run_dir)
    line = _one_line(run_cli("run", TASK, "--model", "baseline", "--sample", "-o", run_dir.parent, "--resume"))
    assert "unreadable metrics" in line and "--overwrite" in line


def test_a_run_dir_that_is_a_symbolic_link_reads_and_overwrite_leaves_its_target(run_cli, run_dir: Path,
                                                                                  tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    run_dir.rename(elsewhere)
    run_dir.symlink_to(elsewhere, target_is_directory=True)
    assert read_run(run_dir).manifest.task == TASK
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", run_dir.parent, "--overwrite")
    assert result.exit_code == 0, result.output
    assert not run_dir.is_symlink() and read_run(elsewhere).manifest.complete


def test_resume_of_a_staging_folder_whose_manifest_is_cut_short_is_one_line(run_cli, run_dir: Path) -> None:
    staging = run_dir.parent / f".{TASK}.staging"
    staging.mkdir()
    (staging / MANIFEST).write_bytes((run_dir / MANIFEST).read_bytes()[:100])
    line = _one_line(run_cli("run", TASK, "--model", "baseline", "--sample", "-o", run_dir.parent, "--resume"))
    assert f"{staging / MANIFEST}: unreadable manifest" in line and "--overwrite" in line
    assert staging.is_dir()


def test_a_lone_surrogate_in_a_models_output_is_one_line_and_leaves_nothing(isolated_kernel, tmp_path: Path,
                                                                              monkeypatch) -> None:
    """UTF-8 cannot hold "\\ud800" (what a model decoding bytes badly returns): the encoder's
    UnicodeEncodeError was a traceback, and the staging folder stayed behind as if interrupted."""
    import clue_example_plugin.hooks as hooks
    from clue_builtin.baseline import BaselineLearner
    from clue_core import runner
    from clue_core.plugin import ModelSpec, Prediction, hookimpl

    class Garbled(BaselineLearner):
        def predict(self, examples):
            return [Prediction(p.id, p.value, raw={"text": "broken \ud800 byte"}) for p in super().predict(examples)]

    class Plugin:
        @hookimpl
        def clue_models(self):
            return [ModelSpec("garbled", lambda argument, task, settings: Garbled(task.name, task.kind, task.labels),
                              ("classification",), "garbled output", trains=False)]

    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    isolated_kernel.register(hooks, "example")
    isolated_kernel.register(Plugin(), "garbled")
    request = runner.RunRequest(tasks=[TASK], model="garbled", sample=True, output_dir=tmp_path / "out")
    with pytest.raises(ClueError, match=r"dev.jsonl: cannot be written: the model's output holds '\\ud800' "
                                         r"\(the record of id .+\), a lone surrogate"):
        runner.run(isolated_kernel, request, echo=lambda line: None)
    assert not (tmp_path / "out").exists()
