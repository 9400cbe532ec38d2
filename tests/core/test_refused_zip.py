"""A user's zip whose data is refused leaves no copy in ``$CLUE_HOME/extracted/``.

The copy is keyed by the zip's sha256, so a refused one would never be used again (a
fixed zip has another checksum); but one that another run is still reading stays until
that run is done with it. It goes as the refusing process ends, so the runs here are
real processes (``python -m clue_core``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from clue_core import data
from clue_core.errors import InputError
from clue_core.kernel import Kernel
from clue_core.reading import read_split
from clue_data import opener

SAMPLE = Path(__file__).resolve().parents[2] / "plugins/clue-tasks-classic/clue_tasks_classic/samples/tnews"


def make_zip(path: Path, *, broken: bool) -> Path:
    """The tnews sample as ``tnews_public/`` in a zip; ``broken``: dev.json's line 2 is not JSON."""
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted(SAMPLE.iterdir()):
            text = file.read_text(encoding="utf-8")
            if broken and file.name == "dev.json":
                lines = text.splitlines(keepends=True)
                text = lines[0] + '{"sentence": broken}\n' + "".join(lines[2:])
            archive.writestr(f"tnews_public/{file.name}", text)
    return path


def extracted(home: Path) -> list[str]:
    folder = home / "extracted"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(data, "_OPENED", {})
    monkeypatch.setattr(opener, "_REFUSED", set())
    return tmp_path / "home"


def run(zip_path: Path, out: Path) -> subprocess.CompletedProcess:
    """``clue-core run tnews --model baseline --data-dir <zip>`` as its own process."""
    return subprocess.run([sys.executable, "-m", "clue_core", "run", "tnews", "--model", "baseline",
                           "--data-dir", str(zip_path), "-o", str(out)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


@pytest.mark.slow
def test_a_refused_zip_leaves_no_extraction_and_a_fixed_one_runs(home, tmp_path):
    bad = make_zip(tmp_path / "tnews_public.zip", broken=True)
    result = run(bad, tmp_path / "out")
    assert result.returncode == 2, result.stderr
    assert f"{bad}:tnews_public/dev.json:2" in result.stderr and "Traceback" not in result.stderr
    assert extracted(home) == []
    again = run(bad, tmp_path / "out")  # the same zip: refused the same way, dropped again
    assert again.returncode == 2 and f"{bad}:tnews_public/dev.json:2" in again.stderr
    assert extracted(home) == []
    make_zip(bad, broken=False)
    fixed = run(bad, tmp_path / "out")
    assert fixed.returncode == 0, fixed.stderr
    assert len(extracted(home)) == 1  # the good one is kept for the next run


HOLDER = """
import sys
from pathlib import Path
from clue_core import data
from clue_core.kernel import Kernel
kernel = Kernel()
data.resolve_task_data(kernel.task("tnews"), data_dir=Path(sys.argv[1]), openers=kernel.openers)
print("ready", flush=True)
sys.stdin.read()
"""


@pytest.mark.slow
def test_an_extraction_another_run_is_reading_stays_until_that_run_ends(home, tmp_path):
    bad = make_zip(tmp_path / "tnews_public.zip", broken=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(bad)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert holder.stdout.readline().strip() == "ready"
        [digest] = extracted(home)
        result = run(bad, tmp_path / "out")
        assert result.returncode == 2 and f"{bad}:tnews_public/dev.json:2" in result.stderr
        assert extracted(home) == [digest]  # the other run still reads it
        assert (home / "extracted" / digest / "tnews_public" / "train.json").is_file()
    finally:
        holder.communicate("", timeout=60)
    assert holder.returncode == 0
    assert run(bad, tmp_path / "out").returncode == 2
    assert extracted(home) == []  # nobody reads it now: dropped


def test_a_refused_copy_stays_readable_until_the_process_is_done_with_it(home, tmp_path):
    """``clue-core check`` reads every split after the first refusal, to report all of them."""
    kernel = Kernel()
    task = kernel.task("tnews")
    bad = make_zip(tmp_path / "tnews_public.zip", broken=True)
    folder = data.resolve_task_data(task, data_dir=bad, openers=kernel.openers)
    with pytest.raises(InputError, match=re.escape(f"{bad}:tnews_public/dev.json:2")):
        read_split(task, folder, "dev")
    assert len(read_split(task, folder, "train").examples) > 0
    other = data.resolve_task_data(task, data_dir=make_zip(tmp_path / "other.zip", broken=False),
                                   openers=kernel.openers)
    opener.drop_refused()  # what the process does as it ends (clue-data's opener registers it at exit)
    assert extracted(home) == [other.name]  # only the refused zip's copy goes
    opener.drop_refused()  # twice: nothing left to do
    assert extracted(home) == [other.name]


def make_partial_zip(path: Path, leave_out: str) -> Path:
    """The tnews sample as ``tnews_public/`` in a zip, without the file ``leave_out``."""
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted(SAMPLE.iterdir()):
            if file.name != leave_out:
                archive.writestr(f"tnews_public/{file.name}", file.read_text(encoding="utf-8"))
    return path


@pytest.mark.slow
def test_a_zip_without_a_required_file_names_the_zip_and_leaves_no_extraction(home, tmp_path):
    partial = make_partial_zip(tmp_path / "tnews_public.zip", leave_out="train.json")
    result = run(partial, tmp_path / "out")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (f"error: {partial}: task tnews split 'train' needs train.json "
                                     f"(looked in all sub-folders)")
    assert extracted(home) == []
    assert not (tmp_path / "out").exists()


def test_a_missing_file_names_the_zip_and_only_a_required_split_drops_the_copy(home, tmp_path):
    from clue_core.errors import DataError

    kernel = Kernel()
    task = kernel.task("tnews")
    folder = data.resolve_task_data(task, data_dir=make_partial_zip(tmp_path / "t.zip", leave_out="test1.0.json"),
                                    openers=kernel.openers)
    with pytest.raises(DataError, match=re.escape(f"{tmp_path / 't.zip'}: task tnews split 'test1.0' needs")):
        read_split(task, folder, "test1.0")  # an optional test version: the run goes on without it
    assert not opener._REFUSED
    (folder / "tnews_public" / "dev.json").unlink()
    with pytest.raises(DataError, match=re.escape(f"{tmp_path / 't.zip'}: task tnews split 'dev' needs")):
        read_split(task, folder, "dev")
    assert sorted(opener._REFUSED) == [str(folder)]
