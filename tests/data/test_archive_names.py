"""clue-data's safe_extract refuses a zip whose entry names cannot all be unpacked, naming the entry.

Two files of one name (a zip may hold them: which one a reader sees depends on the tool, so the zip's
content is ambiguous), a file that another entry uses as a folder, or a name the file system cannot
hold is the archive's fault, not the cache's: before these tests the first two were written half-way
and then blamed on the data cache (``cannot write to the data cache $CLUE_HOME (...): File exists``),
which sends the user to fix a folder that is fine.
"""

from __future__ import annotations

import io
import warnings
import zipfile
from pathlib import Path

import pytest

from clue_core.plugin import DataError
from clue_data.archive import safe_extract

DEV = b'{"sentence": "ok", "label": "100"}\n' * 3


def zip_of(path: Path, entries: list[tuple[str, bytes]]) -> Path:
    """A zip holding ``entries`` in order, repeated names included (``zip_bytes`` takes a mapping)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # "Duplicate name": the point of some of these zips
        for name, content in entries:
            archive.writestr(name, content)
    path.write_bytes(buffer.getvalue())
    return path


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([("t/dev.json", DEV), ("t/dev.json", b"other\n")], "refusing entry 't/dev.json': the archive holds it twice"),
        ([("t/dev.json", DEV), ("t//./dev.json", b"other\n")],
         "refusing entry 't//./dev.json': the archive holds it twice"),
        ([("t/dev.json", DEV), ("t/dev.json/x", b"1")],
         "refusing entry 't/dev.json/x': 't/dev.json' is a file in the archive, not a folder"),
        ([("t/dev.json/x", b"1"), ("t/dev.json", DEV)],
         "refusing entry 't/dev.json': 't/dev.json' is a folder in the archive, not a file"),
        ([("t/", b""), ("t", DEV)], "refusing entry 't': 't' is a folder in the archive, not a file"),
    ],
)
def test_entries_that_collide_are_refused_before_anything_is_written(tmp_path: Path, entries, message) -> None:
    path = zip_of(tmp_path / "bad.zip", [("t/train.json", DEV), *entries])
    with pytest.raises(DataError) as error:
        safe_extract(path, tmp_path / "cache" / "task")
    assert str(error.value) == f"{path}: {message}"
    assert error.value.__cause__ is None  # not a write failure: a cache must not take it for its own
    assert listing(tmp_path / "cache") == []


def test_a_directory_entry_repeated_is_no_collision(tmp_path: Path) -> None:
    path = zip_of(tmp_path / "ok.zip", [("t/", b""), ("t/", b""), ("t/train.json", DEV)])
    assert listing(safe_extract(path, tmp_path / "out")) == ["t", "t/train.json"]


def test_a_name_too_long_for_the_file_system_names_the_entry_not_the_cache(tmp_path: Path) -> None:
    name = "t/" + "a" * 300 + ".json"
    path = zip_of(tmp_path / "long.zip", [("t/train.json", DEV), (name, DEV)])
    with pytest.raises(DataError) as error:
        safe_extract(path, tmp_path / "cache" / "task")
    assert str(error.value).startswith(f"{path}: cannot unpack entry {name!r}: ")
    assert error.value.__cause__ is None
    assert listing(tmp_path / "cache") == []


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_colliding_user_zip_is_one_line_naming_the_zip_exit_2(run_cli, tmp_path: Path, command: str) -> None:
    path = zip_of(tmp_path / "tnews.zip", [("tnews_public/train.json", DEV), ("tnews_public/dev.json", DEV),
                                           ("tnews_public/dev.json/x", b"1")])
    args = ["run", "tnews", "--model", "baseline", "-o", tmp_path / "runs"] if command == "run" else ["check", "tnews"]
    result = run_cli(*args, "--data-dir", path)
    assert result.exit_code == 2, result.output
    expected = f"{path}: refusing entry 'tnews_public/dev.json/x': 'tnews_public/dev.json' is a file in the archive"
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0] and "data cache" not in result.output, result.output
    assert "Traceback" not in result.output and not (tmp_path / "runs").exists()
    assert listing(tmp_path / "clue-home" / "extracted") == []


def test_an_archive_of_too_many_entries_is_refused_before_anything_is_written(tmp_path: Path, monkeypatch) -> None:
    """A zip of many empty files is small but uses up inodes: refused by count (the cap lowered here)."""
    from clue_data import archive

    monkeypatch.setattr(archive, "MAX_ENTRIES", 5)
    path = zip_of(tmp_path / "many.zip", [("t/train.json", DEV)] + [(f"t/x/{i}", b"") for i in range(5)])
    with pytest.raises(DataError) as error:
        safe_extract(path, tmp_path / "cache" / "task")
    assert str(error.value) == (f"{path}: refusing the archive: it holds 6 entries, more than 5 "
                                "(clue_data.archive.MAX_ENTRIES); no CLUE archive holds that many")
    assert listing(tmp_path / "cache") == []
    fits = zip_of(tmp_path / "fits.zip", [("t/train.json", DEV)] + [(f"t/x/{i}", b"") for i in range(4)])
    assert len(listing(safe_extract(fits, tmp_path / "out"))) == 7  # t, t/x, 5 files
