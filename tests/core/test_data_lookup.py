"""The data layer's lookup: resolve_task_data and --data-dir, the bundled sample, find_file, file_checksums.

A --data-dir may be the task's folder, a zip of it, or a parent folder of several tasks' folders and zips.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import sys
from pathlib import Path

import pytest

from clue_core.data import file_checksums, find_file
from clue_core.errors import DataError

try:
    from tests.support.data_tasks import (
        AFQMC,
        AFQMC_FILES,
        AFQMC_ZIP,
        CMNLI,
        CMNLI_ZIP,
        REAL_SAMPLES,
        TNEWS,
        Task,
        isolated_home,
        listing,
        resolve_task_data,
    )
except ModuleNotFoundError:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.data_tasks import (
        AFQMC,
        AFQMC_FILES,
        AFQMC_ZIP,
        CMNLI,
        CMNLI_ZIP,
        REAL_SAMPLES,
        TNEWS,
        Task,
        isolated_home,
        listing,
        resolve_task_data,
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, no mirror override, no waiting between retries, no remembered user zips."""
    return isolated_home(tmp_path, monkeypatch)


# ------------------------------------------------------------------ resolve_task_data / --data-dir


def test_data_dir_as_the_task_folder(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "my-afqmc"
    folder.mkdir()
    (folder / "train.json").write_bytes(AFQMC_FILES["train.json"])
    assert resolve_task_data(AFQMC, data_dir=folder) == folder
    assert listing(home) == []


def test_data_dir_as_zip_is_extracted_once_keyed_by_sha256(tmp_path: Path, home: Path) -> None:
    user_zip = tmp_path / "whatever.zip"
    user_zip.write_bytes(CMNLI_ZIP)
    folder = resolve_task_data(CMNLI, data_dir=user_zip)
    assert folder == home / "extracted" / hashlib.sha256(CMNLI_ZIP).hexdigest()
    assert find_file(folder, "dev.json") == folder / "cmnli_public" / "dev.json"
    (folder / "marker").write_text("kept")
    assert resolve_task_data(CMNLI, data_dir=user_zip) == folder
    assert (folder / "marker").exists()  # reused, not extracted again
    assert listing(home / "locks") == []


def test_data_dir_as_parent_folder_serves_several_tasks(tmp_path: Path, home: Path) -> None:
    parent = tmp_path / "clue"
    (parent / "AFQMC").mkdir(parents=True)
    (parent / "AFQMC" / "train.json").write_bytes(AFQMC_FILES["train.json"])
    (parent / "cmnli_public.zip").write_bytes(CMNLI_ZIP)
    tnews = Task(name="tnews")

    assert resolve_task_data(AFQMC, data_dir=parent) == parent / "AFQMC"
    cmnli = resolve_task_data(CMNLI, data_dir=parent)
    assert (cmnli / "cmnli_public" / "train.json").is_file()
    with pytest.raises(DataError, match=r"no tnews data here \(looked for tnews/ or tnews.zip or the files"):
        resolve_task_data(tnews, data_dir=parent)  # AFQMC's train.json must not be taken for TNEWS's


def test_parent_holding_only_another_tasks_folder_is_not_that_data(tmp_path: Path, home: Path) -> None:
    parent = tmp_path / "clue"
    (parent / "tnews").mkdir(parents=True)
    for name, content in AFQMC_FILES.items():
        (parent / "tnews" / name).write_bytes(content)

    with pytest.raises(DataError) as error:
        resolve_task_data(AFQMC, data_dir=parent)
    assert str(error.value).startswith(f"{parent}: no afqmc data here (looked for afqmc/ or afqmc_public/ or ")
    assert f"{parent / 'tnews'} is not named after afqmc: pass it as --data-dir" in str(error.value)
    assert resolve_task_data(TNEWS, data_dir=parent) == parent / "tnews"
    assert resolve_task_data(AFQMC, data_dir=parent / "tnews") == parent / "tnews"  # the user's explicit choice


def test_sub_folder_named_after_the_task_still_counts(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "download"
    (folder / "AFQMC-v1.0").mkdir(parents=True)
    (folder / "AFQMC-v1.0" / "train.json").write_bytes(AFQMC_FILES["train.json"])
    assert resolve_task_data(AFQMC, data_dir=folder) == folder
    assert find_file(folder, "train.json") == folder / "AFQMC-v1.0" / "train.json"


@pytest.mark.skipif(not REAL_SAMPLES.is_dir(), reason=f"real CLUE sample zips not found at {REAL_SAMPLES}")
@pytest.mark.parametrize(("task", "nested"), [(AFQMC, "dummy_data"), (CMNLI, "dummy_data/cmnli_public")])
def test_real_official_zips_in_a_parent_folder(home: Path, task: Task, nested: str) -> None:
    folder = resolve_task_data(task, data_dir=REAL_SAMPLES)  # finds <task>.zip there and unpacks it
    assert folder.parent == home / "extracted"
    for name in task.data_files:
        assert find_file(folder, name) == folder / nested / name
    assert not [p for p in listing(folder) if "MACOSX" in p or "DS_Store" in p]


def test_data_dir_as_unzipped_official_folder_name(tmp_path: Path, home: Path) -> None:
    (tmp_path / "cmnli_public").mkdir()
    (tmp_path / "cmnli_public" / "train.json").write_text("{}\n")
    assert resolve_task_data(CMNLI, data_dir=tmp_path) == tmp_path / "cmnli_public"


def test_data_dir_problems_name_the_path(tmp_path: Path, home: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(DataError, match=re.escape(f"{missing}: no such file or folder")):
        resolve_task_data(AFQMC, data_dir=missing)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(DataError, match="not a zip"):
        resolve_task_data(AFQMC, data_dir=text)
    broken = tmp_path / "broken.zip"
    broken.write_bytes(AFQMC_ZIP[:100])
    with pytest.raises(DataError, match=r"broken\.zip: not a readable zip"):
        resolve_task_data(AFQMC, data_dir=broken)


def test_sample_uses_the_bundled_folder(home: Path) -> None:
    import email.mime

    task = dataclasses.replace(AFQMC, sample="email:mime")
    assert resolve_task_data(task, sample=True) == Path(email.mime.__path__[0])
    with pytest.raises(DataError, match="not both"):
        resolve_task_data(task, sample=True, data_dir=Path("."))


# ------------------------------------------------------------------ find_file, file_checksums


def test_find_file_skips_junk_and_prefers_the_shallowest(tmp_path: Path) -> None:
    for relative in ("__MACOSX/train.json", "a/b/train.json", "a/b/c/train.json", "x/.DS_Store"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(relative)
    assert find_file(tmp_path, "train.json") == tmp_path / "a" / "b" / "train.json"
    assert find_file(tmp_path, ".DS_Store", required=False) is None
    with pytest.raises(DataError, match=r"no file named 'dev\.json'"):
        find_file(tmp_path, "dev.json")


def test_file_checksums(tmp_path: Path) -> None:
    (tmp_path / "d" / "__MACOSX").mkdir(parents=True)
    (tmp_path / "d" / "train.json").write_bytes(b"abc")
    (tmp_path / "d" / "__MACOSX" / "._train.json").write_bytes(b"junk")
    (tmp_path / "one.json").write_bytes(b"xyz")
    sums = file_checksums([tmp_path / "d", str(tmp_path / "one.json")])
    assert sums == {
        str(tmp_path / "d" / "train.json"): hashlib.sha256(b"abc").hexdigest(),
        str(tmp_path / "one.json"): hashlib.sha256(b"xyz").hexdigest(),
    }
    with pytest.raises(DataError, match=r"missing\.json"):
        file_checksums([tmp_path / "missing.json"])


# ------------------------------------------------------------------ a task's own folder with a wrapper folder


def test_the_tasks_own_folder_with_its_files_in_a_wrapper_folder_is_read(tmp_path):
    """The real sample zips unpack to <task>/dummy_data/…: passing <task>/ works, as the zip does."""
    from clue_core.data import resolve_task_data
    from clue_core.plugin import TaskSpec

    task = TaskSpec("afqmc", "classification", "d", "m:r", data_files=("train.json", "dev.json"))
    inner = tmp_path / "afqmc" / "dummy_data"
    inner.mkdir(parents=True)
    for name in ("train.json", "dev.json"):
        (inner / name).write_text("{}\n")
    assert resolve_task_data(task, data_dir=tmp_path / "afqmc") == tmp_path / "afqmc"
    other = tmp_path / "parent"
    (other / "tnews").mkdir(parents=True)
    (other / "tnews" / "train.json").write_text("{}\n")
    import pytest

    from clue_core.errors import DataError

    with pytest.raises(DataError, match="no afqmc data here"):
        resolve_task_data(task, data_dir=other)
