"""``clue-core report`` never replaces what it did not write, leaves nothing unfinished in its
totals, and names a metrics.json it cannot read (issue 18: H1, M10, M11, M12)."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import pytest

from clue_core import atomic
from clue_core.errors import ClueError
from clue_report import write_report


@pytest.fixture
def one_run(baseline_runs: Path, tmp_path: Path) -> Path:
    """A private folder holding one baseline run (afqmc), to damage; one run keeps the charts few."""
    folder = tmp_path / "runs"
    shutil.copytree(baseline_runs / "afqmc", folder / "afqmc")
    return folder


@pytest.fixture
def runs(baseline_runs: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "all-runs"
    shutil.copytree(baseline_runs, copy)
    return copy


def _edit(path: Path, **changes) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output


# H1: the user's own files in -o DIR


def test_report_refuses_to_replace_the_users_files(run_cli, kernel, one_run: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.md").write_text("# my notes\n", encoding="utf-8")
    (docs / "index.html").write_text("<p>my page</p>\n", encoding="utf-8")
    (docs / "notes.txt").write_text("mine\n", encoding="utf-8")
    message = _one_line_error(run_cli("report", one_run, "-o", docs, kernel=kernel))
    assert str(docs / "index.html") in message and str(docs / "report.md") in message
    assert "report.json" not in message and "--force" in message
    assert (docs / "report.md").read_text(encoding="utf-8") == "# my notes\n"
    assert (docs / "index.html").read_text(encoding="utf-8") == "<p>my page</p>\n"
    assert sorted(p.name for p in docs.iterdir()) == ["index.html", "notes.txt", "report.md"]

    result = run_cli("report", one_run, "-o", docs, "--force", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert (docs / "report.md").read_text(encoding="utf-8").startswith("# CLUE report")
    assert (docs / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert sorted(p.name for p in docs.iterdir()) == ["index.html", "notes.txt", "report.json", "report.md"]


def test_report_regenerates_its_own_output_but_not_an_edited_file(run_cli, kernel, one_run: Path,
                                                                   tmp_path: Path) -> None:
    out = tmp_path / "report"
    for _ in range(2):  # make demo, run twice
        result = run_cli("report", one_run, "-o", out, kernel=kernel)
        assert result.exit_code == 0, result.output
    (out / "report.md").write_text((out / "report.md").read_text(encoding="utf-8") + "my addition\n",
                                   encoding="utf-8")
    message = _one_line_error(run_cli("report", one_run, "-o", out, kernel=kernel))
    assert str(out / "report.md") in message and "index.html" not in message
    assert (out / "report.md").read_text(encoding="utf-8").endswith("my addition\n")


def test_a_report_json_that_is_not_a_report_is_not_replaced(kernel, one_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.json").write_text('{"mine": 1}\n', encoding="utf-8")
    with pytest.raises(ClueError, match=r"report\.json.*not written by clue-core report"):
        write_report(kernel, [one_run], out, charts=False)
    assert (out / "report.json").read_text(encoding="utf-8") == '{"mine": 1}\n'
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]


def test_an_older_report_without_the_mark_is_regenerated(kernel, one_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    write_report(kernel, [one_run], out, charts=False)
    older = json.loads((out / "report.json").read_text(encoding="utf-8"))
    from clue_report.owned import check_replaceable

    del older["written"]  # what clue-core wrote before it marked its output
    (out / "report.json").write_text(json.dumps(older), encoding="utf-8")
    check_replaceable(out)  # its own index.html and report.md: replaced
    (out / "report.md").write_text("my own report\n", encoding="utf-8")
    with pytest.raises(ClueError, match=r"report\.md"):
        check_replaceable(out)


def test_a_full_disk_replaces_nothing(kernel, one_run: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "report"
    write_report(kernel, [one_run], out, charts=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full_disk)
    with pytest.raises(ClueError, match="No space left on device"):
        write_report(kernel, [one_run], out, seed=1, charts=False)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing replaced, no temporaries


def test_a_kill_between_the_files_leaves_a_report_that_regenerates(kernel, one_run: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "report"
    write_report(kernel, [one_run], out, charts=False)
    real = atomic.os.replace

    def killed(source, target):
        if not str(target).endswith("report.json"):
            raise KeyboardInterrupt  # the process dies after report.json is in place, before the others
        return real(source, target)

    monkeypatch.setattr(atomic.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        write_report(kernel, [one_run], out, seed=1, charts=False)
    monkeypatch.setattr(atomic.os, "replace", real)
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "report.json", "report.md"]
    write_report(kernel, [one_run], out, charts=False)  # the old files are still clue-core's: no --force


# M10: plain report leaves out what -o leaves out, and says so


def test_plain_report_names_and_leaves_out_unfinished_runs(run_cli, kernel, runs: Path) -> None:
    _edit(runs / "tnews" / "manifest.json", status="running")
    (runs / "iflytek" / "metrics.json").unlink()
    shutil.copytree(runs / "ocnli", runs / ".ocnli.staging")
    result = run_cli("report", runs, kernel=kernel)
    assert result.exit_code == 0, result.output
    assert f"left out, unfinished: {runs / 'tnews'} (status 'running', not 'complete')" in result.output
    assert f"left out, unfinished: {runs / 'iflytek'} (no metrics.json)" in result.output
    assert f"left out, unfinished: {runs / '.ocnli.staging'}" in result.output
    assert "CLUE 1.1 classification" in result.output
    group = next(line for line in result.output.splitlines() if line.startswith("CLUE 1.1 classification"))
    assert "tnews" not in group.split("(missing")[0] and "iflytek" not in group.split("(missing")[0]

    data = json.loads(run_cli("report", runs, "--json", kernel=kernel).output)
    assert {u["task"] for u in data["unfinished"]} == {"tnews", "iflytek", "ocnli"}
    assert [s["task"] for s in data["tasks"]].count("ocnli") == 1
    assert "tnews" not in [s["task"] for s in data["tasks"]]
    assert "tnews" in data["groups"]["CLUE 1.1 classification"]["missing"]


# M11 / M12: metrics.json that is not what this clue-core writes


@pytest.mark.parametrize("output", [False, True], ids=["plain", "html"])
@pytest.mark.parametrize(("changes", "field"), [
    ({"primary": {"value": 71.5}}, "primary"),
    ({"dev": {"accuracy": {"value": 71.5, "ci": [70, 73]}}}, "dev.accuracy"),
    ({"dev": [71.5]}, "dev"),
    ({"leaderboards": [{"benchmark": "CLUE"}]}, "leaderboards[0].group"),
])
def test_metrics_with_values_it_cannot_read_are_named(run_cli, kernel, one_run: Path, tmp_path: Path,
                                                       changes, field, output) -> None:
    metrics = one_run / "afqmc" / "metrics.json"
    _edit(metrics, **changes)
    out = tmp_path / "report"
    message = _one_line_error(run_cli("report", one_run, *(["-o", out] if output else []), kernel=kernel))
    assert f"{metrics}: field '{field}'" in message
    assert not out.exists()


def test_a_run_of_a_newer_clue_core_is_named_as_such(run_cli, kernel, one_run: Path) -> None:
    _edit(one_run / "afqmc" / "manifest.json", clue_core="99.0.0")
    _edit(one_run / "afqmc" / "metrics.json", primary={"value": 71.5})
    message = _one_line_error(run_cli("report", one_run, kernel=kernel))
    assert "field 'primary'" in message and "written by clue-core 99.0.0" in message and "upgrade" in message
