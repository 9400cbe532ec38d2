"""Entry points without importlib.metadata: the kernel's scan lists what ``entry_points(group=...)`` lists.

``clue_core.discovery`` reads the ``*.dist-info`` / ``*.egg-info`` folders on ``sys.path`` itself so that
``clue-core list`` does not import importlib.metadata; where it cannot read something exactly as
importlib.metadata would, the whole call is importlib.metadata's. Each check compares the two on the same
``sys.path``: the installed tree in this process, crafted folders in a fresh process (where
importlib.metadata is not imported yet, so the scan is what answers).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from clue_core import discovery
from clue_core.discovery import GROUP, EntryPoint, installed_entry_points

BACKENDS = "clue_models_llm.backends"
PROBE = r"""
import json, sys
paths, group, finder = json.loads(sys.argv[1])
sys.path[:0] = paths
if finder:  # a finder of its own kind of distributions, as a zipimport-like installer might add
    class Finder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())
    sys.meta_path.append(Finder)
from clue_core.discovery import installed_entry_points

def attempt(call):
    try:
        return [[p.name, p.value, p.group, p.dist.name, p.dist.version] for p in call()]
    except Exception as exc:
        return type(exc).__name__

ours = attempt(lambda: installed_entry_points(group))
scanned = "importlib.metadata" not in sys.modules
from importlib.metadata import entry_points
print(json.dumps({"scanned": scanned, "ours": ours, "theirs": attempt(lambda: entry_points(group=group))}))
"""


def rows(points) -> list[tuple[str, str, str, str | None, str | None]]:
    return [(p.name, p.value, p.group, p.dist.name, p.dist.version) for p in points]


def probe(cwd: Path, paths: list[Path | str], group: str, *, finder: bool = False) -> dict:
    """Both readings of ``group`` in a fresh interpreter with ``paths`` first on ``sys.path``."""
    result = subprocess.run([sys.executable, "-c", PROBE, json.dumps([[str(p) for p in paths], group, finder])],
                            capture_output=True, text=True, cwd=cwd, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def dist(folder: Path, name: str, entry_points_txt: str | None, metadata: str | None = None,
         meta_file: str = "METADATA") -> Path:
    """One installed distribution's metadata folder, as pip (or setuptools, for ``.egg-info``) writes it."""
    folder.mkdir(parents=True)
    version = folder.name.rsplit(".", 1)[0].partition("-")[2] or "0"
    text = metadata if metadata is not None else f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nbody\n"
    (folder / meta_file).write_text(text, encoding="utf-8")
    if entry_points_txt is not None:
        (folder / "entry_points.txt").write_text(entry_points_txt, encoding="utf-8")
    return folder


@pytest.mark.parametrize("group", [GROUP, BACKENDS, "console_scripts"])
def test_the_installed_tree_scans_as_importlib_metadata_lists_it(group: str) -> None:
    """The scan (not its fallback: it raises where unsure) gives this environment's entry points."""
    assert rows(discovery.scan(group)) == rows(entry_points(group=group))


def test_the_installed_plugins_are_found_by_the_scan() -> None:
    names = {p.name: p.dist.name for p in discovery.scan(GROUP)}
    assert names[discovery.BUILTIN_PLUGIN] == "clue-core" and len(names) >= 10


def test_listing_plugins_imports_no_importlib_metadata_and_finds_the_same_rows() -> None:
    """A fresh process (as ``clue-core list`` is) loads every plugin through the scan, never importing
    importlib.metadata, and its plugin rows are those this process's kernel (reading importlib.metadata,
    which pytest has imported) lists."""
    from clue_core.kernel import Kernel

    code = ("import json, sys; from clue_core.kernel import Kernel; k = Kernel(strict=False); "
            "print(json.dumps([[p.name, p.module, p.distribution, p.version, p.status] for p in k.plugins])); "
            "print('importlib.metadata' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    plugins, imported = result.stdout.splitlines()[-2:]
    here = [[p.name, p.module, p.distribution, p.version, p.status] for p in Kernel(strict=False).plugins]
    assert json.loads(plugins) == here and imported == "False"


def test_odd_spacing_comments_extras_and_shadowed_versions_read_as_importlib_reads_them(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    odd = ("# written by hand\n\n  [clue_models_llm.backends]  \n; not a comment to importlib = kept\n"
           "  spaced   =   probe_mod.sub :  make.backend   [extra1, extra2]  \n\n[other]\nx = y\n"
           "[clue_models_llm.backends]\nagain=probe_mod\n#gone = no\n")
    dist(first / "Probe_Pkg-2.0.dist-info", "Probe-Pkg", odd)
    dist(second / "probe.pkg-1.0.dist-info", "probe.pkg", "[clue_models_llm.backends]\nold = old_mod\n")
    # in one folder, two versions of one name: importlib.metadata takes the first its listing gives
    dist(second / "twice-1.0.dist-info", "twice", "[clue_models_llm.backends]\none = m1\n")
    dist(second / "Twice-2.0.dist-info", "Twice", "[clue_models_llm.backends]\ntwo = m2\n")
    # an egg-info folder: PKG-INFO, headers in another case, a trailing blank kept as email keeps it
    dist(second / "eggy.egg-info", "eggy", "[clue_models_llm.backends]\negg = eggy:B\n",
         metadata="Metadata-Version: 1.0\nname: eggy  \nSummary: s\n folded summary\nversion:\t3.1\n",
         meta_file="PKG-INFO")
    dist(second / "none-1.0.dist-info", "none", None)  # no entry_points.txt: declares nothing
    found = probe(tmp_path, [first, second], BACKENDS)
    assert found["scanned"] and found["ours"] == found["theirs"]
    names = [row[0] for row in found["ours"]]
    assert names[:3] == ["; not a comment to importlib", "spaced", "again"] and "old" not in names
    assert found["ours"][1][1] == "probe_mod.sub :  make.backend   [extra1, extra2]" and "egg" in names
    assert len({"one", "two"} & set(names)) == 1
    assert ["egg", "eggy:B", BACKENDS, "eggy  ", "3.1"] in found["ours"]


def test_a_distribution_earlier_on_the_path_shadows_an_installed_plugin(tmp_path: Path) -> None:
    """A folder before site-packages holding clue-core's own name wins for the kernel's group, as it does
    for importlib.metadata (the installed clue-core's ``builtin`` is no longer listed)."""
    dist(tmp_path / "early" / "clue_core-9.9.dist-info", "clue-core", "[clue_core]\nbuiltin = elsewhere.hooks\n")
    found = probe(tmp_path, [tmp_path / "early"], GROUP)
    assert found["scanned"] and found["ours"] == found["theirs"]
    assert ["builtin", "elsewhere.hooks", GROUP, "clue-core", "9.9"] in found["ours"]
    assert not [row for row in found["ours"] if row[1] == "clue_builtin.hooks"]


@pytest.mark.parametrize("case", ["zip", "finder", "no-version", "folded-name", "egg-info-file", "CAPS"])
def test_what_the_scan_cannot_read_exactly_is_left_to_importlib_metadata(tmp_path: Path, case: str) -> None:
    site = tmp_path / "site"
    paths: list[Path | str] = [site]
    metadata = {"no-version": "Metadata-Version: 2.1\nName: odd\n\nVersion: 1 (in the body)\n",
                "folded-name": "Metadata-Version: 2.1\nName: odd\n  continued\nVersion: 1\n"}.get(case)
    folder = "ODD-1.DIST-INFO" if case == "CAPS" else "odd-1.dist-info"
    dist(site / folder, "odd", "[probe.group]\nhere = odd_mod:f\n", metadata=metadata)
    if case == "zip":
        archive = tmp_path / "zipped.zip"
        with zipfile.ZipFile(archive, "w") as zipped:
            zipped.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 1.0\n")
            zipped.writestr("zipped-1.0.dist-info/entry_points.txt", "[probe.group]\nfrom-zip = z:f\n")
        paths.insert(0, archive)
    if case == "egg-info-file":  # old distutils wrote the metadata as one file
        (site / "flat-1.egg-info").write_text("Metadata-Version: 1.0\nName: flat\nVersion: 1\n", encoding="utf-8")
    found = probe(tmp_path, paths, "probe.group", finder=case == "finder")
    assert found["ours"] == found["theirs"] and "here" in [row[0] for row in found["ours"]]
    assert found["scanned"] is (case == "egg-info-file")  # a metadata file declares no entry points: still exact
    if case == "zip":
        assert found["ours"][0][:2] == ["from-zip", "z:f"]


@pytest.mark.parametrize(("text", "where"), [(b"[probe.group]\nno equals sign\n", ":2: 'no equals sign' is not"),
                                             (b"[probe.group]\nok = m\n[x]\n\nbroken\n", ":5: 'broken' is not"),
                                             (b"[x]\nname = \xff\n", ": not UTF-8 text")])
def test_a_broken_entry_points_file_is_one_error_naming_it(tmp_path: Path, text: bytes, where: str) -> None:
    """A file importlib.metadata fails on (a line it refuses in any group, bytes that are not UTF-8) with a
    traceback, whatever group is asked for: the scan fails too, and ``clue-core list`` says which file and
    line in one ``error:`` line, exit 2."""
    folder = dist(tmp_path / "site" / "broken-1.dist-info", "broken", None)
    (folder / "entry_points.txt").write_bytes(text)
    found = probe(tmp_path, [tmp_path / "site"], "probe.group")
    assert found["ours"] == "InputError" and found["theirs"] in ("TypeError", "ValueError", "UnicodeDecodeError")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "CLUE_HOME": str(tmp_path / "home")}
    listed = subprocess.run([str(Path(sys.executable).with_name("clue-core")), "list"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert listed.returncode == 2 and not listed.stdout
    assert listed.stderr.splitlines() == [listed.stderr.strip()]
    assert listed.stderr.startswith(f"error: {folder / 'entry_points.txt'}{where}")
    if where.startswith(":2:"):  # --help lists the commands while parsing, before a command runs: one line too
        helped = subprocess.run([str(Path(sys.executable).with_name("clue-core")), "--help"], capture_output=True,
                                text=True, env=env, timeout=120)
        assert (helped.returncode, helped.stdout, helped.stderr) == (2, "", listed.stderr)


def test_lines_before_any_section_are_ignored_as_importlib_ignores_them(tmp_path: Path) -> None:
    dist(tmp_path / "site" / "lead-1.dist-info", "lead", "stray line\n[probe.group]\nk = v\n")
    found = probe(tmp_path, [tmp_path / "site"], "probe.group")
    assert found["scanned"] and found["ours"] == found["theirs"] == [["k", "v", "probe.group", "lead", "1"]]


def test_load_imports_the_module_and_walks_the_attributes() -> None:
    import os.path

    origin = discovery.Distribution("d", "1")
    assert EntryPoint("a", "os.path : join", "g", origin).load() is os.path.join
    assert EntryPoint("b", "os.path", "g", origin).load() is os.path
    assert EntryPoint("c", "os:path.join [extra]", "g", origin).load() is os.path.join
    with pytest.raises(ValueError, match="'not a value!' is not 'module' or 'module:attribute'"):
        EntryPoint("d", "not a value!", "g", origin).load()
    with pytest.raises(ModuleNotFoundError):
        EntryPoint("e", "no_such_module_here:x", "g", origin).load()


def test_the_plugin_api_exports_it_and_it_reads_importlib_metadata_when_that_is_loaded(monkeypatch) -> None:
    """With importlib.metadata imported (here, by pytest) its ``entry_points`` answers: a test or tool that
    replaced it is obeyed, and the scan costs nothing more."""
    import importlib.metadata

    import clue_core.plugin as api

    assert api.installed_entry_points is installed_entry_points
    fake = [importlib.metadata.EntryPoint("fake", "fake_mod", GROUP)]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **selection: fake)
    assert [(p.name, p.value, p.dist.name) for p in installed_entry_points(GROUP)] == [("fake", "fake_mod", None)]
