"""A user's zip unpacked earlier into the cache, whose copy has since lost or cut short a file, is
unpacked again rather than read as the zip.

The copy (``$CLUE_HOME/extracted/<sha256>``) is keyed by the zip's content and reused as long as it
is there; a file of it deleted or truncated (a cleanup script, a user tidying the cache) made the run
refuse the zip for a file the zip has (``tnews.zip: task tnews split 'dev' needs dev.json``) or read
the cut copy as the user's data.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

DEV = b'{"sentence": "ok", "label": "100"}\n' * 3


def user_zip(tmp_path: Path) -> Path:
    path = tmp_path / "tnews_public.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("tnews_public/train.json", DEV)
        archive.writestr("tnews_public/dev.json", DEV)
    return path


@pytest.mark.parametrize("damage", ["delete", "truncate"])
def test_a_damaged_copy_of_a_users_zip_is_unpacked_again(run_cli, tmp_path: Path, damage: str) -> None:
    path = user_zip(tmp_path)
    first = run_cli("run", "tnews", "--model", "baseline", "--data-dir", path, "-o", tmp_path / "a")
    assert first.exit_code == 0, first.output
    (copy,) = (tmp_path / "clue-home" / "extracted").iterdir()
    dev = copy / "tnews_public" / "dev.json"
    if damage == "delete":
        dev.unlink()
    else:
        dev.write_bytes(DEV[: len(DEV) // 3])

    again = run_cli("run", "tnews", "--model", "baseline", "--data-dir", path, "-o", tmp_path / "b")

    assert again.exit_code == 0, again.output
    assert dev.read_bytes() == DEV
    metrics = json.loads((tmp_path / "b" / "tnews" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"] == {"train": 3, "dev": 3}  # read from the whole file
    assert [p.name for p in (tmp_path / "clue-home" / "extracted").iterdir()] == [copy.name]


def test_a_damaged_copy_another_run_reads_is_one_line_and_kept(run_cli, tmp_path: Path) -> None:
    """Unpacking again would pull the copy from under the other run: one line saying to wait, exit 2."""
    import os
    import subprocess
    import sys

    path = user_zip(tmp_path)
    assert run_cli("run", "tnews", "--model", "baseline", "--data-dir", path, "-o", tmp_path / "a").exit_code == 0
    (copy,) = (tmp_path / "clue-home" / "extracted").iterdir()
    (copy / "tnews_public" / "dev.json").unlink()
    from clue_data import archive

    os.close(archive._HELD.pop(os.path.abspath(copy)))  # this process's hold from the first run: as a new process
    reader = subprocess.Popen([sys.executable, "-c", "import sys; from clue_data import archive; "
                               "assert archive.hold(sys.argv[1]); print('holding', flush=True); sys.stdin.read()",
                               str(copy)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline() == "holding\n"
        result = run_cli("run", "tnews", "--model", "baseline", "--data-dir", path, "-o", tmp_path / "b")
    finally:
        reader.communicate(input="")
    assert result.exit_code == 2 and result.output.splitlines() == [
        f"error: {path}: its unpacked copy {copy} lacks files of the zip, and another run is reading it: run again "
        "when that run has ended"], result.output
    assert (copy / "tnews_public" / "train.json").is_file() and not (tmp_path / "b").exists()
