"""The kernel's side of the ``clue_data_fetchers`` hook: which fetcher brings a task's official files.

Downloading is a feature, not kernel (``plugins/clue-data`` downloads, verifies and unpacks the
official archives into the cache); the kernel only needs a folder. When the user names no
``--data-dir`` and no ``--sample``, :func:`choose` picks the installed fetcher — the only one, or
the one ``$CLUE_FETCHER`` names when several are (a mirror of a third party's beside clue-data:
choosing silently by install order would read files from a source the user did not pick) — and
:func:`fetch` asks it for the folder. No fetcher installed is one line saying what to do.
A fetcher is somebody else's code: whatever it raises or returns that is no folder holding the
task's files is one :class:`PluginError` line naming it (and its plugin, given the kernel's
``owner`` map), so a user is never shown a traceback or a folder they never chose.
A leaf (errors and specs only), so the kernel, the data lookup and planning all import it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clue_core.errors import ClueError, DataError, PluginError, did_you_mean
from clue_core.specs import Ref, SpecMixin, resolve

if TYPE_CHECKING:
    from clue_core.specs import TaskSpec

FETCHER_ENV = "CLUE_FETCHER"
"""Names the fetcher to use when several are installed."""


@dataclass(frozen=True, slots=True)
class FetcherSpec(SpecMixin):
    """What a plugin's ``clue_data_fetchers`` hook returns: a way to bring a task's files.

    ``fetch(task, *, progress: bool) -> Path`` returns the folder holding the task's files, fetching
    them first if need be (from ``task.source``, the official archive the task declares, or from a
    mirror of the plugin's own); ``location(task) -> Path`` is that folder without fetching anything
    (it may not exist yet), shown by ``info`` and ``--dry-run``. Both are ``"module:attr"``, imported
    when used. Failures are one-line ``DataError``; ``$CLUE_FETCHER`` picks one of several fetchers.
    """

    name: str
    help: str
    fetch: Ref
    location: Ref | None = None


Owners = Mapping[tuple[str, str], str]
"""The kernel's ``owner`` map (``("fetchers", name) -> plugin``), so a fault names the plugin to blame."""


def choose(task: TaskSpec, fetchers: Mapping[str, FetcherSpec]) -> FetcherSpec:
    """The fetcher that brings ``task``'s files; a :class:`DataError` when none is installed or the choice is open."""
    chosen = os.environ.get(FETCHER_ENV, "").strip()
    if chosen:
        if chosen not in fetchers:
            installed = ", ".join(map(str, fetchers)) or "none"  # a name that is no string: not a traceback
            raise DataError(f"{FETCHER_ENV}={chosen!r}: no such fetcher (installed: {installed})"
                            f"{did_you_mean(chosen, map(str, fetchers))}")
        return fetchers[chosen]
    if not fetchers:
        raise DataError(f"no data for task {task.name}: install clue-data (pip install ./plugins/clue-data) "
                        "or pass --data-dir / --sample")
    if len(fetchers) > 1:
        raise DataError(f"several fetchers can bring {task.name}'s files ({', '.join(map(str, fetchers))}): "
                        f"set {FETCHER_ENV} to one of them, or pass --data-dir / --sample")
    return next(iter(fetchers.values()))


def who(fetcher: FetcherSpec, owners: Owners | None = None) -> str:
    """``fetcher lab-mirror (plugin lab-tools)``: how a message names a fetcher (and, when known, its plugin)."""
    owner = (owners or {}).get(("fetchers", fetcher.name))
    return f"fetcher {fetcher.name}" + (f" (plugin {owner})" if owner and owner != fetcher.name else "")


def _shown(ref: Ref) -> str:
    """A fetcher's function as a message names it: its ``module:attr``, or a callable's own name."""
    return ref if isinstance(ref, str) else str(getattr(ref, "__qualname__", repr(ref)))


def _call(fetcher: FetcherSpec, ref: Ref, owners: Owners | None, *args: object, **kwargs: object) -> object:
    """Call a fetcher's function: somebody else's code, so whatever it raises (but a one-line
    :class:`ClueError` of its own, or Ctrl-C) is one line naming it, never a traceback."""
    shown = _shown(ref)
    try:
        function = resolve(ref)
    except Exception as exc:  # a broken plugin is one line naming it
        raise PluginError(f"{who(fetcher, owners)}: {shown} does not import ({type(exc).__name__}: {exc})") from exc
    try:
        return function(*args, **kwargs)
    except ClueError:
        raise
    except Exception as exc:
        raise PluginError(f"{who(fetcher, owners)}: {shown} raised {type(exc).__name__}: {exc}") from exc


def _path(fetcher: FetcherSpec, ref: Ref, value: object, owners: Owners | None) -> Path:
    if isinstance(value, (str, os.PathLike)) and str(value):
        return Path(value)
    raise PluginError(f"{who(fetcher, owners)}: {_shown(ref)} returned {value!r}, not a folder")


def fetch(fetcher: FetcherSpec, task: TaskSpec, *, progress: bool, owners: Owners | None = None) -> Path:
    """The folder ``fetcher`` brings ``task``'s files into (it may download them first): a path or
    string naming a folder that holds some of the task's files, else one :class:`PluginError` line
    naming the fetcher (the reader's own line would name a folder the user never chose)."""
    folder = _path(fetcher, fetcher.fetch, _call(fetcher, fetcher.fetch, owners, task, progress=progress), owners)
    if not folder.is_dir():
        what = "a file" if folder.exists() else "nothing is there"
        raise PluginError(f"{who(fetcher, owners)}: {_shown(fetcher.fetch)} returned {folder}, not a folder: {what}")
    if task.data_files and not any(_holds(folder, name) for name in task.data_files):
        raise PluginError(f"{who(fetcher, owners)}: {folder} holds none of {task.name}'s files "
                          f"({', '.join(task.data_files)})")
    return folder


def _holds(folder: Path, name: str) -> bool:
    """Whether a file ``name`` lies anywhere below ``folder`` (archive junk aside), as the readers look.
    Only a folder with none of the task's files is the wrong one: some may be optional (a test version)."""
    from clue_core.archive import is_junk  # zipfile: not at start-up, which imports this module

    if (folder / name).is_file():  # the usual layout: no walk through a large folder
        return True
    return any(path.is_file() and not is_junk(path.relative_to(folder)) for path in folder.rglob(name))


def location(fetcher: FetcherSpec, task: TaskSpec, owners: Owners | None = None) -> Path | None:
    """Where ``fetcher`` keeps ``task``'s files, fetching nothing (``None``: it does not say)."""
    if fetcher.location is None:
        return None
    return _path(fetcher, fetcher.location, _call(fetcher, fetcher.location, owners, task), owners)


def describe(task: TaskSpec, fetchers: Mapping[str, FetcherSpec], owners: Owners | None = None) -> str:
    """Where a run with no ``--data-dir`` and no ``--sample`` reads ``task``'s files, fetching nothing
    (``--dry-run``)."""
    fetcher = choose(task, fetchers)
    where = location(fetcher, task, owners)
    if where is not None and where.is_dir():
        return str(where)
    origin = task.source.url if task.source else "nowhere: no source"
    return f"{where if where is not None else f'fetcher {fetcher.name}'} (downloaded on first run from {origin})"
