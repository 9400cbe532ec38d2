"""The data layer: errors in a user's zip (--data-dir) name the zip and its member, not the cache copy."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from clue_core import data
from clue_core.data import describe_input_error, display_path, find_file
from clue_core.errors import DataError, InputError
from clue_core.jsonio import iter_jsonl

try:
    from tests.support.data_tasks import TNEWS, isolated_home, resolve_task_data
    from tests.support.local_http import zip_bytes
except ModuleNotFoundError:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.data_tasks import TNEWS, isolated_home, resolve_task_data
    from tests.support.local_http import zip_bytes


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, no mirror override, no waiting between retries, no remembered user zips."""
    return isolated_home(tmp_path, monkeypatch)


# ------------------------------------------------------------------ errors in a user's zip name the zip


TNEWS_DEV = b'{"sentence": "ok", "label": "100"}\n' * 11 + b'{"sentence": broken}\n'
TNEWS_ZIP = zip_bytes({"tnews_public/train.json": b"{}\n", "tnews_public/dev.json": TNEWS_DEV})


def test_errors_in_a_user_zip_name_the_zip_and_member(tmp_path: Path, home: Path) -> None:
    user_zip = tmp_path / "tnews_public.zip"
    user_zip.write_bytes(TNEWS_ZIP)
    folder = resolve_task_data(TNEWS, data_dir=user_zip)
    dev = find_file(folder, "dev.json")
    with pytest.raises(InputError) as caught:
        list(iter_jsonl(dev))
    assert str(caught.value).startswith(f"{dev}:12: ")  # what the reader knows: the cache copy

    described = describe_input_error(caught.value)
    assert str(described) == f"{user_zip}:tnews_public/dev.json:12: {caught.value.reason}"
    assert (described.path, described.line, described.reason) == (
        f"{user_zip}:tnews_public/dev.json", 12, caught.value.reason
    )
    assert display_path(folder) == str(user_zip)
    with pytest.raises(DataError, match=re.escape(f"{user_zip}: no file named 'test.json'")):
        find_file(folder, "test.json")


def test_user_zip_mapping_survives_reuse_and_keeps_field_and_record(tmp_path: Path, home: Path) -> None:
    parent = tmp_path / "clue"
    parent.mkdir()
    (parent / "tnews_public.zip").write_bytes(TNEWS_ZIP)
    resolve_task_data(TNEWS, data_dir=parent)
    data._OPENED.clear()  # as in a new process: the unpacked copy is reused from the cache
    folder = resolve_task_data(TNEWS, data_dir=parent)
    error = InputError(folder / "tnews_public" / "dev.json", "missing", line=3, field="label", record="id 7")
    assert str(describe_input_error(error)) == (
        f"{parent / 'tnews_public.zip'}:tnews_public/dev.json:3 (id 7): field 'label': missing"
    )


def test_errors_in_other_files_are_unchanged(tmp_path: Path, home: Path) -> None:
    error = InputError(tmp_path / "dev.json", "missing", line=3, field="label")
    assert describe_input_error(error) is error
    assert display_path(tmp_path / "dev.json") == str(tmp_path / "dev.json")
