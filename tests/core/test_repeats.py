"""``TaskSpec.repeat``: ``--set <setting>=<value>`` runs the task once per value of a reader setting
in one run (FewCLUE's ``split=all``): a run directory each, leaderboard files named with each value's
suffix, the mean ± std of the primary metric printed, and ``submit`` packing every file.

The repeat is FewCLUE's :class:`~clue_tasks_fewclue.repeats.Repeat` (a ``PlanExpansion``: the kernel
knows only the plan-expansion point), used here by another task as a third party would."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import zipfile
from pathlib import Path

import clue_example_plugin
import clue_example_plugin.hooks as example_hooks
from clue_core.plugin import PlanExpansion, PlanVariant, Setting, SplitData, hookimpl
from clue_tasks_fewclue.repeats import Repeat

SAMPLE = Path(clue_example_plugin.__file__).parent / "sample"
VARIANT = Setting("variant", str, "a", "which pair of files is read", choices=("a", "b", "all"))
REPEAT = Repeat("variant", "all", each=("a", "b"), averaged=("a", "b"), suffixes={"a": "_a", "b": "_b"})


def read_variant(task, data_dir, split: str, settings) -> SplitData:
    from clue_example_plugin.reader import read

    return read(task, data_dir, f"{split}_{settings['variant']}" if split in ("train", "dev") else split)


def _register(kernel, tmp_path: Path, **changes):
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    for split in ("train", "dev"):
        lines = (data / f"{split}.json").read_text(encoding="utf-8").splitlines()
        (data / f"{split}_a.json").write_text("\n".join(lines[:6]) + "\n", encoding="utf-8")
        (data / f"{split}_b.json").write_text("\n".join(lines[6:10]) + "\n", encoding="utf-8")
    fields = {"name": "variants", "reader_settings": (VARIANT,), "reader": "tests.core.test_repeats:read_variant",
              "sample": None, "repeat": REPEAT, **changes}
    task = dataclasses.replace(example_hooks.clue_tasks()[0], **fields)

    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return [task]

    return kernel.register(Plugin(), "variant-plugin"), data


def test_all_runs_every_value_with_its_own_folder_files_and_a_mean(run_cli, isolated_kernel, tmp_path):
    _, data = _register(isolated_kernel, tmp_path)
    out = tmp_path / "runs"
    result = run_cli("run", "variants", "--model", "baseline", "--data-dir", data, "-o", out, "--set",
                     "variant=all", kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    scores = {}
    for value, size in (("a", 6), ("b", 4)):
        run = out / f"variants.variant-{value}"
        metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
        manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
        assert metrics["task"] == "variants" and metrics["counts"]["dev"] == size
        assert manifest["settings"]["variant"] == value
        assert (run / "submission" / f"review_sentiment_predict_{value}.json").is_file()
        scores[value] = metrics["primary"]
    mean = (scores["a"] + scores["b"]) / 2
    assert f"variants variant=all: accuracy {mean:.2f} ± " in result.output
    assert not (out / "variants").exists()
    submitted = run_cli("submit", out / "variants.variant-a", out / "variants.variant-b", "-o", tmp_path / "s.zip",
                        kernel=isolated_kernel)
    assert submitted.exit_code == 0, submitted.output
    with zipfile.ZipFile(tmp_path / "s.zip") as archive:
        assert sorted(archive.namelist()) == ["review_sentiment_predict_a.json", "review_sentiment_predict_b.json"]


def test_one_value_is_an_ordinary_run_and_dry_run_lists_every_folder(run_cli, isolated_kernel, tmp_path):
    _, data = _register(isolated_kernel, tmp_path)
    single = run_cli("run", "variants", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "one",
                     "--set", "variant=b", kernel=isolated_kernel)
    assert single.exit_code == 0, single.output
    assert (tmp_path / "one" / "variants" / "submission" / "review_sentiment_predict.json").is_file()
    planned = run_cli("run", "variants", "--model", "baseline", "--data-dir", data, "-o", tmp_path / "two",
                      "--set", "variant=all", "--dry-run", "--json", kernel=isolated_kernel)
    assert planned.exit_code == 0, planned.output
    rows = json.loads(planned.stdout)
    assert [Path(r["run_dir"]).name for r in rows] == ["variants.variant-a", "variants.variant-b"]
    assert not (tmp_path / "two").exists()


def test_a_repeat_over_a_setting_the_reader_does_not_declare_is_dropped(isolated_kernel, tmp_path):
    row, _ = _register(isolated_kernel, tmp_path, reader_settings=())
    assert row.status == "error" and "repeat names setting 'variant', which is not one of its reader_settings" \
        in row.error


@dataclasses.dataclass(frozen=True, slots=True)
class Halves(PlanExpansion):
    """A third party's own expansion (not FewCLUE's): ``variant=all`` runs ``a`` and ``b`` as ``.half-a`` and
    ``.half-b``, its files named ``…_half-a.json``, and its line names the best half."""

    def expand(self, task, values, sources):
        if values is not None and values.get("variant") != "all":
            return []
        return [PlanVariant(self.half(task, half), {"variant": half}, {"variant": f"halves ({sources.get('variant')})"},
                            f".half-{half}", {"setting": "variant", "value": half}, "variant=all") for half in "ab"]

    @staticmethod
    def half(task, half):
        return dataclasses.replace(task, test_versions=tuple(
            dataclasses.replace(v, submission_file=v.submission_file.replace(".json", f"_half-{half}.json"))
            for v in task.test_versions))

    def summary(self, task, runs):
        best = max(runs, key=lambda run: run[1][task.primary_metric])
        return f"{task.name}: best half {best[0]['variant']} of {len(runs)}"

    def describe(self):
        return "variant=all runs both halves"


def test_a_plugins_own_expansion_goes_through_the_same_one_point(run_cli, isolated_kernel, tmp_path):
    """The kernel knows no repeat protocol: another plugin's PlanExpansion plans, runs, records, summarises,
    describes and submits through the same calls FewCLUE's does."""
    _, data = _register(isolated_kernel, tmp_path, repeat=Halves())
    out = tmp_path / "runs"
    result = run_cli("run", "variants", "--model", "baseline", "--data-dir", data, "-o", out, "--set",
                     "variant=all", kernel=isolated_kernel)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["variants.half-a", "variants.half-b"]
    manifest = json.loads((out / "variants.half-b" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["repeat"] == {"setting": "variant", "value": "b"} and manifest["settings"]["variant"] == "b"
    assert manifest["setting_sources"]["variant"].startswith("halves (--set")
    assert (out / "variants.half-a" / "submission" / "review_sentiment_predict_half-a.json").is_file()
    assert re.search(r"^variants: best half [ab] of 2$", result.output, flags=re.M)
    info = run_cli("info", "variants", kernel=isolated_kernel)
    assert "  repeat:           variant=all runs both halves" in info.output.splitlines()
    submitted = run_cli("submit", out, "-o", tmp_path / "s.zip", kernel=isolated_kernel)
    assert submitted.exit_code == 0, submitted.output
    with zipfile.ZipFile(tmp_path / "s.zip") as archive:
        assert sorted(archive.namelist()) == [f"review_sentiment_predict_half-{h}.json" for h in "ab"]


def test_a_repeat_that_is_no_plan_expansion_is_dropped(isolated_kernel, tmp_path):
    row, _ = _register(isolated_kernel, tmp_path, repeat={"setting": "variant", "value": "all"})
    assert row.status == "error" and "repeat must be a PlanExpansion (clue_core.plugin), got dict" in row.error
