"""Which installed plugins load, and in which order: one answer for the kernel and the kind table.

A plugin is an entry point of the ``clue_core`` group. The built-in plugin loads first, then the
others by name, so which of two plugins claiming one name keeps it never depends on the order they
were installed in; of two distributions declaring one plugin name, the first keeps it.
``CLUE_DISABLE_PLUGINS`` names plugins (or their distributions) to skip. The kernel loads plugins
in this order (:meth:`clue_core.kernel.Kernel.load_entrypoints`), and code holding an example but no
kernel reads their kinds in the same one (:mod:`clue_core.kinds`), so both agree on whose declaration
of a name stands. It imports nothing of clue-core but its errors, so both may import it.

Entry points are read as ``importlib.metadata.entry_points(group=...)`` reads them (its order, the
first distribution of a normalised name on ``sys.path`` winning) but without importing it: that
import (email, socket, zipfile, csv...) and its parsing of every distribution's metadata cost more
than a tenth of ``clue-core list``. The scan reads ``*.dist-info`` / ``*.egg-info`` folders of the
plain folders on ``sys.path``; whatever importlib.metadata would read its own way (a zip or ``.egg``
on ``sys.path``, another finder of distributions in ``sys.meta_path``, a line it would refuse, headers
it would unfold) hands the whole call to importlib.metadata, as does importlib.metadata being
imported already (it then costs nothing, and a test that replaced its ``entry_points`` is obeyed).
An ``entry_points.txt`` importlib.metadata would fail on (a line without ``=``, bytes that are not
UTF-8), in any installed distribution, is one ``error:`` naming its file and line, not a traceback.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from clue_core.errors import InputError

GROUP = "clue_core"
"""The entry-point group plugins register under, and the name of the hooks' pluggy project."""
BUILTIN_PLUGIN = "builtin"
"""The built-in plugin's entry-point name (``clue_builtin``, in clue-core's own distribution)."""

#: importlib.metadata's ``EntryPoint.pattern``: ``module``, ``module:attr.attr``, then optional ``[extras]``.
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
#: A header line as the email parser importlib.metadata reads METADATA with takes one: printable ASCII, ``:``.
_HEADER = re.compile(r"[\x21-\x39\x3b-\x7e]+:")
_INFO = (".dist-info", ".egg-info")
_UNREADABLE = "importlib.metadata cannot list any installed entry points until this file is fixed or removed"


def env_names(variable: str) -> set[str]:
    """The comma-separated names environment variable ``variable`` holds (``CLUE_DISABLE_PLUGINS``)."""
    return {part.strip() for part in os.environ.get(variable, "").split(",") if part.strip()}


def plugin_points() -> Iterator[EntryPoint]:
    """Every installed plugin's entry point in load order: the built-in plugin, then by name, each name once."""
    seen: set[str] = set()
    for point in sorted(installed_entry_points(GROUP), key=lambda ep: (ep.name != BUILTIN_PLUGIN, ep.name)):
        if point.name not in seen:  # two distributions claiming one plugin name: the first wins
            seen.add(point.name)
            yield point


class Distribution:
    """The installed distribution an entry point comes from: its metadata's ``Name`` and ``Version``."""

    __slots__ = ("name", "version")

    def __init__(self, name: str | None, version: str | None) -> None:
        self.name, self.version = name, version


class EntryPoint:
    """One installed entry point: importlib.metadata's ``name``, ``value``, ``group``, ``dist`` and ``load()``."""

    __slots__ = ("dist", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist: Distribution) -> None:
        self.name, self.value, self.group, self.dist = name, value, group, dist

    def __repr__(self) -> str:
        return f"EntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"

    def load(self) -> Any:
        """The module ``value`` names, or its attribute after ``:`` (dotted), as importlib.metadata loads it."""
        import importlib

        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"entry point {self.name!r} of group {self.group!r}: {self.value!r} is not "
                             "'module' or 'module:attribute'")
        loaded = importlib.import_module(match["module"])
        for attr in filter(None, (match["attr"] or "").split(".")):
            loaded = getattr(loaded, attr)
        return loaded


class _Unsure(Exception):
    """The scan met something importlib.metadata reads its own way: it answers the whole call."""


def installed_entry_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group`` that ``importlib.metadata.entry_points(group=group)`` lists, in its order."""
    if "importlib.metadata" not in sys.modules:
        try:
            return scan(group)
        except (_Unsure, OSError):
            pass
    from importlib.metadata import entry_points

    return [EntryPoint(p.name, p.value, p.group, Distribution(getattr(p.dist, "name", None),
                                                              getattr(p.dist, "version", None)))
            for p in entry_points(group=group)]


def scan(group: str) -> list[EntryPoint]:
    """``group``'s entry points read from the folders on ``sys.path``; :class:`_Unsure` where that is not exact."""
    from importlib.machinery import PathFinder

    finders = [getattr(f, "find_distributions", None) for f in sys.meta_path]
    path_finder = getattr(PathFinder.find_distributions, "__func__", PathFinder.find_distributions)
    if {getattr(f, "__func__", f) for f in finders if f is not None} != {path_finder}:
        raise _Unsure("a finder other than PathFinder lists distributions")
    seen: set[str] = set()
    found: list[EntryPoint] = []
    for entry in sys.path:
        if not isinstance(entry, str) or "\0" in entry or os.path.basename(entry).lower().endswith(".egg"):
            raise _Unsure(f"sys.path entry {entry!r}")  # a NUL: importlib.metadata's os.stat raises ValueError
        root = entry or "."
        try:
            children = os.listdir(root)
        except OSError:
            if os.path.isfile(root):  # importlib.metadata reads a file on sys.path as a zip
                raise _Unsure(f"sys.path entry {entry!r} is a file") from None
            continue
        by_name: dict[str, list[str]] = {}  # importlib.metadata's Lookup: grouped by name, in listing order
        for child in children:
            if child.lower().endswith(_INFO):
                stem, ext = os.path.splitext(child)
                name = stem.partition("-")[0]
                if ext not in _INFO or not name:  # importlib.metadata names it by its metadata, not its folder
                    raise _Unsure(f"{os.path.join(root, child)}: no distribution name in the folder's name")
                by_name.setdefault(re.sub(r"[-_.]+", "_", name).lower(), []).append(child)
        for name, folders in by_name.items():
            for folder in folders:
                if name in seen:  # a distribution earlier on sys.path shadows this one
                    continue
                seen.add(name)
                found += _folder_points(os.path.join(root, folder), group)
    return found


def _read(path: str) -> str | None:
    """A metadata file's text, or None where importlib.metadata's ``read_text`` gives None."""
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None
    except UnicodeDecodeError as exc:  # importlib.metadata fails on it too, with a traceback
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start}); {_UNREADABLE}") from None


def _folder_points(folder: str, group: str) -> list[EntryPoint]:
    """The ``group`` entry points of one distribution's folder, its ``entry_points.txt`` read as importlib's
    ``Sectioned`` reads it (a line outside ``group`` that it would refuse is refused too)."""
    pairs, section, path = [], None, os.path.join(folder, "entry_points.txt")
    for number, line in enumerate((_read(path) or "").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section is not None:
            if "=" not in line:
                raise InputError(path, f"{line!r} is not 'name = value'; {_UNREADABLE}", line=number)
            if section == group:
                name, _, value = line.partition("=")
                pairs.append((name.strip(), value.strip()))
    if not pairs:
        return []
    dist = Distribution(*_name_version(_read(os.path.join(folder, "METADATA"))
                                       or _read(os.path.join(folder, "PKG-INFO")) or "", folder))
    return [EntryPoint(name, value, group, dist) for name, value in pairs]


def _name_version(text: str, folder: str) -> tuple[str, str]:
    """The ``Name`` and ``Version`` headers as importlib.metadata's email parser gives them (first of each,
    any case, leading blanks dropped); :class:`_Unsure` for anything it reads another way."""
    found: dict[str, str] = {}
    lines = text.split("\n")  # read with universal newlines, as importlib.metadata reads it
    for index, line in enumerate(lines):
        if index and line[:1] in (" ", "\t"):  # a continuation of the header above
            continue
        if not _HEADER.match(line):  # the headers end (blank line, body) before both were found
            break
        key, _, value = line.partition(":")
        key = key.lower()
        if key in ("name", "version") and key not in found:
            if lines[index + 1:index + 2] and lines[index + 1][:1] in (" ", "\t"):
                break  # a folded value: email unfolds it its own way
            found[key] = value.lstrip(" \t")
            if len(found) == 2:
                return found["name"], found["version"]
    raise _Unsure(f"{folder}: no plain Name and Version headers")
