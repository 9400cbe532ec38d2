"""The data layer through the CLI: clue-data's `clue-core download` against a served archive, `run --data-dir`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from clue_core.hookspecs import hookimpl
from clue_data import download as download_module

try:
    from tests.support.data_tasks import AFQMC, AFQMC_FILES, AFQMC_ZIP, REAL_SAMPLES, listing, registered, task_for
    from tests.support.local_http import LocalServer, zip_bytes
except ModuleNotFoundError:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.data_tasks import AFQMC, AFQMC_FILES, AFQMC_ZIP, REAL_SAMPLES, listing, registered, task_for
    from tests.support.local_http import LocalServer, zip_bytes


# ------------------------------------------------------------------ through the CLI


def test_cli_download_uses_clue_data_url_and_reports_mismatch_in_one_line(
    run_cli, isolated_kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tampered = task_for("tampered", "afqmc_public.zip", AFQMC_ZIP, sha256="0" * 64)

    class Plugin:
        @hookimpl
        def clue_tasks(self) -> list:
            return [registered(AFQMC), registered(tampered)]

    isolated_kernel.register(Plugin(), "data-test-plugin")
    monkeypatch.setattr(download_module, "BACKOFF_SECONDS", 0.0)
    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        ok = run_cli("download", "afqmc", kernel=isolated_kernel)
        bad = run_cli("download", "tampered", kernel=isolated_kernel)

    home = tmp_path / "clue-home"  # where the run_cli fixture points CLUE_HOME
    assert ok.exit_code == 0, ok.output
    assert ok.output.strip() == f"afqmc: {home / 'data' / 'afqmc'}"
    assert (home / "data" / "afqmc" / "dev.json").read_bytes() == AFQMC_FILES["dev.json"]
    assert bad.exit_code == 2
    assert bad.output.count("\n") == 1 and bad.output.startswith("error: download ")
    assert f"sha256 mismatch: expected {'0' * 64}, got {AFQMC.source.sha256}" in bad.output
    assert "Traceback" not in bad.output


@pytest.mark.skipif(not REAL_SAMPLES.is_dir(), reason=f"real CLUE sample zips not found at {REAL_SAMPLES}")
def test_cli_run_with_a_parent_data_dir_of_official_zips(run_cli, tmp_path: Path) -> None:
    result = run_cli(
        "run", "afqmc", "cmnli", "--model", "baseline", "--data-dir", REAL_SAMPLES, "-o", tmp_path / "runs"
    )
    assert result.exit_code == 0, result.output
    for task in ("afqmc", "cmnli"):
        assert (tmp_path / "runs" / task / "submission" / f"{task}_predict.json").is_file()
    missing = run_cli("run", "afqmc", "--model", "baseline", "--data-dir", tmp_path / "nope")
    assert missing.exit_code == 2
    assert f"error: {tmp_path / 'nope'}: no such file or folder" in missing.output


@pytest.mark.parametrize(
    ("archive_bytes", "message"),
    [
        (AFQMC_ZIP[: len(AFQMC_ZIP) // 2], "corrupt"),
        (zip_bytes({"train.json": b"{}\n", "../../evil.txt": b"pwned"}), "'../../evil.txt'"),
    ],
    ids=["truncated", "traversal"],
)
def test_cli_download_of_a_served_bad_archive_keeps_nothing(
    run_cli, isolated_kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, archive_bytes: bytes, message: str
) -> None:
    """The archive matches its published checksum (a bad official upload), so only extraction can catch it."""
    served = task_for("afqmc", "afqmc_public.zip", archive_bytes)

    class Plugin:
        @hookimpl
        def clue_tasks(self) -> list:
            return [registered(served)]

    isolated_kernel.register(Plugin(), "served-plugin")
    with LocalServer({"afqmc_public.zip": archive_bytes}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        result = run_cli("download", "afqmc", kernel=isolated_kernel)
    home = tmp_path / "clue-home"
    assert result.exit_code == 2 and result.output.startswith("error: ") and message in result.output
    assert "Traceback" not in result.output
    assert not (home / "data" / "afqmc").exists()
    assert listing(home / "locks") == []
    assert not (tmp_path / "evil.txt").exists() and not (home / "evil.txt").exists()


def test_cli_download_all_fetches_every_task_with_an_archive_and_nothing_else(
    run_cli, isolated_kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clue_core.specs import TaskSpec

    unsourced = TaskSpec(name="unsourced", kind="classification", description="no archive",
                         reader="clue_core.data:find_file")

    class Plugin:
        @hookimpl
        def clue_tasks(self) -> list:
            return [registered(AFQMC), unsourced]

    isolated_kernel.register(Plugin(), "all-plugin")
    assert {"afqmc", "unsourced"} <= set(isolated_kernel.tasks)
    nothing = run_cli("download", kernel=isolated_kernel)
    assert nothing.exit_code == 2 and nothing.output == "error: name the tasks to download, or pass --all\n"
    with LocalServer({"afqmc_public.zip": AFQMC_ZIP}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        every = run_cli("download", "--all", kernel=isolated_kernel)
        requested = [r.path for r in server.requests]
    home = tmp_path / "clue-home"
    assert every.exit_code == 0, every.output
    assert every.output == f"afqmc: {home / 'data' / 'afqmc'}\n" and requested == ["afqmc_public.zip"]
    assert listing(home / "data") == ["afqmc", *(f"afqmc/{name}" for name in sorted(AFQMC_FILES))]
