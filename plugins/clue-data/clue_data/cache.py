"""The verified cache of official data: each task's archive downloaded and unpacked once.

Official archives are downloaded (:mod:`clue_data.download`: resumable, retried, checked
against the size and checksums the task declares in ``TaskSpec.source``) into
``clue_home()/downloads/`` and unpacked, safely (:mod:`clue_data.archive`), into
``clue_home()/data/<task>/``. The cache's lock (:func:`clue_data.locks.filling_cache`)
serialises processes that ask at once (ranks of ``accelerate launch``: one download serves
them all) and words a failure to write under the cache as the cache's, naming ``$CLUE_HOME``.
:func:`ensure_task_data` is this plugin's fetcher (``FetcherSpec.fetch``): what a run with no
``--data-dir`` and no ``--sample`` reads.
"""

from __future__ import annotations

from pathlib import Path, PurePath

from clue_core.plugin import DataError, TaskSpec, clue_home
from clue_data.archive import safe_extract
from clue_data.locks import filling_cache


def cached_task_dir(task: TaskSpec) -> Path:
    """Where :func:`ensure_task_data` keeps a task's extracted files (it may not exist yet)."""
    return clue_home() / "data" / task.name


def ensure_task_data(task: TaskSpec, *, progress: bool = True) -> Path:
    """The task's extracted official files, downloading and unpacking them on first use."""
    folder = cached_task_dir(task)
    if folder.is_dir():
        return folder
    if task.source is None:
        raise DataError(f"task {task.name} has no download source: get its files yourself and pass --data-dir")
    name = task.source.filename
    if not isinstance(name, str) or name in ("", ".", "..") or PurePath(name).name != name or "\\" in name:
        # it names the file under downloads/ and the lock under locks/: '../' would write outside the cache
        raise DataError(f"task {task.name}: its source's filename {name!r} is not a plain file name "
                        "(the file under the cache's downloads/)")
    with filling_cache(name):
        if not folder.is_dir():  # else another process finished while we waited
            from clue_data.download import download_source

            downloaded = download_source(task.source, clue_home() / "downloads", progress=progress)
            safe_extract(downloaded, folder)
    return folder
