"""The tasks and archives the data-layer tests (``tests/core/test_data_*.py``, ``tests/data/``) share.

Small AFQMC / CMNLI zips in the official layouts (with macOS junk to skip), the task objects
that describe them, the real ``TaskSpec`` a CLI test registers, and the isolated cache home.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

import pytest

from clue_core import data
from clue_core.specs import DataSource as Source  # the real one: the data layer reads its fields
from clue_data import download as download_module
from clue_data.hooks import ZIP
from tests.support.local_http import zip_bytes

OPENERS = {ZIP.name: ZIP}
"""clue-data's zip opener, as a kernel with clue-data installed registers it (``kernel.openers``)."""
REAL_SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "real-samples"
OFFICIAL = "https://storage.googleapis.com/cluebenchmark/tasks/"

# Incompressible filler so the archives are a few KB and a dropped connection lands mid-file.
FILLER = random.Random(7).randbytes(6000)

AFQMC_FILES = {
    "train.json": b'{"sentence1": "a", "sentence2": "b", "label": "0"}\n',
    "dev.json": b'{"sentence1": "c", "sentence2": "d", "label": "1"}\n',
    "test.json": b'{"id": 0, "sentence1": "e", "sentence2": "f"}\n' + FILLER,
}
AFQMC_ZIP = zip_bytes(
    {
        **AFQMC_FILES,
        "__MACOSX/._train.json": b"resource fork",
        "._dev.json": b"resource fork",
        ".DS_Store": b"finder",
    }
)
CMNLI_ZIP = zip_bytes(
    {
        "cmnli_public/": b"",
        "cmnli_public/train.json": b'{"sentence1": "a", "sentence2": "b", "label": "neutral"}\n',
        "cmnli_public/dev.json": b'{"sentence1": "c", "sentence2": "d", "label": "-"}\n',
        "cmnli_public/test.json": b'{"id": 0, "sentence1": "e", "sentence2": "f"}\n',
        "cmnli_public/.DS_Store": b"finder",
        "__MACOSX/cmnli_public/._train.json": b"resource fork",
    }
)


@dataclass(frozen=True)
class Task:
    """The attributes of a TaskSpec that the data layer reads (and nothing else)."""

    name: str
    source: Source | None = None
    data_files: tuple[str, ...] = ("train.json", "dev.json", "test.json")
    sample: str | None = None
    test_versions: tuple[object, ...] = ()
    splits: tuple[str, ...] = ("train", "dev")


def task_for(name: str, filename: str, archive_bytes: bytes, **source_changes: object) -> Task:
    """A task whose source describes ``archive_bytes`` exactly (then ``source_changes`` applied)."""
    source = Source(
        url=OFFICIAL + filename,
        filename=filename,
        size=len(archive_bytes),
        sha256=hashlib.sha256(archive_bytes).hexdigest(),
    )
    return Task(name=name, source=dataclasses.replace(source, **source_changes))


AFQMC = task_for("afqmc", "afqmc_public.zip", AFQMC_ZIP)
CMNLI = task_for("cmnli", "cmnli_public.zip", CMNLI_ZIP)
TNEWS = Task(name="tnews", source=Source(url=OFFICIAL + "tnews_public.zip", filename="tnews_public.zip"))


def registered(task: Task):
    """The real TaskSpec the kernel needs for CLI tests, built from a test task."""
    from clue_core.specs import DataSource, TaskSpec

    assert task.source is not None
    source = DataSource(url=task.source.url, filename=task.source.filename, size=task.source.size,
                        sha256=task.source.sha256)
    return TaskSpec(name=task.name, kind="classification", description="test task",
                    reader="clue_core.data:find_file", data_files=task.data_files, source=source)


def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, no mirror override, no waiting between retries, no remembered user archives."""
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLUE_DATA_URL", raising=False)
    monkeypatch.setattr(download_module, "BACKOFF_SECONDS", 0.0)
    monkeypatch.setattr(data, "_OPENED", {})
    return tmp_path / "home"


def resolve_task_data(task: object, **kwargs: object) -> Path:
    """The kernel's data lookup as a run with clue-data installed calls it: clue-data's zip opener given
    (``openers=`` another mapping, ``{}`` for none), so a user's zip is unpacked as a run's would be."""
    kwargs.setdefault("openers", OPENERS)
    return data.resolve_task_data(task, **kwargs)  # type: ignore[arg-type]


def listing(folder: Path) -> list[str]:
    """Every file and folder below ``folder`` (relative, sorted); [] when it does not exist."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []

