"""``TaskSpec.scored_splits``: a labelled split besides dev (FewCLUE's ``test_public``) is read,
predicted and scored as dev is, and recorded beside it: metrics.json's ``<split>`` object, its
predictions file, its count, and the record reader's ``Metrics.scored``."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

import clue_example_plugin
import clue_example_plugin.hooks as example_hooks
from clue_core.plugin import InputError, SplitData, hookimpl
from clue_core.record import read_run

SAMPLE = Path(clue_example_plugin.__file__).parent / "sample"


def read_public(task, data_dir, split: str) -> SplitData:
    """The example reader, with ``public`` read from a file of its own."""
    from clue_example_plugin.reader import read

    return read(task, data_dir, "public" if split == "public" else split)


def _plugin(tmp_path: Path):
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    lines = (data / "dev.json").read_text(encoding="utf-8").splitlines()
    (data / "public.json").write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
    task = dataclasses.replace(example_hooks.clue_tasks()[0], name="scored", scored_splits=("public",),
                               reader="tests.core.test_scored_splits:read_public", sample=None)

    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return [task]

    return Plugin(), data


def test_a_scored_split_is_predicted_scored_and_recorded_beside_dev(run_cli, isolated_kernel, tmp_path):
    plugin, data = _plugin(tmp_path)
    isolated_kernel.register(plugin, "scored-plugin")
    result = run_cli("run", "scored", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "runs",
                     kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "scored"
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["scored_splits"] == ["public"]
    assert set(metrics["public"]) == set(metrics["dev"]) and metrics["counts"]["public"] == 5
    records = (run / "predictions" / "public.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(records) == 5 and all("gold" in json.loads(line) for line in records)
    golds = [json.loads(line)["gold"] for line in records]
    hits = sum(json.loads(line)["prediction"] == gold for line, gold in zip(records, golds))
    assert metrics["public"]["accuracy"] == 100 * hits / 5
    assert read_run(run).metrics.scored == {"public": metrics["public"]}


def test_a_metrics_file_with_a_bad_scored_split_is_refused_by_field(run_cli, isolated_kernel, tmp_path):
    plugin, data = _plugin(tmp_path)
    isolated_kernel.register(plugin, "scored-plugin")
    assert run_cli("run", "scored", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "runs",
                   kernel=isolated_kernel).exit_code == 0
    run = tmp_path / "runs" / "scored"
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    metrics["public"] = {"accuracy": "high"}
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    with pytest.raises(InputError, match=r"metrics.json: field 'public.accuracy': expected a number or null"):
        read_run(run)
