"""The ``clue_data_fetchers`` hook: where a run with no --data-dir and no --sample gets a task's files.

Fetching official data is the clue-data plugin's; the kernel only asks the installed fetcher. Without
one such a run (and ``clue-core download``) says in one line what to install; a third party's fetcher
(a lab's mirror) is used exactly as clue-data's is; with both installed, ``$CLUE_FETCHER`` chooses.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from clue_builtin import hooks as builtin
from clue_core.data import resolve_task_data
from clue_core.errors import DataError
from clue_core.kernel import Kernel
from clue_data.hooks import OFFICIAL
from clue_leaderboard import hooks as leaderboard
from clue_tasks_classic import hooks as classic
from tests.support import mirror_fetcher
from tests.support.data_tasks import AFQMC, isolated_home

ROOT = Path(__file__).resolve().parents[2]
NO_FETCHER = ("error: no data for task afqmc: install clue-data (pip install ./plugins/clue-data) "
              "or pass --data-dir / --sample")


def kernel_with(*plugins: tuple[object, str]) -> Kernel:
    """The built-in plugin and the classic tasks, plus ``plugins``; no entry points (so no clue-data)."""
    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    for plugin, name in [(builtin, "builtin"), (classic, "clue-tasks-classic"), *plugins]:
        kernel.register(plugin, name)
    return kernel


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLUE_FETCHER", raising=False)
    mirror_fetcher.CALLS.clear()


# ------------------------------------------------------------------ no fetcher installed


def test_without_a_fetcher_a_run_needing_official_data_says_what_to_install(run_cli, tmp_path: Path) -> None:
    kernel = kernel_with()
    for args in (["run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs"],
                 ["run", "afqmc", "--model", "baseline", "--dry-run"]):
        result = run_cli(*args, kernel=kernel)
        assert result.exit_code == 2, result.output
        assert result.output == NO_FETCHER + "\n"
    assert not (tmp_path / "runs" / "afqmc").exists()
    # the user's own folder and the bundled sample need no fetcher
    sample = run_cli("run", "afqmc", "--model", "baseline", "--sample", "-o", tmp_path / "s", kernel=kernel)
    assert sample.exit_code == 0, sample.output


def test_without_clue_data_download_says_what_to_install(run_cli) -> None:
    result = run_cli("download", "afqmc", kernel=kernel_with())
    assert result.exit_code == 2
    assert result.output == ("error: 'clue-core download' comes with the clue-data plugin, which is not installed: "
                             "pip install ./plugins/clue-data\n")


def test_clue_data_disabled_is_the_same_one_line(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUE_DISABLE_PLUGINS", "clue-data")  # the real kernel, from entry points
    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs")
    assert result.exit_code == 2 and result.output.splitlines()[-1] == NO_FETCHER
    download = run_cli("download", "afqmc")
    assert download.exit_code == 2
    assert download.output.splitlines()[-1] == (
        "error: 'clue-core download' comes with the clue-data plugin, which CLUE_DISABLE_PLUGINS turns off")


def test_resolve_task_data_without_fetchers_is_the_install_line(tmp_path: Path, monkeypatch) -> None:
    isolated_home(tmp_path, monkeypatch)
    with pytest.raises(DataError) as error:
        resolve_task_data(AFQMC)
    assert f"error: {error.value}" == NO_FETCHER


def test_no_download_without_cache_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``download=False`` only looks where the fetcher keeps the files (moved from test_data_lookup)."""
    home = isolated_home(tmp_path, monkeypatch)
    fetchers = {OFFICIAL.name: OFFICIAL}
    with pytest.raises(DataError, match="run `clue-core download afqmc` or pass --data-dir"):
        resolve_task_data(AFQMC, fetchers=fetchers, download=False)
    (home / "data" / "afqmc").mkdir(parents=True)
    assert resolve_task_data(AFQMC, fetchers=fetchers, download=False) == home / "data" / "afqmc"


# ------------------------------------------------------------------ a third party's fetcher


def test_a_third_party_fetcher_brings_the_files_of_a_run(run_cli, tmp_path: Path) -> None:
    kernel = kernel_with((mirror_fetcher.MirrorPlugin(), "lab-mirror"), (leaderboard, "clue-leaderboard"))
    assert list(kernel.fetchers) == ["lab-mirror"]
    home = tmp_path / "clue-home"  # where run_cli points CLUE_HOME
    dry = run_cli("run", "afqmc", "--model", "baseline", "--dry-run", kernel=kernel)
    assert dry.exit_code == 0 and f"data {home / 'mirror' / 'afqmc'} (downloaded on first run from" in dry.output
    assert mirror_fetcher.CALLS == []  # --dry-run fetches nothing

    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "runs", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert mirror_fetcher.CALLS == [("afqmc", True)]
    manifest = json.loads((tmp_path / "runs" / "afqmc" / "manifest.json").read_text(encoding="utf-8"))
    files = manifest["data"]["files"]
    assert files and all(f.startswith(str(home / "mirror" / "afqmc")) for f in files)
    # evaluate (the leaderboard plugin) reads gold through the same fetcher
    scored = run_cli("evaluate", "afqmc", tmp_path / "runs" / "afqmc" / "predictions" / "dev.jsonl", "--json",
                     kernel=kernel)
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.output)["examples"] > 0 and mirror_fetcher.CALLS == [("afqmc", True)] * 2
    info = run_cli("info", "afqmc", kernel=kernel)
    assert f"cached:           {home / 'mirror' / 'afqmc'}" in info.output
    listed = run_cli("list", "fetchers", kernel=kernel)
    assert listed.output.splitlines()[2].split()[:2] == ["lab-mirror", "lab-mirror"]


def test_with_two_fetchers_clue_fetcher_chooses(run_cli, isolated_kernel, tmp_path: Path, monkeypatch) -> None:
    isolated_kernel.register(classic, "clue-tasks-classic")
    isolated_kernel.register(mirror_fetcher.MirrorPlugin(), "lab-mirror")
    assert sorted(isolated_kernel.fetchers) == ["clue-data", "lab-mirror"]
    open_choice = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "a", kernel=isolated_kernel)
    assert open_choice.exit_code == 2
    assert open_choice.output == ("error: several fetchers can bring afqmc's files (clue-data, lab-mirror): "
                                  "set CLUE_FETCHER to one of them, or pass --data-dir / --sample\n")
    monkeypatch.setenv("CLUE_FETCHER", "lab-mirorr")
    typo = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "b", kernel=isolated_kernel)
    assert typo.exit_code == 2 and typo.output == ("error: CLUE_FETCHER='lab-mirorr': no such fetcher (installed: "
                                                   "clue-data, lab-mirror); did you mean 'lab-mirror'?\n")
    monkeypatch.setenv("CLUE_FETCHER", "lab-mirror")
    chosen = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "c", kernel=isolated_kernel)
    assert chosen.exit_code == 0, chosen.output
    assert mirror_fetcher.CALLS == [("afqmc", True)]


def test_a_fetcher_returning_no_folder_is_one_line_naming_it(run_cli, tmp_path: Path, monkeypatch) -> None:
    from clue_core.plugin import FetcherSpec, hookimpl

    class Broken:
        @hookimpl
        def clue_data_fetchers(self) -> list[FetcherSpec]:
            return [FetcherSpec(name="nowhere", help="-", fetch=lambda task, progress: tmp_path / "missing")]

    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "r", kernel=kernel_with((Broken(), "b")))
    assert result.exit_code == 2
    assert result.output.startswith("error: fetcher nowhere (plugin b): ") and "not a folder" in result.output
    assert result.output.count("\n") == 1


def test_a_fetcher_spec_naming_no_function_is_dropped_on_its_row() -> None:
    from clue_core.plugin import FetcherSpec, hookimpl

    class Bad:
        @hookimpl
        def clue_data_fetchers(self) -> list[FetcherSpec]:
            return [FetcherSpec(name="bad", help="-", fetch="no colon")]

    kernel = kernel_with((Bad(), "bad-plugin"))
    assert "bad" not in kernel.fetchers
    (row,) = [p for p in kernel.plugins if p.name == "bad-plugin"]
    assert row.status == "error" and "fetcher 'bad' dropped: fetch must be 'module:attr'" in row.error


# ------------------------------------------------------------------ the plugin's boundary


def test_clue_data_imports_only_the_plugin_api() -> None:
    package = ROOT / "plugins" / "clue-data" / "clue_data"
    imported = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert {m for m in imported if m.split(".")[0] == "clue_core"} == {"clue_core.plugin"}
    assert not {m for m in imported if m.split(".")[0].startswith("clue_") and m.split(".")[0] not in
                {"clue_core", "clue_data"}}  # and no other plugin


def test_the_kernel_has_no_downloader_and_the_hooks_stay_light() -> None:
    assert not (ROOT / "clue_core" / "download.py").exists()
    code = ("import sys, clue_data.hooks; "
            "print(sorted(m for m in ('click', 'urllib.request', 'clue_data.download', 'clue_data.cache') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
