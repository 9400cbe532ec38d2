"""A third party's fetcher misbehaving: each fault is one ``error:`` line naming the fetcher (and its plugin).

The ``clue_data_fetchers`` contract (``fetch(task, *, progress) -> Path``, ``location(task) -> Path``)
is code of somebody else's, run by the kernel: it may raise anything, return a string, a file, a
folder that is not the task's, or be a reference that does not import. None of that may reach the
user as a traceback, and a folder holding none of the task's files is the fetcher's fault, not the
reader's (the reader's line named only a folder the user never chose).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clue_builtin import hooks as builtin
from clue_core.data import resolve_task_data
from clue_core.errors import DataError, PluginError
from clue_core.kernel import Kernel
from clue_core.plugin import FetcherSpec, hookimpl
from clue_tasks_classic import hooks as classic

PLUGIN = "lab-plugin"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLUE_FETCHER", raising=False)


def kernel_with(spec: FetcherSpec) -> Kernel:
    """The built-in plugin, the classic tasks and one third-party plugin bringing ``spec``."""

    class Plugin:
        @hookimpl
        def clue_data_fetchers(self) -> list[FetcherSpec]:
            return [spec]

    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    for plugin, name in [(builtin, "builtin"), (classic, "clue-tasks-classic"), (Plugin(), PLUGIN)]:
        kernel.register(plugin, name)
    assert list(kernel.fetchers) == [spec.name]
    return kernel


def spec(fetch: object, location: object = None) -> FetcherSpec:
    return FetcherSpec(name="lab", help="A lab's mirror (a test stand-in).", fetch=fetch, location=location)


def one_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output, result.output
    return result.output.rstrip("\n")


def afqmc_folder(root: Path) -> Path:
    folder = root / "afqmc"
    folder.mkdir(parents=True)
    for name in ("train.json", "dev.json"):
        (folder / name).write_text('{"sentence1": "a", "sentence2": "b", "label": "0"}\n', encoding="utf-8")
    (folder / "test.json").write_text('{"id": 0, "sentence1": "a", "sentence2": "b"}\n', encoding="utf-8")
    return folder


# ------------------------------------------------------------------ fetch


def test_a_fetch_that_raises_is_one_line_naming_the_fetcher(run_cli, tmp_path: Path) -> None:
    def fetch(task, *, progress):
        raise RuntimeError("mirror down")

    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs", kernel=kernel_with(spec(fetch)))
    line = one_line(result)
    assert line.startswith(f"error: fetcher lab (plugin {PLUGIN}): ") and "RuntimeError: mirror down" in line, line
    assert not (tmp_path / "runs" / "afqmc").exists()


def test_a_fetch_raising_names_its_plugin_given_the_owners(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))

    def fetch(task, *, progress):
        raise OSError(28, "No space left on device")

    kernel = kernel_with(spec(fetch))
    with pytest.raises(PluginError) as error:
        resolve_task_data(kernel.task("afqmc"), fetchers=kernel.fetchers, owners=kernel.owner)
    assert str(error.value).startswith(f"fetcher lab (plugin {PLUGIN}): ")
    assert "No space left on device" in str(error.value)


def test_a_data_error_of_the_fetcher_is_its_own_line_unchanged(run_cli, tmp_path: Path) -> None:
    def fetch(task, *, progress):
        raise DataError(f"the lab mirror has no {task.name}: pass --data-dir")

    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs", kernel=kernel_with(spec(fetch)))
    assert one_line(result) == "error: the lab mirror has no afqmc: pass --data-dir"


def test_ctrl_c_in_a_fetch_is_not_taken_for_a_broken_plugin(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))

    def fetch(task, *, progress):
        raise KeyboardInterrupt

    kernel = kernel_with(spec(fetch))
    with pytest.raises(KeyboardInterrupt):
        resolve_task_data(kernel.task("afqmc"), fetchers=kernel.fetchers)


def test_a_fetch_returning_the_folder_as_a_string_is_that_folder(run_cli, tmp_path: Path) -> None:
    folder = afqmc_folder(tmp_path / "mirror")
    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs",
                     kernel=kernel_with(spec(lambda task, progress: str(folder))))
    assert result.exit_code == 0, result.output


def test_a_fetch_returning_a_file_is_one_line(run_cli, tmp_path: Path) -> None:
    file = tmp_path / "afqmc.zip"
    file.write_bytes(b"PK")
    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs",
                     kernel=kernel_with(spec(lambda task, progress: file)))
    line = one_line(result)
    assert line.startswith(f"error: fetcher lab (plugin {PLUGIN}): "), line
    assert str(file) in line and "not a folder" in line, line


def test_a_fetch_returning_a_missing_folder_is_one_line(run_cli, tmp_path: Path) -> None:
    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs",
                     kernel=kernel_with(spec(lambda task, progress: tmp_path / "gone")))
    line = one_line(result)
    assert line.startswith(f"error: fetcher lab (plugin {PLUGIN}): "), line
    assert "gone" in line and "nothing is there" in line, line


def test_a_fetched_folder_without_any_of_the_task_files_blames_the_fetcher(run_cli, tmp_path: Path) -> None:
    wrong = tmp_path / "tnews"
    wrong.mkdir()
    (wrong / "labels.json").write_text("{}\n", encoding="utf-8")
    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs",
                     kernel=kernel_with(spec(lambda task, progress: wrong)))
    line = one_line(result)
    assert line.startswith(f"error: fetcher lab (plugin {PLUGIN}): ") and str(wrong) in line, line
    assert "train.json, dev.json, test.json" in line, line


def test_a_fetched_folder_missing_some_files_is_left_to_the_reader(run_cli, tmp_path: Path) -> None:
    """Some of a task's files are optional (a test version a mirror lacks is skipped): only a folder
    holding none of them is refused as the wrong one."""
    folder = afqmc_folder(tmp_path / "mirror")
    (folder / "test.json").unlink()
    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs",
                     kernel=kernel_with(spec(lambda task, progress: folder)))
    assert "fetcher lab" not in result.output


def test_a_fetch_reference_that_does_not_import_is_one_line(run_cli, tmp_path: Path) -> None:
    kernel = kernel_with(spec("no_such_mirror.fetch:fetch"))
    line = one_line(run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs", kernel=kernel))
    assert line.startswith(f"error: fetcher lab (plugin {PLUGIN}): no_such_mirror.fetch:fetch does not import"), line


# ------------------------------------------------------------------ location (info, --dry-run)


@pytest.mark.parametrize("location", [
    pytest.param(lambda task: (_ for _ in ()).throw(RuntimeError("no mount")), id="raises"),
    pytest.param(lambda task: 42, id="not-a-path"),
])
def test_a_broken_location_is_one_line_for_dry_run_and_info(run_cli, tmp_path: Path, location) -> None:
    kernel = kernel_with(spec(lambda task, progress: tmp_path, location))
    dry = one_line(run_cli("run", "afqmc", "--model", "baseline", "--dry-run", kernel=kernel))
    assert dry.startswith(f"error: fetcher lab (plugin {PLUGIN}): "), dry
    info = run_cli("info", "afqmc", kernel=kernel)
    assert "Traceback" not in info.output
    if info.exit_code:
        assert one_line(info).startswith(f"error: fetcher lab (plugin {PLUGIN}): ")


def test_a_location_given_as_a_string_is_that_path(run_cli, tmp_path: Path) -> None:
    folder = afqmc_folder(tmp_path / "mirror")
    kernel = kernel_with(spec(lambda task, progress: folder, lambda task: str(folder)))
    dry = run_cli("run", "afqmc", "--model", "baseline", "--dry-run", kernel=kernel)
    assert dry.exit_code == 0 and f"data {folder}" in dry.output, dry.output


# ------------------------------------------------------------------ a slow fetcher, killed

SLOW_SCRIPT = """
import os, sys, time
from pathlib import Path
from clue_builtin import hooks as builtin
from clue_core.cli import cli
from clue_core.data import sample_dir
from clue_core.kernel import Kernel
from clue_core.plugin import FetcherSpec, hookimpl
from clue_tasks_classic import hooks as classic

def fetch(task, *, progress):
    if os.environ["MODE"] == "slow":
        Path(os.environ["STARTED"]).touch()
        time.sleep(60)
    return sample_dir(task)

class Mirror:
    @hookimpl
    def clue_data_fetchers(self):
        return [FetcherSpec(name="slow", help="A slow mirror.", fetch=fetch)]

kernel = Kernel(entrypoints=False, strict=False, disabled=())
for plugin, name in [(builtin, "builtin"), (classic, "clue-tasks-classic"), (Mirror(), "slow-mirror")]:
    kernel.register(plugin, name)
cli.main(sys.argv[1:], obj={"kernel": kernel}, prog_name="clue-core")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", ["SIGINT", "SIGKILL"])
def test_a_slow_fetch_killed_ends_cleanly_and_the_next_run_goes(tmp_path: Path, sig: str) -> None:
    """Ctrl-C while a fetcher works is the one interrupted line (exit 130), no output folder; after a
    SIGKILL (nothing runs) the next run is not blocked by anything the killed one held."""
    script = tmp_path / "clue_core_with_a_slow_mirror.py"
    script.write_text(SLOW_SCRIPT, encoding="utf-8")
    started = tmp_path / "started"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CLUE_HOME": str(tmp_path / "home"), "STARTED": str(started)}
    env.pop("CLUE_FETCHER", None)
    args = [sys.executable, str(script), "run", "afqmc", "--model", "baseline", "-o", str(tmp_path / "runs")]
    process = subprocess.Popen(args, cwd=tmp_path, env={**env, "MODE": "slow"}, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not started.exists():
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    process.send_signal(getattr(signal, sig))
    out, err = process.communicate(timeout=30)
    if sig == "SIGINT":
        assert process.returncode == 130 and err.splitlines()[-1] == "error: interrupted", (out, err)
        assert "Traceback" not in err and not (tmp_path / "runs").exists()
    again = subprocess.run(args, cwd=tmp_path, env={**env, "MODE": "quick"}, text=True, capture_output=True,
                           timeout=120)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "runs" / "afqmc" / "manifest.json").is_file()


def test_a_fetcher_whose_name_is_no_word_is_dropped_on_its_row(run_cli, isolated_kernel) -> None:
    """``$CLUE_FETCHER`` names a fetcher, so its name must be one word: one that is no string (or holds a
    space or a comma) is a problem on its plugin's row, and clue-data stays the one fetcher a run uses."""
    from clue_tasks_classic import hooks as classic_tasks

    isolated_kernel.register(classic_tasks, "clue-tasks-classic")

    class Odd:
        @hookimpl
        def clue_data_fetchers(self) -> list[FetcherSpec]:
            return [FetcherSpec(name=None, help="-", fetch="x:y"),  # type: ignore[arg-type]
                    FetcherSpec(name="lab mirror", help="-", fetch="x:y")]

    isolated_kernel.register(Odd(), "odd")
    row = next(p for p in isolated_kernel.plugins if p.name == "odd")
    assert row.status == "error" and "fetcher name must be one word" in row.error, row
    assert list(isolated_kernel.fetchers) == ["clue-data"]
    result = run_cli("run", "afqmc", "--model", "baseline", "--dry-run", kernel=isolated_kernel)
    assert result.exit_code == 0 and "several fetchers" not in result.output, result.output
