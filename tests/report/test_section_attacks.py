"""A hostile report section: data report.json cannot hold, a build that changes the report, sys.exit,
a name that is one of the page's anchors, a chart id that breaks the HTML, input names that are
patterns or paths. Each is one line (exit 2, nothing written) or has no effect on the report."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from clue_builtin import hooks as builtin
from clue_core.kernel import Kernel
from clue_core.plugin import ReportSectionSpec, hookimpl

MODULE = __name__


def build_ok(files: list[Path], report: dict[str, Any]) -> tuple[Any, list[str]]:
    return {"files": len(files)}, []


def build_set(files: list[Path], report: dict[str, Any]) -> tuple[Any, list[str]]:
    return {"names": {"a", "b"}}, []


def build_path(files: list[Path], report: dict[str, Any]) -> tuple[Any, list[str]]:
    return {"file": files[0]}, []


def build_nan(files: list[Path], report: dict[str, Any]) -> tuple[Any, list[str]]:
    return {"score": math.nan}, []


def build_infinity(files: list[Path], report: dict[str, Any]) -> tuple[Any, list[str]]:
    return [math.inf], []


def build_tuple_key(files: list[Path], report: dict[str, Any]) -> tuple[Any, list[str]]:
    return {("a", "b"): 1}, []


def build_circular(files: list[Path], report: dict[str, Any]) -> tuple[Any, list[str]]:
    data: dict[str, Any] = {}
    data["self"] = data
    return data, []


def build_vandal(files: list[Path], report: dict[str, Any]) -> tuple[Any, list[str]]:
    report["rows"] = "vandalised"
    report["runs"].clear()
    report["warnings"].append("planted")
    return {"files": len(files)}, []


def build_exits(files: list[Path], report: dict[str, Any]) -> tuple[Any, list[str]]:
    raise SystemExit(4)


def build_tuple_warnings(files: list[Path], report: dict[str, Any]) -> tuple[Any, tuple[str, ...]]:
    return {"files": len(files)}, ("from a tuple",)


def html_ok(data: Any, kit: Any) -> str:
    return "<p>ok</p>"


def html_exits(data: Any, kit: Any) -> str:
    raise SystemExit(5)


def html_vandal(data: dict[str, Any], kit: Any) -> str:
    data["files"] = "changed by html"
    return "<p>ok</p>"


def html_bad_chart_id(data: Any, kit: Any) -> str:
    return kit.grouped_bars('x" onload="alert(1)', "Bad id", ["a"], [("s", [1.0])])


def markdown_ok(data: Any, kit: Any) -> list[str]:
    return ["ok"]


def markdown_vandal(data: dict[str, Any], kit: Any) -> list[str]:
    data.clear()
    return ["ok"]


def markdown_exits(data: Any, kit: Any) -> list[str]:
    raise SystemExit(6)


class Sections:
    def __init__(self, *specs: ReportSectionSpec) -> None:
        self.specs = list(specs)

    @hookimpl
    def clue_report_sections(self) -> list[ReportSectionSpec]:
        return self.specs


def spec(name: str = "probe", build: str = "build_ok", html: str = "html_ok", markdown: str = "markdown_ok",
         inputs: tuple[str, ...] = ("probe.json",)) -> ReportSectionSpec:
    return ReportSectionSpec(name, "Probe", "A hostile section.", build=f"{MODULE}:{build}",
                             html=f"{MODULE}:{html}", markdown=f"{MODULE}:{markdown}", inputs=inputs)


def kernel_with(*specs: ReportSectionSpec) -> Kernel:
    from clue_report import hooks

    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    kernel.register(builtin, "builtin", distribution="clue-core")
    kernel.register(hooks, "clue-report", distribution="clue-report")
    kernel.register(Sections(*specs), "hostile")
    return kernel


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    folder = tmp_path / "probe"
    folder.mkdir()
    (folder / "probe.json").write_text("{}", encoding="utf-8")
    return folder


@pytest.fixture(autouse=True)
def _no_font(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUE_REPORT_FONT", "none")


def _one_line(result: Any) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output


@pytest.mark.parametrize(("build", "reason"), [
    ("build_set", "Object of type set is not JSON serializable"),
    ("build_path", "Object of type PosixPath is not JSON serializable"),
    ("build_nan", "Out of range float values are not JSON compliant"),
    ("build_infinity", "Out of range float values are not JSON compliant"),
    ("build_tuple_key", "keys must be str, int, float, bool or None, not tuple"),
    ("build_circular", "Circular reference detected"),
])
def test_data_report_json_cannot_hold_is_one_line(run_cli, probe: Path, tmp_path: Path, build: str,
                                                  reason: str) -> None:
    out = tmp_path / "out"
    message = _one_line(run_cli("report", probe, "-o", out, kernel=kernel_with(spec(build=build))))
    assert message == (f"error: report section 'probe' (plugin hostile): build {MODULE}:{build} returned data "
                       f"report.json cannot hold ({reason})\n")
    assert not out.exists()


def test_a_build_that_changes_the_report_changes_nothing(run_cli, probe: Path, baseline_runs: Path,
                                                         tmp_path: Path) -> None:
    out = tmp_path / "out"
    kernel = kernel_with(spec(build="build_vandal"))
    result = run_cli("report", baseline_runs / "afqmc", probe, "-o", out, kernel=kernel)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert isinstance(report["rows"], list) and len(report["rows"]) == 1 and len(report["runs"]) == 1
    assert "planted" not in report["warnings"] and report["probe"] == {"files": 1}


def test_html_and_markdown_that_change_the_data_leave_report_json_alone(probe: Path, tmp_path: Path) -> None:
    from clue_report import write_report

    kernel = kernel_with(spec(html="html_vandal", markdown="markdown_vandal"))
    report = write_report(kernel, [probe], tmp_path / "out", charts=False)
    assert report["probe"] == {"files": 1}
    assert json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))["probe"] == {"files": 1}


@pytest.mark.parametrize(("part", "kwargs", "code"), [
    ("build", {"build": "build_exits"}, 4),
    ("html", {"html": "html_exits"}, 5),
    ("markdown", {"markdown": "markdown_exits"}, 6),
])
def test_sys_exit_in_a_section_is_one_line(run_cli, probe: Path, tmp_path: Path, part: str, kwargs: dict[str, str],
                                           code: int) -> None:
    message = _one_line(run_cli("report", probe, "-o", tmp_path / "out", kernel=kernel_with(spec(**kwargs))))
    assert f"report section 'probe' (plugin hostile): {part} {MODULE}:" in message
    assert f"failed (SystemExit: {code})" in message
    assert not (tmp_path / "out").exists()


def test_warnings_may_be_a_tuple(probe: Path, tmp_path: Path) -> None:
    from clue_report import write_report

    report = write_report(kernel_with(spec(build="build_tuple_warnings")), [probe], tmp_path / "out", charts=False)
    assert "from a tuple" in report["warnings"]


@pytest.mark.parametrize("name", ["runs", "leaderboard", "tasks", "warnings", "image-check", "task-afqmc",
                                  "chart-overview"])
def test_a_section_named_like_one_of_the_pages_anchors_is_one_line(run_cli, probe: Path, tmp_path: Path,
                                                                   name: str) -> None:
    probed = ReportSectionSpec(name, "Probe", "d", build=f"{MODULE}:build_ok", html=f"{MODULE}:html_ok",
                               inputs=("probe.json",), key="probe")
    message = _one_line(run_cli("report", probe, "-o", tmp_path / "out", kernel=kernel_with(probed)))
    assert f"report section {name!r} (plugin hostile): its name is an anchor the page itself uses" in message


@pytest.mark.parametrize("font", ["none", ""], ids=["no-charts", "charts"])
def test_a_chart_id_that_is_not_an_anchor_is_one_line(run_cli, probe: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch, font: str) -> None:
    monkeypatch.setenv("CLUE_REPORT_FONT", font)
    message = _one_line(run_cli("report", probe, "-o", tmp_path / "out",
                                kernel=kernel_with(spec(html="html_bad_chart_id"))))
    assert "report section probe: chart id must be letters, digits, '-' or '_'" in message
    assert 'onload' in message and not (tmp_path / "out").exists()


@pytest.mark.parametrize("pattern", ["*", "*.json", "../probe.json", "sub/probe.json", "", "."])
def test_input_names_are_file_names_not_patterns_or_paths(run_cli, tmp_path: Path, pattern: str) -> None:
    folder = tmp_path / "folder"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "probe.json").write_text("{}", encoding="utf-8")
    (folder / "probe.json").write_text("{}", encoding="utf-8")
    (tmp_path / "probe.json").write_text("{}", encoding="utf-8")
    kernel = kernel_with(spec(inputs=(pattern,)))
    message = _one_line(run_cli("report", folder, "-o", tmp_path / "out", kernel=kernel))
    assert message == f"error: {folder}: no metrics.json here or in its sub-folders\n"


def test_every_sub_folder_is_searched_as_before(tmp_path: Path) -> None:
    """Matching names literally keeps what the pattern search found: each sub-folder, hidden ones too."""
    from clue_report import write_report

    folder = tmp_path / "folder"
    for sub in (".hidden", "shown"):
        (folder / sub).mkdir(parents=True)
        (folder / sub / "probe.json").write_text("{}", encoding="utf-8")
    report = write_report(kernel_with(spec()), [folder], tmp_path / "out", charts=False)
    assert report["sections"][0]["files"] == [str(folder / sub / "probe.json") for sub in (".hidden", "shown")]


@pytest.mark.parametrize(("split", "expected"), [
    ({"x": float("nan")}, "field 'quadrant.split.x': expected a number from 0 to 100, got nan"),
    ({"x": "abc"}, "field 'quadrant.split.x': expected a number from 0 to 100, got 'abc'"),
    ({"y": 250}, "field 'quadrant.split.y': expected a number from 0 to 100, got 250"),
    ([50, 50], "field 'quadrant.split': expected an object, got list"),
], ids=["nan", "text", "out-of-range", "list"])
def test_a_comparison_with_a_bad_quadrant_split_names_the_field(run_cli, kernel: Kernel, tmp_path: Path,
                                                                split: Any, expected: str) -> None:
    """The SuperCLUE section (clue-tasks-superclue): a split of NaN used to reach report.json as NaN, text
    a ValueError, a list a TypeError."""
    from tests.report.fixtures import COMPARISON, write_comparison

    data = json.loads(json.dumps(COMPARISON))
    data["quadrant"]["split"] = split
    path = write_comparison(tmp_path / "cmp", data)
    message = _one_line(run_cli("report", path.parent, "-o", tmp_path / "out", kernel=kernel))
    assert message == f"error: {path}: {expected}\n"


def _odd(**fields: Any) -> ReportSectionSpec:
    base = {"name": "odd", "title": "Odd", "description": "d", "build": f"{MODULE}:build_ok",
            "html": f"{MODULE}:html_ok", "inputs": ("probe.json",)}
    return ReportSectionSpec(**{**base, **fields})


@pytest.mark.parametrize("order", ["first", None, float("nan")])
def test_a_section_order_that_is_not_a_number_stops_no_other_report(run_cli, baseline_runs: Path, probe: Path,
                                                                    tmp_path: Path, order: Any) -> None:
    kernel = kernel_with(_odd(order=order), spec(name="fine", inputs=("fine.json",)))
    assert run_cli("report", baseline_runs / "afqmc", kernel=kernel).exit_code == 0
    assert run_cli("report", baseline_runs / "afqmc", "-o", tmp_path / "o", kernel=kernel).exit_code == 0
    message = _one_line(run_cli("report", probe, "-o", tmp_path / "p", kernel=kernel))
    assert f"report section 'odd' (plugin hostile): order must be a number, got {order!r}" in message


@pytest.mark.parametrize(("fields", "expected"), [
    ({"key": 5}, "key must be text, got 5"),
    ({"key": ("a", "b")}, "key must be text, got ('a', 'b')"),
    ({"title": None}, "title must be text, got None"),
])
def test_a_section_key_or_title_that_is_not_text_is_one_line(run_cli, probe: Path, tmp_path: Path,
                                                             fields: dict[str, Any], expected: str) -> None:
    message = _one_line(run_cli("report", probe, "-o", tmp_path / "out", kernel=kernel_with(_odd(**fields))))
    assert f"report section 'odd' (plugin hostile): {expected}" in message
