"""``TaskSpec.reader_settings``: a reader that declares settings gets their values as ``settings=``
(FewCLUE's ``split`` picks which training pair is read): the run's own values, recorded in the
manifest; declared defaults where no run is planned; the report re-reads with the run's values."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import clue_example_plugin
import clue_example_plugin.hooks as example_hooks
from clue_core.plugin import Setting, SplitData, hookimpl

SAMPLE = Path(clue_example_plugin.__file__).parent / "sample"
VARIANT = Setting("variant", str, "a", "which pair of files is read", choices=("a", "b"))


def read_variant(task, data_dir, split: str, settings) -> SplitData:
    from clue_example_plugin.reader import read

    return read(task, data_dir, f"{split}_{settings['variant']}" if split in ("train", "dev") else split)


def _kernel(isolated_kernel, tmp_path: Path):
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    for split in ("train", "dev"):
        lines = (data / f"{split}.json").read_text(encoding="utf-8").splitlines()
        (data / f"{split}_a.json").write_text("\n".join(lines[:6]) + "\n", encoding="utf-8")
        (data / f"{split}_b.json").write_text("\n".join(lines[6:9]) + "\n", encoding="utf-8")
    task = dataclasses.replace(example_hooks.clue_tasks()[0], name="variants", reader_settings=(VARIANT,),
                               reader="tests.core.test_reader_settings:read_variant", sample=None)

    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return [task]

    isolated_kernel.register(Plugin(), "variant-plugin")
    return data


def test_the_reader_gets_the_runs_value_and_the_manifest_records_it(run_cli, isolated_kernel, tmp_path):
    data = _kernel(isolated_kernel, tmp_path)
    result = run_cli("run", "variants", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "b",
                     "--set", "variant=b", kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    run = tmp_path / "b" / "variants"
    assert json.loads((run / "metrics.json").read_text(encoding="utf-8"))["counts"]["dev"] == 3
    assert json.loads((run / "manifest.json").read_text(encoding="utf-8"))["settings"]["variant"] == "b"
    assert run_cli("run", "variants", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "a",
                   kernel=isolated_kernel).exit_code == 0
    default = json.loads((tmp_path / "a" / "variants" / "metrics.json").read_text(encoding="utf-8"))
    assert default["counts"]["dev"] == 6  # the declared default, "a"
    bad = run_cli("run", "variants", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "c",
                  "--set", "variant=z", kernel=isolated_kernel)
    assert bad.exit_code == 2 and "setting 'variant' (--set)" in bad.output


def test_the_report_rereads_dev_with_the_runs_values(run_cli, isolated_kernel, tmp_path):
    import clue_report.hooks

    data = _kernel(isolated_kernel, tmp_path)
    isolated_kernel.register(clue_report.hooks, "clue-report")
    assert run_cli("run", "variants", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "runs",
                   "--set", "variant=b", kernel=isolated_kernel).exit_code == 0
    result = run_cli("report", tmp_path / "runs", "-o", tmp_path / "page", kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "page" / "report.json").read_text(encoding="utf-8"))
    assert not [w for w in report["warnings"] if "recomputed" in w or ("dev" in w and "id" in w)], report["warnings"]
    assert report["tasks"], "the run's dev examples were read back (ids of the b files)"
