"""The kernel's side of the data hooks: which plugin brings a task's files, and which opens a user's archive.

Downloading is a feature, not kernel (``plugins/clue-data`` downloads, verifies and unpacks the
official archives into the cache); the kernel only needs a folder. When the user names no
``--data-dir`` and no ``--sample``, :func:`choose` picks the installed fetcher (``clue_data_fetchers``)
— the only one, or the one ``$CLUE_FETCHER`` names when several are (a mirror of a third party's
beside clue-data: choosing silently by install order would read files from a source the user did
not pick) — and :func:`source_folder` asks it for the folder. No fetcher installed is one line saying what
to do. A ``--data-dir`` that is a file (``x.zip``) goes to the opener (``clue_data_openers``) that
takes its suffix, or else recognises its content (:func:`source_folder`), and comes back a folder: the
kernel reads folders only, unpacking nothing itself, so a ``.tar.gz`` is a plugin's matter too.
A fetcher or opener is somebody else's code: whatever it raises or returns that is no folder (or,
the data lookup checks, holds none of the task's files) is one :class:`PluginError` line naming it
(and its plugin, given the kernel's ``owner`` map), so a user is never shown a traceback or a folder
they never chose.
A leaf (errors and specs only), so the kernel, the data lookup and planning all import it.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clue_core.errors import ClueError, DataError, PluginError, did_you_mean
from clue_core.specs import Ref, SpecMixin, resolve

FETCHER_ENV = "CLUE_FETCHER"
"""Names the fetcher to use when several are installed."""

if TYPE_CHECKING:
    from clue_core.specs import TaskSpec


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


@dataclass(frozen=True, slots=True)
class OpenerSpec(SpecMixin):
    """What a plugin's ``clue_data_openers`` hook returns: a way to read an archive the user names.

    ``open(path) -> Path`` turns the file given as ``--data-dir`` (or found as ``<task><suffix>`` in
    the folder given) into a folder holding its files, e.g. unpacked into a cache; the kernel looks
    for the task's files there and shows each as ``<the user's file>:<member>``. An opener takes the
    files ending in one of its ``suffixes`` (``".zip"``, ``".tar.gz"``; case aside), and with
    ``recognises(path) -> bool`` also a file named otherwise whose content it knows. ``refused(folder)``
    hears that the data read from ``folder`` was refused (a bad line, a missing file), so that the
    copy can go once the process ends (it may go on reading, to report the other files too).
    Each is ``"module:attr"``, imported when used. Two openers taking one suffix: a file with it is
    refused, naming both, rather than one chosen by install order.
    """

    name: str
    help: str
    suffixes: tuple[str, ...]
    open: Ref
    recognises: Ref | None = None
    refused: Ref | None = None


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


def who(fetcher: FetcherSpec | OpenerSpec, owners: Owners | None = None) -> str:
    """``fetcher lab-mirror (plugin lab-tools)``: how a message names a fetcher or an opener (and, when
    known, its plugin)."""
    noun = "opener" if isinstance(fetcher, OpenerSpec) else "fetcher"
    owner = (owners or {}).get((f"{noun}s", fetcher.name))
    return f"{noun} {fetcher.name}" + (f" (plugin {owner})" if owner and owner != fetcher.name else "")


def _shown(ref: Ref) -> str:
    """A fetcher's function as a message names it: its ``module:attr``, or a callable's own name."""
    return ref if isinstance(ref, str) else str(getattr(ref, "__qualname__", repr(ref)))


def _call(fetcher: FetcherSpec | OpenerSpec, ref: Ref, owners: Owners | None, *args: object, **kwargs: object
          ) -> object:
    """Call a fetcher's or an opener's function: somebody else's code, so whatever it raises (but a one-line
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


def _path(fetcher: FetcherSpec | OpenerSpec, ref: Ref, value: object, owners: Owners | None) -> Path:
    if isinstance(value, (str, os.PathLike)) and str(value):
        return Path(value)
    raise PluginError(f"{who(fetcher, owners)}: {_shown(ref)} returned {value!r}, not a folder")


def _folder(spec: FetcherSpec | OpenerSpec, ref: Ref, owners: Owners | None, *args: object, **kwargs: object
            ) -> Path:
    """What ``ref`` of a fetcher or an opener returns, as the folder it must be: else one line naming it."""
    folder = _path(spec, ref, _call(spec, ref, owners, *args, **kwargs), owners)
    if not folder.is_dir():
        what = "a file" if folder.exists() else "nothing is there"
        raise PluginError(f"{who(spec, owners)}: {_shown(ref)} returned {folder}, not a folder: {what}")
    return folder


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


# --------------------------------------------------------------------------- openers


def source_folder(task: TaskSpec, archive: Path | None, fetchers: Mapping[str, FetcherSpec],
                  openers: Mapping[str, OpenerSpec], owners: Owners | None = None, *, download: bool = True
                  ) -> tuple[Path | None, FetcherSpec | OpenerSpec]:
    """The one question the data lookup asks here: the folder of a source it does not read as it is, and the
    plugin that answered. The user's ``archive`` is opened by the opener taking it; without one, the fetcher
    brings the task's files (``download`` false: where they are, None when it has not got them)."""
    if archive is not None:
        opener = _opener_for(archive, openers, owners)
        return _folder(opener, opener.open, owners, archive), opener
    fetcher = choose(task, fetchers)
    if download:  # it may download them first; whether the folder holds them the data lookup sees
        return _folder(fetcher, fetcher.fetch, owners, task, progress=True), fetcher
    where = location(fetcher, task, owners)
    return (where if where is not None and where.is_dir() else None), fetcher


def archive_suffixes(openers: Mapping[str, OpenerSpec]) -> tuple[str, ...]:
    """Every suffix an installed opener takes (lower case), in registry order."""
    return tuple(dict.fromkeys(suffix.lower() for opener in openers.values() for suffix in opener.suffixes))


def _opener_for(path: Path, openers: Mapping[str, OpenerSpec], owners: Owners | None) -> OpenerSpec:
    """The opener whose longest suffix ends ``path``'s name, else the one that recognises its content."""
    name = path.name.lower()
    longest = {opener.name: max((len(s) for s in opener.suffixes if name.endswith(s.lower())), default=0)
               for opener in openers.values()}
    taking = [openers[n] for n, length in longest.items() if length and length == max(longest.values())]
    if not taking:
        taking = [opener for opener in openers.values()
                  if opener.recognises is not None and _call(opener, opener.recognises, owners, path)]
    if len(taking) == 1:
        return taking[0]
    if taking:
        owner = {o.name: (owners or {}).get(("openers", o.name)) or o.name for o in taking}  # what the variable takes
        named = ", ".join(o.name + (f" (plugin {owner[o.name]})" if owner[o.name] != o.name else "") for o in taking)
        raise DataError(f"{path}: several openers take this file: {named}; disable all but one of these plugins with "
                        "CLUE_DISABLE_PLUGINS")
    if not openers:
        raise DataError(f"{path}: a file, not a folder, and no installed plugin opens archives: install clue-data "
                        f"(pip install ./plugins/clue-data) for .zip, or pass the folder it unpacks to")
    suffixes = " or ".join(archive_suffixes(openers))
    names = " or ".join(f"a {opener.name}" for opener in openers.values())
    zip_hint = "" if ".zip" in archive_suffixes(openers) else " (clue-data opens .zip: pip install ./plugins/clue-data)"
    raise DataError(f"{path}: expected a folder or a {suffixes} archive, and this is not {names}{zip_hint}")


def refused(opener: OpenerSpec, folder: Path, owners: Owners | None = None) -> None:
    """Tell ``opener`` that the data read from ``folder`` (which it made) was refused."""
    if opener.refused is not None:
        _call(opener, opener.refused, owners, folder)


def spec_problems(spec: FetcherSpec | OpenerSpec, is_ref: Callable[[object], bool]) -> list[str]:
    """What is wrong with a fetcher's or an opener's spec, importing nothing (``is_ref``: the kernel's
    check of a ``"module:attr"``, from :mod:`clue_core.checks`, which imports this module and asks this)."""
    opener = isinstance(spec, OpenerSpec)
    refs = {name: getattr(spec, name) for name in (("open", "recognises", "refused") if opener
                                                   else ("fetch", "location"))}
    problems = [f"{name} must be 'module:attr', got {ref!r}" for name, ref in refs.items()
                if (name in ("fetch", "open") or ref is not None) and not is_ref(ref)]
    if not isinstance(spec.name, str) or not spec.name or any(c.isspace() or c == "," for c in spec.name):
        problems.append(f"opener name must be one word, got {spec.name!r}" if opener else
                        f"fetcher name must be one word ($CLUE_FETCHER names it), got {spec.name!r}")
    if isinstance(spec, OpenerSpec) and not (isinstance(spec.suffixes, tuple) and spec.suffixes and all(
            isinstance(s, str) and len(s) > 1 and s.startswith(".") and "/" not in s for s in spec.suffixes)):
        problems.append(f"suffixes must be a non-empty tuple of file name endings like ('.zip',), got "
                        f"{spec.suffixes!r}")
    return problems
