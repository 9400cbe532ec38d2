"""Earlier run folders read the same, value for value (issue 30, step 5: the record declared once).

``data/run-folder-2026-12/`` is what ``clue-core run`` wrote on the bundled samples before the
record's types were generated from one declaration each (commit it came in with: afqmc full,
cmrc2018 and FewCLUE eprstmt's split-0 of ``split=all`` with ``--limit 3``). ``reading.json``
beside it is every property the readers returned for those folders then, and for two older
forms of them: without the ``schema`` field (the release before it) and with every field a
reader may meet missing left out (a run older than each). A new reader must return the same
values, not merely raise nothing.

Regenerate the expectation only on purpose: ``python tests/core/test_record_folders.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from clue_core.record import MANIFEST, METRICS, PREDICTIONS_DIR, read_manifest, read_metrics, read_run

FOLDERS = Path(__file__).parent / "data" / "run-folder-2026-12"
EXPECTED = FOLDERS / "reading.json"

MANIFEST_PROPERTIES = ("status", "complete", "task", "model", "seed", "limit", "partial", "source", "settings",
                       "schedule", "test_versions", "splits", "submission_files", "notes", "model_info", "repeat")
METRICS_PROPERTIES = ("task", "model", "primary_metric", "primary", "dev", "scored", "counts", "partial", "sample",
                      "leaderboards", "model_info")
PREDICTION_PROPERTIES = ("line", "id", "prediction", "gold", "scores", "raw", "scoring", "prompt", "continuations",
                         "logprobs")
# what a folder written before each field existed lacks (every optional field; the required stay, and
# primary: it is dev[primary_metric], which a reader checks)
MANIFEST_OPTIONAL = ("schema", "kind", "model_spec", "clue_core", "plugins", "python", "platform", "command", "seed",
                     "world_size", "settings", "setting_sources", "schedule", "no_train", "partial", "data", "repeat",
                     "counts", "splits", "test_versions", "notes", "started", "finished", "submission_files",
                     "model_info")
METRICS_OPTIONAL = ("schema", "model", "model_category", "split", "scored_splits", "counts", "train_seconds",
                    "leaderboards", "report_settings", "partial", "sample", "model_info")
PREDICTION_OPTIONAL = ("gold", "scores", "raw", "scoring")


def _props(record: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {"data": record.data, **{name: getattr(record, name) for name in names}}


def reading(folder: Path) -> dict[str, Any]:
    """Everything the readers return for one run folder, as JSON values."""
    run = read_run(folder)
    assert read_manifest(folder).data == run.manifest.data and read_metrics(folder).data == run.metrics.data
    return {
        "manifest": {**_props(run.manifest, MANIFEST_PROPERTIES), "path": run.manifest.path.name},
        "metrics": {**_props(run.metrics, METRICS_PROPERTIES), "path": run.metrics.path.name},
        "prediction_splits": run.prediction_splits(),
        "has_predictions": {split: run.has_predictions(split) for split in ("dev", "test-1.1", "nothing")},
        "predictions": {split: [_props(r, PREDICTION_PROPERTIES) for r in run.predictions(split)]
                        for split in run.prediction_splits()},
    }


def _rewrite(folder: Path, manifest: tuple[str, ...], metrics: tuple[str, ...], prediction: tuple[str, ...]) -> None:
    """Leave the named fields out of each file of ``folder``, as an older clue-core wrote it."""
    for name, drop in ((MANIFEST, manifest), (METRICS, metrics)):
        data = json.loads((folder / name).read_text(encoding="utf-8"))
        (folder / name).write_text(json.dumps({k: v for k, v in data.items() if k not in drop}), encoding="utf-8")
    for path in (folder / PREDICTIONS_DIR).glob("*.jsonl"):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        path.write_text("".join(json.dumps({k: v for k, v in r.items() if k not in prediction}, ensure_ascii=False)
                                + "\n" for r in lines), encoding="utf-8")


def readings(tmp: Path) -> dict[str, Any]:
    """The reading of each folder as written, without ``schema``, and without any optional field."""
    out: dict[str, Any] = {}
    for folder in sorted(p for p in FOLDERS.iterdir() if p.is_dir()):
        out[folder.name] = reading(folder)
        for form, drops in (("no-schema", (("schema",), ("schema",), ())),
                            ("oldest", (MANIFEST_OPTIONAL, METRICS_OPTIONAL, PREDICTION_OPTIONAL))):
            copy = tmp / form / folder.name
            shutil.copytree(folder, copy)
            _rewrite(copy, *drops)
            out[f"{folder.name} ({form})"] = reading(copy)
    return json.loads(json.dumps(out))  # tuples as lists, as the expectation holds them


def test_every_earlier_folder_reads_as_it_read_before(tmp_path: Path) -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    got = readings(tmp_path)
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name] == expected[name], name


def test_the_fixture_covers_what_the_record_carries() -> None:
    """A reading identical on empty values would prove little: the folders hold a repeat, a scored
    split, a partial run, a full one, a test version and gold of both shapes."""
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    few = expected["fewclue-eprstmt.split-0"]
    assert few["manifest"]["repeat"] == {"setting": "split", "value": "0"} and few["metrics"]["scored"]["test_public"]
    assert few["manifest"]["limit"] == 3 and expected["afqmc"]["manifest"]["limit"] is None
    assert expected["afqmc"]["metrics"]["leaderboards"] and "test-1.1" in expected["afqmc"]["prediction_splits"]
    assert isinstance(expected["cmrc2018"]["predictions"]["dev"][0]["gold"], list)
    assert expected["afqmc (oldest)"]["manifest"]["splits"] is None


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        EXPECTED.write_text(json.dumps(readings(Path(scratch)), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
