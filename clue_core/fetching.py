"""The kernel's side of the ``clue_data_fetchers`` hook: which fetcher brings a task's official files.

Downloading is a feature, not kernel (``plugins/clue-data`` downloads, verifies and unpacks the
official archives into the cache); the kernel only needs a folder. When the user names no
``--data-dir`` and no ``--sample``, :func:`choose` picks the installed fetcher — the only one, or
the one ``$CLUE_FETCHER`` names when several are (a mirror of a third party's beside clue-data:
choosing silently by install order would read files from a source the user did not pick) — and
:func:`fetch` asks it for the folder. No fetcher installed is one line saying what to do.
A leaf (errors and specs only), so the kernel, the data lookup and planning all import it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clue_core.errors import DataError, PluginError, did_you_mean
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


def choose(task: TaskSpec, fetchers: Mapping[str, FetcherSpec]) -> FetcherSpec:
    """The fetcher that brings ``task``'s files; a :class:`DataError` when none is installed or the choice is open."""
    chosen = os.environ.get(FETCHER_ENV, "").strip()
    if chosen:
        if chosen not in fetchers:
            installed = ", ".join(fetchers) or "none"
            raise DataError(f"{FETCHER_ENV}={chosen!r}: no such fetcher (installed: {installed})"
                            f"{did_you_mean(chosen, fetchers)}")
        return fetchers[chosen]
    if not fetchers:
        raise DataError(f"no data for task {task.name}: install clue-data (pip install ./plugins/clue-data) "
                        "or pass --data-dir / --sample")
    if len(fetchers) > 1:
        raise DataError(f"several fetchers can bring {task.name}'s files ({', '.join(fetchers)}): "
                        f"set {FETCHER_ENV} to one of them, or pass --data-dir / --sample")
    return next(iter(fetchers.values()))


def _function(fetcher: FetcherSpec, ref: str) -> object:
    try:
        return resolve(ref)
    except Exception as exc:  # a broken plugin is one line naming it
        raise PluginError(f"fetcher {fetcher.name}: {ref} does not import ({type(exc).__name__}: {exc})") from exc


def fetch(fetcher: FetcherSpec, task: TaskSpec, *, progress: bool) -> Path:
    """The folder ``fetcher`` brings ``task``'s files into (it may download them first)."""
    folder = _function(fetcher, fetcher.fetch)(task, progress=progress)  # type: ignore[operator]
    if not isinstance(folder, Path) or not folder.is_dir():
        raise PluginError(f"fetcher {fetcher.name}: {fetcher.fetch} returned {folder!r}, not a folder")
    return folder


def location(fetcher: FetcherSpec, task: TaskSpec) -> Path | None:
    """Where ``fetcher`` keeps ``task``'s files, fetching nothing (``None``: it does not say)."""
    if fetcher.location is None:
        return None
    return Path(_function(fetcher, fetcher.location)(task))  # type: ignore[operator]


def describe(task: TaskSpec, fetchers: Mapping[str, FetcherSpec]) -> str:
    """Where a run with no ``--data-dir`` and no ``--sample`` reads ``task``'s files, fetching nothing
    (``--dry-run``)."""
    fetcher = choose(task, fetchers)
    where = location(fetcher, task)
    if where is not None and where.is_dir():
        return str(where)
    origin = task.source.url if task.source else "nowhere: no source"
    return f"{where if where is not None else f'fetcher {fetcher.name}'} (downloaded on first run from {origin})"
