"""Where a task's files come from: bundled samples, the user's folder or archive, or a fetcher.

A user's own archive (``--data-dir x.zip``) goes to the opener plugin that takes it (the
``clue_data_openers`` hook, :func:`clue_core.fetching.source_folder`; ``clue-data`` unpacks zips,
safely, into ``clue_home()/extracted/<sha256>/``) and comes back a folder. With no folder and no
sample, a fetcher plugin (the ``clue_data_fetchers`` hook; ``clue-data`` downloads the official
archives) brings the task's files. This module decides which folder a task reads and words
failures for the user: every one is a :class:`DataError` with one line the CLI can print. It asks
:mod:`clue_core.fetching` once, last, for a source it does not read itself (an archive or a fetcher).
Unpacking, caching and their locks are the plugins' (issue 30): the kernel writes nothing here.

Files an opener made of a user's archive are the user's files: :func:`display_path` and
:func:`describe_input_error` show them as ``<their archive>:<member>`` rather than as the
copy nobody knows about; when such a file's data is refused, the opener hears of it
(:func:`mark_refused`), since a fixed archive is a new one and that copy will not be read again.

Stdlib only: the CLI imports this module for ``clue-core list``, which must stay fast.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.resources
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from clue_core import fetching
from clue_core.errors import ClueError, DataError, InputError, PluginError

JUNK_PARTS = ("__MACOSX",)
JUNK_NAMES = (".DS_Store",)

if TYPE_CHECKING:
    from clue_core.fetching import FetcherSpec, OpenerSpec, Owners
    from clue_core.specs import TaskSpec

__all__ = [
    "JUNK_NAMES",
    "JUNK_PARTS",
    "clue_home",
    "describe_input_error",
    "display_path",
    "file_checksums",
    "file_digests",
    "find_file",
    "is_junk",
    "mark_refused",
    "resolve_task_data",
    "sample_dir",
]


def is_junk(path: Path | PurePosixPath) -> bool:
    """Archive debris (macOS resource forks, Finder files) in a fetcher's, an opener's or a user's
    folder, which the readers, the checksums and the openers' unpacking all ignore alike."""
    return any(part in JUNK_PARTS for part in path.parts) or path.name in JUNK_NAMES or path.name.startswith("._")


def find_file(root: Path, name: str, *, required: bool = True) -> Path | None:
    """Find ``name`` anywhere below ``root`` (official zips nest differently), skipping junk.

    The shallowest match wins, so ``cmnli_public/train.json`` is found from the zip root.
    """
    root = Path(root)
    direct = root / name
    if direct.is_file():
        return direct
    matches = sorted(
        (p for p in root.rglob(name) if p.is_file() and not is_junk(p.relative_to(root))),
        key=lambda p: (len(p.relative_to(root).parts), str(p)),
    )
    if matches:
        return matches[0]
    if required:
        raise DataError(f"{display_path(root)}: no file named {name!r} (looked in all sub-folders)")
    return None


def clue_home() -> Path:
    """The cache directory: ``$CLUE_HOME``, else ``$XDG_CACHE_HOME/clue-core``, else ``~/.cache/clue-core``."""
    if os.environ.get("CLUE_HOME"):
        return Path(os.environ["CLUE_HOME"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "clue-core"


def sample_dir(task: TaskSpec) -> Path:
    """The bundled sample folder of a task (``TaskSpec.sample = "package:relative/dir"``)."""
    if not task.sample:
        raise DataError(f"task {task.name} ships no bundled sample")
    package, _, relative = task.sample.partition(":")
    path = Path(str(importlib.resources.files(package).joinpath(relative)))
    if not path.is_dir():
        raise DataError(f"task {task.name}: bundled sample folder {path} is missing")
    return path


def file_digests(path: Path, algorithms: Iterable[str]) -> dict[str, str]:
    """Hex digests of a file for several algorithms, reading it once (archives can be 140 MB)."""
    hashers = {name: hashlib.new(name) for name in algorithms}
    with Path(path).open("rb") as handle:
        while chunk := handle.read(1 << 20):
            for hasher in hashers.values():
                hasher.update(chunk)
    return {name: hasher.hexdigest() for name, hasher in hashers.items()}


def file_checksums(paths: Iterable[str | Path]) -> dict[str, str]:
    """sha256 of each file (folders expand to their non-junk files), for the run manifest."""
    result: dict[str, str] = {}
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and not is_junk(p.relative_to(path)))
        elif path.is_file():
            files = [path]
        else:
            raise DataError(f"{path}: no such file or folder (cannot compute its checksum)")
        for file in files:
            try:
                result[str(file)] = file_digests(file, ["sha256"])["sha256"]
            except OSError as exc:
                raise DataError(f"{file}: cannot read ({exc.strerror})") from None
    return result


# --------------------------------------------------------------------------- user archives in messages

_OPENED: dict[str, tuple[Path, OpenerSpec, Owners | None]] = {}
"""Absolute path of a folder an opener made of a user's archive -> that archive as the user named
it, the opener and the kernel's ``owner`` map (to name the opener's plugin)."""


def display_path(path: str | Path) -> str:
    """``path`` as the user should see it in a message.

    A file an opener made of a user's ``--data-dir`` archive (in this process) is shown as
    ``<archive>:<member>``, e.g. ``/home/u/tnews_public.zip:tnews_public/dev.json``, and the
    opened folder itself as the archive; any other path is returned unchanged.
    """
    absolute = os.path.abspath(path)
    for root, (archive_path, _, _) in _OPENED.items():
        if absolute == root:
            return str(archive_path)
        if absolute.startswith(root + os.sep):
            return f"{archive_path}:{PurePosixPath(*Path(absolute[len(root) + 1 :]).parts)}"
    return str(path)


def describe_input_error(exc: InputError) -> InputError:
    """``exc`` naming the user's archive and member instead of the opened copy it was read from.

    For the runner: wrap reading a task's data with
    ``except InputError as exc: raise data.describe_input_error(exc) from None`` so a
    message reads ``/home/u/tnews_public.zip:tnews_public/dev.json:12: ...``. Line, field,
    record and reason are kept; ``exc`` itself is returned when its file is not from an archive.
    """
    shown = display_path(exc.path)
    if shown == exc.path:
        return exc
    mark_refused(exc.path)
    return InputError(shown, exc.reason, line=exc.line, field=exc.field, record=exc.record)


def mark_refused(path: str) -> None:
    """Tell the opener of the user's archive that ``path`` is in that its data was refused, so that it
    can drop its copy (clue-data does as the process ends: a caller such as ``clue-core check`` goes on
    reading the other files to report their problems too). An opener failing at this is not shown:
    the refusal's own message matters more."""
    absolute = os.path.abspath(path)
    for root, (_, opener, owners) in _OPENED.items():
        if absolute == root or absolute.startswith(root + os.sep):
            with contextlib.suppress(ClueError):
                fetching.refused(opener, Path(root), owners)
            return


# --------------------------------------------------------------------------- choosing the folder


def resolve_task_data(
    task: TaskSpec,
    *,
    data_dir: Path | None = None,
    sample: bool = False,
    fetchers: Mapping[str, FetcherSpec] | None = None,
    download: bool = True,
    owners: Mapping[tuple[str, str], str] | None = None,
    openers: Mapping[str, OpenerSpec] | None = None,
) -> Path:
    """The folder a task's reader should read.

    ``sample`` picks the bundled sample. ``data_dir`` may be the task's own extracted
    folder, an archive of it that one of ``openers`` (the kernel's registry of them) opens, or a
    parent folder holding ``<task>/`` (or the official folder or archive name), so one
    ``--data-dir ~/clue`` serves several tasks. Otherwise one of ``fetchers`` (the kernel's
    registry of them) brings the files; with ``download`` false it only says where they already
    are; ``owners`` (the kernel's ``owner`` map) lets a fetcher's or an opener's fault name its plugin.
    """
    if sample:
        if data_dir is not None:
            raise DataError("choose either the bundled sample or a data folder, not both")
        return sample_dir(task)
    archive = None
    if data_dir is not None:
        found, is_archive = _user_data(task, Path(data_dir).expanduser(), openers or {})
        if not is_archive:
            return found
        archive = found
    folder, plugin = fetching.source_folder(task, archive, fetchers or {}, openers or {}, owners, download=download)
    if folder is None:
        raise DataError(f"no data for task {task.name} in {clue_home()}: run `clue-core download {task.name}` "
                        "or pass --data-dir with your copy")
    if archive is not None and isinstance(plugin, fetching.OpenerSpec):  # messages name the archive, not the copy
        _OPENED[os.path.abspath(folder)] = (archive, plugin, owners)
    elif download and task.data_files and not any(find_file(folder, n, required=False) for n in task.data_files):
        # a fetcher's folder without any of the task's files (some may be optional: a test version) is its
        # fault: the reader's own line would name a folder the user never chose
        raise PluginError(f"{fetching.who(plugin, owners)}: {folder} holds none of {task.name}'s files "
                          f"({', '.join(task.data_files)})")
    return folder


def _not_files(folder: Path, names: Iterable[str]) -> str:
    """Why a data file that is there was not read: a folder or a broken link by that name."""
    for name in names:
        entry = folder / name
        if entry.is_dir():
            return f"; {entry} is a folder, not a file"
        if entry.is_symlink() and not entry.exists():
            return f"; {entry} is a broken link (to {os.readlink(entry)})"
    return ""


def _user_data(task: TaskSpec, path: Path, openers: Mapping[str, OpenerSpec]) -> tuple[Path, bool]:
    """Interpret a user-given ``--data-dir`` (folder, archive, or parent of either): the task's folder, or
    its archive for an opener (True)."""
    hint = ""
    try:
        if not path.exists():
            raise DataError(f"{path}: no such file or folder")
        if path.is_file():
            return path, True
        if not path.is_dir():  # a pipe, a device, a socket: reading one could block; no folder to look in
            mode = path.stat().st_mode
            what = "a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
            raise DataError(f"{path}: {what}, not a folder or a file; give the task's data folder or archive")
        if not os.access(path, os.R_OK | os.X_OK):
            raise DataError(f"{path}: cannot read this folder (permission denied)")
        entries = {entry.name.lower(): entry for entry in path.iterdir() if not is_junk(Path(entry.name))}
        for name in _folder_names(task):
            entry = entries.get(name.lower())
            if entry is not None and entry.is_dir():
                return entry, False
        for name in _archive_names(task, openers):
            entry = entries.get(name.lower())
            if entry is not None and entry.is_file():
                return entry, True
        is_task_folder, elsewhere = _holds_task_files(path, task)
        if is_task_folder:
            return path, False
        if elsewhere is not None and path.name.lower() in {n.lower() for n in _folder_names(task)}:
            return path, False  # the task's own folder, its files inside a wrapper folder (readers search nested)
        if elsewhere is not None:
            hint = f"; {elsewhere} is not named after {task.name}: pass it as --data-dir if it is {task.name}'s"
        hint = hint or _not_files(path, task.data_files)
    except PermissionError as exc:
        raise DataError(f"{exc.filename or path}: cannot read ({exc.strerror})") from None
    expected = [f"{name}/" for name in _folder_names(task)] + list(_archive_names(task, openers))
    if task.data_files:
        expected.append("the files " + ", ".join(task.data_files))
    raise DataError(f"{path}: no {task.name} data here (looked for {' or '.join(expected)}){hint}")


def _folder_names(task: TaskSpec) -> tuple[str, ...]:
    names = [task.name]
    if task.source is not None:
        names.append(PurePosixPath(task.source.filename).stem)  # afqmc_public/ when unzipped with -d
    return tuple(dict.fromkeys(names))


def _archive_names(task: TaskSpec, openers: Mapping[str, OpenerSpec]) -> tuple[str, ...]:
    """The archives of the task a parent folder may hold: the official file's name, then ``<task>.zip``
    (looked for even with no opener, to say what to install) and ``<task><suffix>`` of each opener."""
    names = [f"{task.name}{suffix}" for suffix in (".zip", *fetching.archive_suffixes(openers))]
    if task.source is not None:
        names.insert(0, task.source.filename)
    return tuple(dict.fromkeys(names))


def _holds_task_files(path: Path, task: TaskSpec) -> tuple[bool, Path | None]:
    """Whether ``path`` itself is the task's folder, and else a sub-folder holding such files.

    It is when a data file lies in it directly, or only in sub-folders named after the task
    (``cmnli_public/``). Any other sub-folder may be another task's: a parent folder is
    used for a task only through the task's own folder or zip, so ``~/clue`` holding just
    another task's folder is not taken for this task's data.
    """
    if not task.data_files:
        return True, None
    elsewhere = None
    for name in task.data_files:
        found = find_file(path, name, required=False)
        if found is None:
            continue
        between = found.relative_to(path).parts[:-1]
        if all(task.name.lower() in part.lower() for part in between):
            return True, None
        elsewhere = elsewhere or found.parent
    return False, elsewhere
