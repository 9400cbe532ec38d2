"""Hostile uses of ``TaskSpec.repeat`` (``--set split=all``): run folders that collide, and
``submit`` of a repeated family that lacks one of its runs."""

from __future__ import annotations

import dataclasses
import json
import shutil
import zipfile
from pathlib import Path

import clue_example_plugin.hooks as example_hooks
from clue_core.plugin import hookimpl
from tests.core.test_repeats import REPEAT, SAMPLE, VARIANT


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    for split in ("train", "dev"):
        lines = (data / f"{split}.json").read_text(encoding="utf-8").splitlines()
        (data / f"{split}_a.json").write_text("\n".join(lines[:6]) + "\n", encoding="utf-8")
        (data / f"{split}_b.json").write_text("\n".join(lines[6:10]) + "\n", encoding="utf-8")
    return data


def _register(kernel, *tasks):
    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return list(tasks)

    return kernel.register(Plugin(), "variant-plugin")


def _variants(name: str = "variants", **changes):
    base = example_hooks.clue_tasks()[0]
    fields = {"name": name, "reader_settings": (VARIANT,), "reader": "tests.core.test_repeats:read_variant",
              "sample": None, "repeat": REPEAT, **changes}
    return dataclasses.replace(base, **fields)


def _run_all(run_cli, kernel, data: Path, out: Path, *more: str):
    result = run_cli("run", "variants", "--model", "baseline", "--data-dir", data, "-o", out, "--set", "variant=all",
                     *more, kernel=kernel)
    assert result.exit_code == 0, result.output
    return result


def test_a_task_named_like_another_tasks_repeat_folder_is_refused_before_anything_runs(run_cli, isolated_kernel,
                                                                                        tmp_path):
    data = _data(tmp_path)
    _register(isolated_kernel, _variants(), dataclasses.replace(_variants("variants.variant-a"), repeat=None))
    out = tmp_path / "runs"
    result = run_cli("run", "variants", "variants.variant-a", "--model", "baseline", "--data-dir", data, "-o", out,
                     "--set", "variant=all", kernel=isolated_kernel)
    assert result.exit_code == 2
    assert "tasks variants and variants.variant-a would both run in" in result.output  # not "in use by <pid>"
    assert not out.exists() or not any(p.name == "variants.variant-a" or p.name.endswith(".staging")
                                       for p in out.iterdir())


def test_submit_refuses_a_repeated_family_with_one_run_missing(run_cli, isolated_kernel, tmp_path):
    data = _data(tmp_path)
    _register(isolated_kernel, _variants())
    out = tmp_path / "runs"
    _run_all(run_cli, isolated_kernel, data, out)
    shutil.rmtree(out / "variants.variant-b")
    result = run_cli("submit", out, "-o", tmp_path / "s.zip", kernel=isolated_kernel)
    assert result.exit_code != 0
    assert "variants variant=all: no complete run of variant b" in result.output
    assert "variants.variant-b" in result.output
    assert not (tmp_path / "s.zip").exists()
    # one run named on its own is a family with a hole, too
    alone = run_cli("submit", out / "variants.variant-a", "-o", tmp_path / "a.zip", kernel=isolated_kernel)
    assert alone.exit_code != 0 and "no complete run of variant b" in alone.output


def test_submit_refuses_a_family_whose_missing_run_was_interrupted(run_cli, isolated_kernel, tmp_path):
    data = _data(tmp_path)
    _register(isolated_kernel, _variants())
    out = tmp_path / "runs"
    _run_all(run_cli, isolated_kernel, data, out)
    (out / "variants.variant-b").rename(out / ".variants.variant-b.staging")  # what an interrupt leaves
    result = run_cli("submit", out, "-o", tmp_path / "s.zip", kernel=isolated_kernel)
    assert result.exit_code != 0 and "--resume" in result.output
    assert not (tmp_path / "s.zip").exists()


def test_submit_refuses_a_family_of_two_models(run_cli, isolated_kernel, tmp_path):
    data = _data(tmp_path)
    _register(isolated_kernel, _variants())
    out = tmp_path / "runs"
    _run_all(run_cli, isolated_kernel, data, out)
    path = out / "variants.variant-b" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**manifest, "model": "hf-tiny"}), encoding="utf-8")
    result = run_cli("submit", out, "-o", tmp_path / "s.zip", kernel=isolated_kernel)
    assert result.exit_code != 0 and "made by 2 models (baseline, hf-tiny)" in result.output


def test_submit_names_a_manifest_whose_repeat_is_not_the_tasks(run_cli, isolated_kernel, tmp_path):
    data = _data(tmp_path)
    _register(isolated_kernel, _variants())
    out = tmp_path / "runs"
    _run_all(run_cli, isolated_kernel, data, out)
    path = out / "variants.variant-b" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for broken in ({"setting": "variant"}, {"setting": "variant", "value": "c"}):
        path.write_text(json.dumps({**manifest, "repeat": broken}), encoding="utf-8")
        result = run_cli("submit", out, "-o", tmp_path / "s.zip", kernel=isolated_kernel)
        assert result.exit_code != 0
        assert "manifest.json" in result.output and "repeat" in result.output, result.output


def test_submit_packs_a_complete_family_beside_a_single_run_of_the_task(run_cli, isolated_kernel, tmp_path):
    data = _data(tmp_path)
    _register(isolated_kernel, _variants())
    out = tmp_path / "runs"
    _run_all(run_cli, isolated_kernel, data, out)
    single = run_cli("run", "variants", "--model", "baseline", "--data-dir", data, "-o", out, "--set", "variant=b",
                     kernel=isolated_kernel)
    assert single.exit_code == 0, single.output
    result = run_cli("submit", out, "-o", tmp_path / "s.zip", kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(tmp_path / "s.zip") as archive:
        assert sorted(archive.namelist()) == ["review_sentiment_predict.json", "review_sentiment_predict_a.json",
                                              "review_sentiment_predict_b.json"]


def test_info_shows_the_scored_splits_the_reader_settings_and_the_repeat(run_cli):
    result = run_cli("info", "fewclue-tnews")
    assert result.exit_code == 0, result.output
    assert "splits:           train, dev; scored beside dev: test_public" in result.output
    assert "repeat:           --set split=all runs each of 0, 1, 2, 3, 4, few_all" in result.output
    assert "setting:          split (str, default 'few_all')" in result.output


def test_ctrl_c_in_a_repeat_names_the_run_folders_not_the_task(tmp_path):
    """The runs of split=all share one task name: "fewclue-x is kept…; fewclue-x finished before" said nothing."""
    from clue_core.planning import TaskPlan
    from clue_core.results import TaskResult
    from clue_core.rundir import RunPaths
    from clue_core.runner import _interrupted
    from clue_core.settings import ResolvedSettings

    task = _variants()
    plan = TaskPlan(task, RunPaths(tmp_path / "variants.variant-b"), ResolvedSettings())
    plan.paths.staging.mkdir(parents=True)
    (plan.paths.staging / "manifest.json").write_text("{}", encoding="utf-8")  # something was written
    done = [TaskResult("variants", tmp_path / "variants.variant-a", {}, "accuracy", {}, [], [])]
    message = str(_interrupted(plan, done))
    assert "variants.variant-b is kept unfinished in" in message and "variants.variant-a finished before" in message
