"""Report sections a third-party plugin registers (``clue_report_sections``) reach every rendering of
the report without touching its code; a failing section is one line; without the clue-report plugin
``clue-core report`` says what to install."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clue_builtin import hooks as builtin
from clue_core.kernel import Kernel
from clue_core.plugin import ClueError, ReportSectionSpec, hookimpl

MODULE = __name__


def build_tally(files: list[Path], report: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """A toy section: each input file holds ``{"name": count}``; the report's runs are counted too."""
    counts: dict[str, int] = {}
    for path in files:
        counts.update(json.loads(path.read_text(encoding="utf-8")))
    return {"counts": counts, "runs": len(report["runs"]), "files": [str(f) for f in files]}, \
        [f"tally: {len(files)} file(s)"]


def html_tally(data: dict[str, Any], kit: Any) -> str:
    rows = [[kit.escape(name), kit.num(count)] for name, count in data["counts"].items()]
    chart = kit.grouped_bars("tally-bars", "Tally per name", list(data["counts"]),
                             [(("计数", "count"), list(data["counts"].values()))])
    return "<p>tally of &lt;names&gt;</p>" + kit.table(["name", "count"], rows) + chart


def markdown_tally(data: dict[str, Any], kit: Any) -> list[str]:
    return [kit.md_table(["name", "count"], [[n, kit.number(c, 0)] for n, c in data["counts"].items()])]


def build_refusing(files: list[Path], report: dict[str, Any]) -> tuple[None, list[str]]:
    raise ClueError(f"{files[0]}: field 'counts': expected an object")


def build_crashing(files: list[Path], report: dict[str, Any]) -> tuple[None, list[str]]:
    raise ValueError("a bug in the section")


def build_nothing(files: list[Path], report: dict[str, Any]) -> tuple[None, list[str]]:
    return None, ["nothing to show"]


def section(name: str = "tally", build: str = "build_tally", **extra: Any) -> ReportSectionSpec:
    return ReportSectionSpec(name, extra.pop("title", "Tally"), "Counts from tally.json.",
                             build=f"{MODULE}:{build}", html=f"{MODULE}:html_tally",
                             markdown=f"{MODULE}:markdown_tally", inputs=("tally.json",), **extra)


class Sections:
    def __init__(self, *specs: ReportSectionSpec) -> None:
        self.specs = list(specs)

    @hookimpl
    def clue_report_sections(self) -> list[ReportSectionSpec]:
        return self.specs


def report_kernel(*specs: ReportSectionSpec, disabled: tuple[str, ...] = ()) -> Kernel:
    """The built-in plugin, clue-report and a plugin with ``specs``, registered in-process."""
    from clue_report import hooks

    kernel = Kernel(entrypoints=False, strict=False, disabled=disabled)
    kernel.register(builtin, "builtin", distribution="clue-core")
    kernel.register(hooks, "clue-report", distribution="clue-report")
    kernel.register(Sections(*specs), "tallies")
    return kernel


@pytest.fixture
def tally(tmp_path: Path) -> Path:
    folder = tmp_path / "tallies"
    (folder / "inner").mkdir(parents=True)
    (folder / "tally.json").write_text(json.dumps({"甲": 3}), encoding="utf-8")
    (folder / "inner" / "tally.json").write_text(json.dumps({"b<c": 5}), encoding="utf-8")
    return folder


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output


def test_a_plugin_section_is_in_every_rendering(run_cli, tally: Path, baseline_runs: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUE_REPORT_FONT", "none")
    out = tmp_path / "report"
    result = run_cli("report", baseline_runs / "afqmc", tally, "-o", out, kernel=report_kernel(section()))
    assert result.exit_code == 0, result.output
    assert f"tally: {tally / 'tally.json'}, {tally / 'inner' / 'tally.json'}" in result.output

    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<a href='#tally'>Tally</a><a href='#runs'>Runs</a></nav>" in page
    assert "<section id='tally'><h2>Tally</h2><p>tally of &lt;names&gt;</p>" in page
    assert "<td>b&lt;c</td>" in page and '<figure id="chart-tally-bars">' in page

    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["tally"] == {"counts": {"甲": 3, "b<c": 5}, "runs": 1,
                               "files": [str(tally / "tally.json"), str(tally / "inner" / "tally.json")]}
    assert report["sections"] == [{"name": "tally", "title": "Tally", "key": "tally", "plugin": "tallies",
                                   "files": report["tally"]["files"]}]
    assert "tally: 2 file(s)" in report["warnings"]
    assert {"id": "chart-tally-bars", "title": "Tally per name", "section": "tally"} in report["charts"]["images"]

    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "## Tally\n\n| name | count |" in markdown
    assert "| 甲 | 3 |" in markdown and "| b&lt;c | 5 |" in markdown  # cells are text, escaped (kit.md_text)


def test_a_section_stores_its_data_under_its_key_and_is_left_out_without_its_files(
        tally: Path, baseline_runs: Path, tmp_path: Path) -> None:
    from clue_report import write_report

    kernel = report_kernel(section(key="tallies", order=5))
    report = write_report(kernel, [tally], tmp_path / "with", charts=False)
    assert "tallies" in report and "tally" not in report and report["charts"]["images"] == []
    assert "<figure" not in (tmp_path / "with" / "index.html").read_text(encoding="utf-8")  # no charts: no figure
    report = write_report(kernel, [baseline_runs / "afqmc"], tmp_path / "without", charts=False)
    assert "tallies" not in report and report["sections"] == []
    assert "#tally" not in (tmp_path / "without" / "index.html").read_text(encoding="utf-8")


def test_a_section_with_nothing_to_show_is_left_out(tally: Path, tmp_path: Path) -> None:
    from clue_report import write_report

    report = write_report(report_kernel(section(build="build_nothing")), [tally], tmp_path / "r", charts=False)
    assert report["sections"] == [] and "tally" not in report and "nothing to show" in report["warnings"]


@pytest.mark.parametrize(("spec", "expected"), [
    (section(build="build_refusing"), "tally.json: field 'counts': expected an object"),
    (section(build="build_crashing"), "report section 'tally' (plugin tallies): build "
                                      f"{MODULE}:build_crashing failed (ValueError: a bug in the section)"),
    (section(build="build_missing"), f"report section 'tally' (plugin tallies): build {MODULE}:build_missing failed"),
    (section(key="runs"), "report section 'tally' (plugin tallies): key 'runs' is taken in report.json"),
], ids=["clue-error", "crash", "missing", "key-taken"])
def test_a_failing_section_is_one_line(run_cli, tally: Path, tmp_path: Path, spec, expected) -> None:
    message = _one_line_error(run_cli("report", tally, "-o", tmp_path / "out", kernel=report_kernel(spec)))
    assert expected in message
    assert not (tmp_path / "out").exists()


def test_without_o_a_section_file_alone_asks_for_the_html_report(run_cli, tally: Path) -> None:
    message = _one_line_error(run_cli("report", tally, kernel=report_kernel(section())))
    assert f"{tally}: tally.json (Tally) is shown in the HTML report: add -o DIR" in message


def test_not_a_folder_names_every_file_a_section_reads(run_cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    message = _one_line_error(run_cli("report", tmp_path / "empty", "-o", tmp_path / "o",
                                      kernel=report_kernel(section())))
    assert "no metrics.json or tally.json here or in its sub-folders" in message


def test_without_the_report_plugin_report_says_what_to_install(run_cli, isolated_kernel, tmp_path: Path) -> None:
    message = _one_line_error(run_cli("report", tmp_path, "-o", tmp_path / "o", kernel=isolated_kernel))
    assert message == ("error: 'clue-core report' comes with the clue-report plugin, which is not installed: "
                       "pip install ./plugins/clue-report\n")
    disabled = report_kernel(disabled=("clue-report",))
    message = _one_line_error(run_cli("report", tmp_path, kernel=disabled))
    assert "clue-report plugin, which CLUE_DISABLE_PLUGINS turns off" in message


def test_the_hook_module_loads_no_chart_or_number_library() -> None:
    code = ("import sys, clue_report.hooks; "
            "print(sorted(m for m in ('matplotlib', 'numpy', 'clue_report.build', 'click') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
