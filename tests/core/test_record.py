"""The run record (issue 19): one writer and one reader of a run directory's content.

What the runner writes reads back as the same record; a folder written before the
``schema`` field reads as run@1; a newer schema is refused by name; every malformed field
is named with its file (and line, in JSON Lines); a secret setting reaches no file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clue_core.errors import ClueError, InputError
from clue_core.plugin import ModelSpec, Prediction, Setting, hookimpl
from clue_core.record import (
    MANIFEST,
    METRICS,
    RUN_SCHEMA,
    iter_predictions,
    read_manifest,
    read_metrics,
    read_run,
)

TASK = "review-sentiment"


@pytest.fixture
def one_run(run_cli, tmp_path: Path) -> Path:
    """A complete baseline run of the example task on its bundled sample (instant)."""
    out = tmp_path / "out"
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", out)
    assert result.exit_code == 0, result.output
    return out / TASK


def _edit(path: Path, **changes: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is _DROP:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data), encoding="utf-8")


_DROP = object()


def test_what_the_runner_writes_reads_back_as_the_same_record(one_run: Path) -> None:
    run = read_run(one_run)
    on_disk = json.loads((one_run / MANIFEST).read_text(encoding="utf-8"))
    assert run.manifest.data == on_disk and run.manifest.complete and run.manifest.task == TASK
    assert run.manifest.model == "baseline" and run.manifest.source["source"] == "sample"
    assert run.metrics.data == json.loads((one_run / METRICS).read_text(encoding="utf-8"))
    assert run.metrics.task == TASK and run.metrics.primary == run.metrics.dev[run.metrics.primary_metric]
    records = list(run.predictions("dev"))
    assert len(records) == run.metrics.counts["dev"] > 0
    assert [r.line for r in records] == list(range(1, len(records) + 1))
    first = json.loads((one_run / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert records[0].data == first and records[0].id == first["id"] and records[0].gold == first["gold"]
    assert "dev" in run.prediction_splits() and run.has_predictions("dev")


def test_the_schema_is_added_to_both_files_and_nothing_is_renamed(one_run: Path) -> None:
    manifest = json.loads((one_run / MANIFEST).read_text(encoding="utf-8"))
    metrics = json.loads((one_run / METRICS).read_text(encoding="utf-8"))
    assert manifest["schema"] == metrics["schema"] == RUN_SCHEMA == "clue-core/run@1"
    assert {"status", "task", "model", "settings", "data", "counts", "submission_files", "notes",
            "finished", "model_info"} <= set(manifest)
    assert {"task", "model", "primary", "primary_metric", "dev", "counts", "leaderboards", "partial",
            "sample", "model_info"} <= set(metrics)


def test_a_folder_written_before_the_schema_field_reads_as_run_1(one_run: Path) -> None:
    for name in (MANIFEST, METRICS):
        _edit(one_run / name, schema=_DROP)
    run = read_run(one_run)
    assert "schema" not in run.manifest.data and run.manifest.complete and run.metrics.task == TASK


@pytest.mark.parametrize("name", [MANIFEST, METRICS])
@pytest.mark.parametrize("schema", ["clue-core/run@2", "someone-else/run@1"])
def test_a_newer_schema_is_refused_by_name_not_half_read(one_run: Path, name: str, schema: str) -> None:
    _edit(one_run / name, schema=schema)
    with pytest.raises(InputError) as refused:
        read_run(one_run)
    assert refused.value.path == str(one_run / name) and refused.value.field == "schema"
    assert f"written by a newer clue-core (schema {schema}); upgrade clue-core" in str(refused.value)


def test_resume_of_a_run_with_a_newer_schema_says_to_upgrade(run_cli, one_run: Path) -> None:
    _edit(one_run / MANIFEST, schema="clue-core/run@2")
    result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", one_run.parent, "--resume")
    assert result.exit_code == 2 and "schema clue-core/run@2" in result.output


@pytest.mark.parametrize(("field", "value", "named"), [
    ("status", 3, "status"),
    ("task", ["x"], "task"),
    ("seed", "42", "seed"),
    ("settings", [], "settings"),
    ("data", "sample", "data"),
    ("partial", {"limit": "5"}, "partial.limit"),
    ("submission_files", "a.json", "submission_files"),
    ("notes", {}, "notes"),
    ("test_versions", [], "test_versions"),
])
def test_each_malformed_manifest_field_is_named(one_run: Path, field: str, value: Any, named: str) -> None:
    _edit(one_run / MANIFEST, **{field: value})
    with pytest.raises(InputError) as refused:
        read_manifest(one_run)
    assert refused.value.path == str(one_run / MANIFEST) and refused.value.field == named


@pytest.mark.parametrize(("field", "value", "named"), [
    ("task", _DROP, "task"),
    ("primary_metric", "", "primary_metric"),
    ("model", 7, "model"),
    ("primary", "56.2", "primary"),
    ("dev", [1], "dev"),
    ("dev", {"accuracy": "x"}, "dev.accuracy"),
    ("counts", {"dev": None}, "counts.dev"),
    ("leaderboards", {}, "leaderboards"),
    ("leaderboards", [{"benchmark": "CLUE"}], "leaderboards[0].group"),
    ("model_info", [], "model_info"),
])
def test_each_malformed_metrics_field_is_named(one_run: Path, field: str, value: Any, named: str) -> None:
    _edit(one_run / METRICS, **{field: value})
    with pytest.raises(InputError) as refused:
        read_metrics(one_run)
    assert refused.value.path == str(one_run / METRICS) and refused.value.field == named


def test_primary_that_disagrees_with_its_dev_score_is_named(one_run: Path) -> None:
    metrics = json.loads((one_run / METRICS).read_text(encoding="utf-8"))
    _edit(one_run / METRICS, primary=metrics["primary"] + 1)
    with pytest.raises(InputError, match="one was edited") as refused:
        read_metrics(one_run)
    assert refused.value.field == "primary"


def test_a_wrong_field_of_a_newer_writer_says_so(one_run: Path) -> None:
    _edit(one_run / MANIFEST, clue_core="99.0.0")
    _edit(one_run / METRICS, primary={"value": 1})
    with pytest.raises(InputError, match=r"written by clue-core 99\.0\.0") as refused:
        read_run(one_run)
    assert refused.value.field == "primary" and "upgrade clue-core" in str(refused.value)


def test_missing_and_unreadable_files_are_one_line_naming_the_file(one_run: Path, tmp_path: Path) -> None:
    assert read_manifest(tmp_path, required=False) is None and read_metrics(tmp_path, required=False) is None
    with pytest.raises(ClueError, match="not a run directory"):
        read_manifest(tmp_path)
    (one_run / METRICS).write_text('{"dev": [1', encoding="utf-8")
    with pytest.raises(ClueError, match="unreadable metrics") as refused:
        read_metrics(one_run)
    assert str(refused.value).startswith(str(one_run / METRICS))
    (one_run / METRICS).unlink()
    with pytest.raises(ClueError, match="missing, so this run is not complete"):
        read_run(one_run)


def test_an_unfinished_run_is_no_run_record(one_run: Path) -> None:
    _edit(one_run / MANIFEST, status="running")
    assert read_manifest(one_run).status == "running"
    with pytest.raises(ClueError, match="not a complete run \\(status 'running'"):
        read_run(one_run)


@pytest.mark.parametrize(("line", "field"), [
    ('{"prediction": "positive"}', "id"),
    ('{"id": true, "prediction": "positive"}', "id"),
    ('{"id": "x"}', "prediction"),
    ('{"id": "x", "prediction": 1, "scores": [0.5, "high"]}', "scores[1]"),
    ('{"id": "x", "prediction": 1, "scoring": []}', "scoring"),
    ('{"id": "x", "prediction"', None),
])
def test_a_malformed_prediction_record_names_its_line_and_field(one_run: Path, line: str, field: str | None
                                                                ) -> None:
    path = one_run / "predictions" / "dev.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    records = iter_predictions(one_run, "dev")
    assert next(records).line == 1 and next(records).line == 2  # lazily: the first lines read before the bad one
    with pytest.raises(InputError) as refused:
        next(records)
    assert refused.value.path == str(path) and refused.value.line == 3 and refused.value.field == field


def test_a_split_without_predictions_is_one_line(one_run: Path) -> None:
    with pytest.raises(ClueError, match=r"no predictions/test-9\.jsonl"):
        list(iter_predictions(one_run, "test-9"))


class Leaky:
    """A learner that puts its API key everywhere a plugin could: its raw output and its run info."""

    def __init__(self, argument: Any, task: Any, settings: dict[str, Any]) -> None:
        self.key, self.label = settings["api_key"], task.labels[0]

    def fit(self, train: Any, dev: Any, context: Any) -> None:
        pass

    def predict(self, examples: Any) -> list[Prediction]:
        return [Prediction(e.id, self.label, raw={"prompt": f"Authorization: Bearer {self.key}"}) for e in examples]

    def run_info(self) -> dict[str, Any]:
        return {"endpoint": f"https://api.example/v1?key={self.key}"}


def test_a_secret_setting_reaches_no_file_and_is_scrubbed_once_per_file(run_cli, isolated_kernel, tmp_path,
                                                                         monkeypatch) -> None:
    import clue_example_plugin.hooks as hooks
    from clue_core.settings import ResolvedSettings

    class Keyed:
        @hookimpl
        def clue_models(self):
            return [ModelSpec("leaky", Leaky, ("classification",), "leaks its key", trains=False,
                              settings=(Setting("api_key", str, "", "the key", secret=True),))]

    isolated_kernel.register(hooks, "example")
    isolated_kernel.register(Keyed(), "keyed")
    real, calls = ResolvedSettings.scrub, []

    def counted(self, data):
        calls.append(data)
        return real(self, data)

    monkeypatch.setattr(ResolvedSettings, "scrub", counted)
    out = tmp_path / "out"
    result = run_cli("run", TASK, "--model", "leaky", "--sample", "-o", out, "--set", "api_key=sk-live-123",
                     kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    written = [p for p in (out / TASK).rglob("*") if p.is_file()]
    assert written and not [p for p in written if b"sk-live-123" in p.read_bytes()]
    manifest = json.loads((out / TASK / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["settings"]["api_key"] == "***" and manifest["model_info"]["endpoint"].endswith("key=***")
    assert "Bearer ***" in (out / TASK / "predictions" / "dev.jsonl").read_text(encoding="utf-8")
    # one scrub per document written: the manifest twice (started, complete), metrics, each predictions file
    jsonl = len(list((out / TASK / "predictions").glob("*.jsonl")))
    assert len(calls) == 3 + jsonl, [type(c).__name__ for c in calls]


def test_the_plugin_api_names_the_record_without_importing_it(run_cli) -> None:
    import subprocess
    import sys

    import clue_core.plugin as api

    for name in ("RUN_SCHEMA", "RunRecord", "Manifest", "Metrics", "PredictionRecord", "read_run", "read_manifest",
                 "read_metrics", "iter_predictions"):
        assert name in api.__all__ and getattr(api, name) is not None
    code = "import sys, clue_core.plugin; print('clue_core.record' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_every_field_the_writer_writes_is_declared_once(one_run: Path) -> None:
    """The declaration is the record (issue 30, step 5): a field written but not declared would be read
    unchecked, so each key of both files is some declared field's, and each declared type checks."""
    from clue_core.plugin import Manifest, Metrics

    run = read_run(one_run)
    for record, declared in ((run.manifest, Manifest.FIELDS), (run.metrics, Metrics.FIELDS)):
        keys = {kind.key.partition(".")[0] for kind in declared}
        extra = set(record.data) - keys - {"schema"} - set(record.data.get("scored_splits") or ())
        assert not extra, f"{type(record).__name__}: {sorted(extra)} written but not declared"
    assert run.manifest.seed == 42 and run.manifest.world_size == 1 and run.manifest.kind == "classification"
    assert run.manifest.command == run.manifest.data["command"] and run.metrics.split == "dev"
    with pytest.raises(AttributeError, match="read-only"):
        run.manifest.seed = 7  # type: ignore[misc]


def test_a_repeat_of_null_reads_as_no_repeat(one_run: Path) -> None:
    """``"repeat": null`` was an AttributeError traceback in the manifest check; absent and null read alike."""
    _edit(one_run / MANIFEST, repeat=None)
    assert read_manifest(one_run).repeat == {}


def test_the_runner_enters_the_writer_twice(run_cli, tmp_path: Path) -> None:
    """Issue 30, step 6: ``task_run.run_task`` calls into the record's writer to start and to finish, nothing else
    (the staging folder is made in start, the run published in finish)."""
    import sys

    import clue_core.record_write as record_write
    import clue_core.task_run as task_run

    entries: list[str] = []

    def watch(frame, event, arg):
        if event == "call" and frame.f_globals is vars(record_write) and frame.f_back is not None \
                and frame.f_back.f_code is task_run.run_task.__code__:
            entries.append(frame.f_code.co_name)

    sys.setprofile(watch)
    try:
        result = run_cli("run", TASK, "--model", "baseline", "--sample", "-o", tmp_path / "out")
    finally:
        sys.setprofile(None)
    assert result.exit_code == 0, result.output
    assert entries == ["start", "finish"], entries
