"""The data lookup asks the data plugins once, last (issue 30): a folder the user gives is looked up by the
kernel alone, asking no plugin; an archive (given, or found as ``<task>.zip`` in the folder given) is one
call of :func:`clue_core.fetching.source_folder`, and so is a fetcher's folder."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from clue_core import data, fetching
from clue_core.errors import DataError, PluginError

try:
    from tests.support.data_tasks import AFQMC, AFQMC_FILES, CMNLI, CMNLI_ZIP, isolated_home, resolve_task_data
except ModuleNotFoundError:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.data_tasks import AFQMC, AFQMC_FILES, CMNLI, CMNLI_ZIP, isolated_home, resolve_task_data


@pytest.fixture
def asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path | None]:
    """The archive each call of ``source_folder`` was given (None: the fetcher's), in an empty cache."""
    isolated_home(tmp_path, monkeypatch)
    calls: list[Path | None] = []
    source_folder = fetching.source_folder

    def counted(task: Any, archive: Path | None, *args: Any, **kwargs: Any) -> Any:
        calls.append(archive)
        return source_folder(task, archive, *args, **kwargs)

    monkeypatch.setattr(fetching, "source_folder", counted)
    return calls


def test_a_users_folder_asks_no_plugin(tmp_path: Path, asked: list[Path | None]) -> None:
    folder = tmp_path / "my-afqmc"
    folder.mkdir()
    (folder / "train.json").write_bytes(AFQMC_FILES["train.json"])
    assert resolve_task_data(AFQMC, data_dir=folder) == folder
    assert asked == []


def test_a_users_archive_is_one_question_and_its_files_are_shown_as_the_archives(tmp_path: Path,
                                                                                 asked: list[Path | None]) -> None:
    parent = tmp_path / "clue"
    parent.mkdir()
    (parent / "cmnli.zip").write_bytes(CMNLI_ZIP)
    folder = resolve_task_data(CMNLI, data_dir=parent)
    assert asked == [parent / "cmnli.zip"]
    assert data.display_path(folder / "cmnli_public" / "dev.json") == f"{parent / 'cmnli.zip'}:cmnli_public/dev.json"
    with pytest.raises(DataError, match="no such file or folder"):
        resolve_task_data(CMNLI, data_dir=tmp_path / "missing.zip")
    assert asked == [parent / "cmnli.zip"]  # refused by the kernel's own lookup: no plugin asked


def test_a_fetchers_folder_holding_the_task_files_only_as_archive_junk_blames_the_fetcher(
        tmp_path: Path, asked: list[Path | None]) -> None:
    """The check of a fetcher's folder is the data lookup's, junk-aware as the readers are: a ``train.json``
    only under ``__MACOSX/`` is none of the task's files."""
    folder = tmp_path / "mirror"
    (folder / "__MACOSX").mkdir(parents=True)
    (folder / "__MACOSX" / "train.json").write_bytes(AFQMC_FILES["train.json"])
    lab = fetching.FetcherSpec("lab", "a test stand-in", lambda task, progress: folder)
    with pytest.raises(PluginError, match=rf"^fetcher lab: {folder} holds none of afqmc's files \("):
        data.resolve_task_data(AFQMC, fetchers={"lab": lab})
    (folder / "dev.json").write_bytes(AFQMC_FILES["train.json"])
    assert data.resolve_task_data(AFQMC, fetchers={"lab": lab}) == folder
    assert asked == [None, None]
