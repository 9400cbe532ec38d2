"""A hostile review of the leaderboard plugin (issue 30, step 2): each test provokes a fault found by
attacking ``clue-core submit`` / ``evaluate`` and the ``CommandSpec.api`` contract, and failed on the
code as the move left it (ab1b897..812f4bb).

- ``evaluate`` of a file with bytes that are not UTF-8 near its start was a ``UnicodeDecodeError``
  traceback (exit 1; ``api.evaluate`` raised it too, past an ``except ClueError``): the sniff of the
  first line decoded a whole read buffer.
- Two ``submit`` runs writing one zip at once both said ``wrote s.zip``: each saw no zip when it began
  and the later rename silently replaced the other's, without ``--force``; a dangling symlink in the
  zip's place was replaced the same way.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from clue_core import api
from clue_core.errors import ClueError, InputError
from clue_core.kernel import Kernel
from clue_core.plugin import CommandSpec, hookimpl


@pytest.fixture(scope="module")
def kernel() -> Kernel:
    """The installed plugins (the classic tasks and clue-leaderboard among them)."""
    return Kernel(strict=False, disabled=())


@pytest.fixture(scope="module")
def afqmc_run(kernel: Kernel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One complete baseline run of afqmc on the bundled sample (instant)."""
    output = tmp_path_factory.mktemp("attack-runs")
    [record] = api.run(["afqmc"], model="baseline", sample=True, output_dir=output, kernel=kernel, echo=None)
    return record.path


def _one_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output.strip()


# -- evaluate: a file that is not UTF-8 text --------------------------------------------------------


@pytest.mark.parametrize("content", [b'{"id": 0, "prediction": "1"}\n\xff\xfe\n', b"\xff\xfe\x00garbage\n",
                                     b'{"id": 0, "label": "1"}\n\x80\n'], ids=["run-file", "first-byte", "label-file"])
def test_evaluate_of_a_file_that_is_not_utf8_is_one_line(run_cli, kernel, tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(content)
    line = _one_line(run_cli("evaluate", "afqmc", path, "--sample", kernel=kernel))
    assert line.startswith(f"error: {path}") and "not UTF-8 text" in line
    with pytest.raises(InputError, match="not UTF-8 text"):
        api.evaluate("afqmc", path, sample=True, kernel=kernel)


# -- submit: the zip another submit (or a link) already put there -----------------------------------


def test_a_zip_that_appears_while_submit_checks_is_not_replaced(kernel, afqmc_run: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Another ``submit`` finishing between this one's ``exists`` check and its rename: refused, as if it
    had been there at the start, and the other's zip is left as it was."""
    import clue_leaderboard.submission as submission

    output = tmp_path / "s.zip"
    checks = submission.check_families

    def meanwhile(*args, **kwargs):
        output.write_bytes(b"the other submit's zip")
        return checks(*args, **kwargs)

    monkeypatch.setattr(submission, "check_families", meanwhile)
    with pytest.raises(ClueError, match=rf"^{output} exists; pass --force to replace it$"):
        api.submit([afqmc_run], output, kernel=kernel)
    assert output.read_bytes() == b"the other submit's zip"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.zip"]  # no staged copy left beside it


def test_two_submits_at_once_write_one_zip(kernel, afqmc_run: Path, tmp_path: Path) -> None:
    output, outcomes = tmp_path / "s.zip", []
    start = threading.Barrier(4)

    def submit() -> None:
        start.wait()
        try:
            api.submit([afqmc_run], output, kernel=kernel)
            outcomes.append("wrote")
        except ClueError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=submit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == [f"{output} exists; pass --force to replace it"] * 3 + ["wrote"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.zip"]


def test_a_dangling_symlink_in_the_zips_place_wants_force(run_cli, kernel, afqmc_run: Path, tmp_path: Path) -> None:
    link = tmp_path / "s.zip"
    link.symlink_to(tmp_path / "elsewhere" / "s.zip")
    assert _one_line(run_cli("submit", afqmc_run, "-o", link, kernel=kernel)) == \
        f"error: {link} exists; pass --force to replace it"
    assert link.is_symlink() and os.readlink(link) == str(tmp_path / "elsewhere" / "s.zip")
    result = run_cli("submit", afqmc_run, "-o", link, "--force", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert not link.is_symlink() and link.is_file()  # --force replaces the link itself, as it replaces a zip


def test_force_still_replaces_the_zip(run_cli, kernel, afqmc_run: Path, tmp_path: Path) -> None:
    output = tmp_path / "s.zip"
    output.write_bytes(b"old")
    result = run_cli("submit", afqmc_run, "-o", output, "--force", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert output.read_bytes()[:2] == b"PK" and sorted(p.name for p in tmp_path.iterdir()) == ["s.zip"]


def test_a_file_system_without_hard_links_still_publishes(kernel, afqmc_run: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """FAT or a network share refuses ``os.link``: the zip is published by a rename, as before."""
    import errno

    def no_links(src, dst, **kwargs):
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "link", no_links)
    output = tmp_path / "s.zip"
    [checked] = api.submit([afqmc_run], output, kernel=kernel)
    assert output.read_bytes()[:2] == b"PK" and checked.name == "afqmc_predict.json"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.zip"]


# -- a third party's submit beside clue-leaderboard ------------------------------------------------


class _ThirdPartySubmit:
    """A plugin that registers its own ``submit`` command (and its Python API)."""

    @hookimpl
    def clue_commands(self) -> list[CommandSpec]:
        return [CommandSpec("submit", "Mine.", "clue_leaderboard.commands:submit", api=f"{__name__}:_mine")]


THIRD_PARTY = _ThirdPartySubmit()


def _mine(kernel, run_dirs, output, **options):
    return ["the third party's"]


@pytest.mark.parametrize("name", [
    "acme-submit",  # named before clue-leaderboard: submit is clue-leaderboard's (PLUGIN_HOMES) while installed
    "zeta-submit",
])
def test_a_third_party_submit_is_the_error_on_its_own_row(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                          name: str) -> None:
    import importlib.metadata as metadata

    installed = metadata.entry_points

    def entry_points(**selection):
        points = list(installed(**selection))
        if selection.get("group") == "clue_core":
            points.append(metadata.EntryPoint(name, f"{__name__}:THIRD_PARTY", "clue_core"))
        return metadata.EntryPoints(points)

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    kernel = Kernel(strict=False, disabled=())
    rows = {p.name: p for p in kernel.plugins}
    assert rows["clue-leaderboard"].status == "ok", rows["clue-leaderboard"].error
    assert rows[name].status == "error" and "'submit'" in rows[name].error
    assert kernel.owner[("commands", "submit")] == kernel.owner[("commands", "evaluate")] == "clue-leaderboard"
    with pytest.raises(ClueError, match="no such run directory"):  # the leaderboard's check, not the third party's
        api.submit([tmp_path / "nowhere"], tmp_path / "s.zip", kernel=kernel)


# -- what submit is given -----------------------------------------------------------------------------


@pytest.mark.parametrize("run_dirs", [[], ()], ids=["list", "tuple"])
def test_api_submit_of_no_run_folder_names_the_argument(kernel, tmp_path: Path, run_dirs) -> None:
    """The command wants one RUN_DIR at least; the function said 'no leaderboard files to submit in ' (sic)."""
    from clue_core.config import ArgumentError

    with pytest.raises(ArgumentError, match=r"^run_dirs: expected at least one run folder, got none$"):
        api.submit(run_dirs, tmp_path / "s.zip", kernel=kernel)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_holding_only_an_interrupted_run_says_so(run_cli, kernel, afqmc_run: Path, tmp_path: Path) -> None:
    """A run killed mid-way leaves ``.<task>.staging``, which submit rightly skips: the line says it is there."""
    import shutil

    folder = tmp_path / "killed"
    shutil.copytree(afqmc_run, folder / ".afqmc.staging")
    line = _one_line(run_cli("submit", folder, "-o", tmp_path / "s.zip", kernel=kernel))
    assert line == (f"error: {folder}: not a run directory (no manifest.json in it or its sub-folders; "
                    ".afqmc.staging holds a run that did not finish: continue with clue-core run --resume)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["killed"]


# -- names people chose, on the terminal --------------------------------------------------------------


def test_the_zips_name_is_printed_with_its_control_characters_escaped(run_cli, kernel, afqmc_run: Path,
                                                                      tmp_path: Path) -> None:
    """writing-a-plugin.md: a click.echo of a plugin's own goes through printable (the table did; 'wrote' did not)."""
    output = tmp_path / "\x1b[2Jred.zip"
    result = run_cli("submit", afqmc_run, "-o", output, kernel=kernel)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and f"wrote {tmp_path}/\\x1b[2Jred.zip (1 files)" in result.output
    assert output.is_file()


def test_a_run_on_a_relative_data_dir_submitted_from_elsewhere_says_where_to_run(
        run_cli, kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run records its data folder absolute, so submit finds the test data from any folder; a run an
    earlier version recorded as typed (``--data-dir data``, relative to a folder it did not record) gets a
    line that says where to run submit, not that the test data 'is gone' while it was there."""
    import json
    import shutil

    from clue_core.plugin import resolve_task_data

    project = tmp_path / "project"
    shutil.copytree(resolve_task_data(kernel.task("afqmc"), sample=True), project / "data" / "afqmc")
    monkeypatch.chdir(project)
    [record] = api.run(["afqmc"], model="baseline", data_dir="data", output_dir="runs", kernel=kernel, echo=None)
    assert record.manifest.source["data_dir"] == str(project / "data" / "afqmc")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run_dir = project / "runs" / "afqmc"
    result = run_cli("submit", run_dir, "-o", "s.zip", kernel=kernel)
    assert result.exit_code == 0, result.output
    (elsewhere / "s.zip").unlink()

    manifest = run_dir / "manifest.json"
    older = json.loads(manifest.read_text(encoding="utf-8"))
    older["data"]["data_dir"] = recorded = "data/afqmc"
    manifest.write_text(json.dumps(older), encoding="utf-8")
    line = _one_line(run_cli("submit", run_dir, "-o", "s.zip", kernel=kernel))
    assert line == (f"error: {run_dir}: the test data it was run on ({recorded}) is a path relative to the "
                    f"folder the run was started in, not found from {elsewhere}; run submit from that folder")
    assert list(elsewhere.iterdir()) == []
    monkeypatch.chdir(project)
    result = run_cli("submit", run_dir, "-o", "s.zip", kernel=kernel)
    assert result.exit_code == 0, result.output


def test_a_run_interrupted_beside_finished_ones_is_named_as_left_out(run_cli, kernel, afqmc_run: Path,
                                                                     tmp_path: Path) -> None:
    """``clue-core run afqmc tnews -o runs`` killed during tnews: ``submit runs`` packs afqmc and said nothing of
    tnews, whose board entry is then missing; the zip is still written, with a warning naming the folder."""
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(afqmc_run, runs / "afqmc")
    shutil.copytree(afqmc_run, runs / ".tnews.staging")
    result = run_cli("submit", runs, "-o", tmp_path / "s.zip", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert (f"warning: {runs}: .tnews.staging holds a run that did not finish, not in the zip (continue with "
            "clue-core run --resume)\n") in result.output
    assert "wrote" in result.output and "(1 files)" in result.output
    alone = run_cli("submit", afqmc_run.parent, "-o", tmp_path / "t.zip", kernel=kernel)
    assert alone.exit_code == 0 and "warning" not in alone.output, alone.output
