"""The ``clue_data_openers`` point: a third party's opener for another suffix, and the refusals around it.

writing-a-plugin.md's ``my_tar/hooks.py`` block is written out as a package (its ``open`` here: a
``.tar.gz`` unpacked with :mod:`tarfile`) and registered on an isolated kernel beside the built-in
plugin and the classic tasks, without clue-data: ``run --data-dir x.tar.gz`` reads it, an error in one
of its files names ``<archive>:<member>`` and tells the opener, and a file no opener takes is one
``error:`` line naming the file and what to install. Faults of the opener's own code are one line
naming it, as a fetcher's are (test_fetcher_faults.py).
"""

from __future__ import annotations

import dataclasses
import io
import re
import sys
import tarfile
from pathlib import Path

import pytest

from clue_builtin import hooks as builtin
from clue_core.kernel import Kernel
from clue_core.plugin import OpenerSpec, hookimpl
from clue_data import hooks as clue_data
from clue_tasks_classic import hooks as classic

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "writing-a-plugin.md"
SAMPLE = ROOT / "plugins/clue-tasks-classic/clue_tasks_classic/samples/tnews"

OPEN_TAR = '''
from pathlib import Path
import hashlib, tarfile
from clue_core.plugin import clue_home

OPENED: list[Path] = []
REFUSED: list[Path] = []

def open_tar(path: Path) -> Path:
    folder = clue_home() / "tar" / hashlib.sha256(path.read_bytes()).hexdigest()
    if not folder.is_dir():
        with tarfile.open(path) as archive:
            archive.extractall(folder, filter="data")
    OPENED.append(path)
    return folder

def refused(folder: Path) -> None:
    REFUSED.append(folder)
'''


def doc_block(path: str) -> str:
    """The python block of writing-a-plugin.md whose first line is ``# <path>``."""
    text = DOC.read_text(encoding="utf-8")
    for code in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        if code.splitlines()[0].strip() == f"# {path}":
            return code
    raise AssertionError(f"writing-a-plugin.md has no block {path}")


@pytest.fixture
def my_tar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "pkg" / "my_tar"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "hooks.py").write_text(doc_block("my_tar/hooks.py"), encoding="utf-8")
    (package / "open.py").write_text(OPEN_TAR, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    for name in [m for m in sys.modules if m == "my_tar" or m.startswith("my_tar.")]:
        monkeypatch.delitem(sys.modules, name)
    import my_tar.hooks
    import my_tar.open

    return my_tar


def kernel_of(*plugins: tuple[object, str]) -> Kernel:
    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    for plugin, name in [(builtin, "builtin"), (classic, "clue-tasks-classic"), *plugins]:
        kernel.register(plugin, name)
    return kernel


def make_tar(path: Path, *, broken: bool = False) -> Path:
    """The tnews sample as ``tnews_public/`` in a .tar.gz; ``broken``: dev.json's line 2 is not JSON."""
    with tarfile.open(path, "w:gz") as archive:
        for file in sorted(SAMPLE.iterdir()):
            data = file.read_bytes()
            if broken and file.name == "dev.json":
                lines = data.splitlines(keepends=True)
                data = lines[0] + b'{"sentence": broken}\n' + b"".join(lines[2:])
            info = tarfile.TarInfo(f"tnews_public/{file.name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def one_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output, result.output
    return result.output.rstrip("\n")


def test_the_documented_opener_reads_a_tar_given_as_data_dir(run_cli, my_tar, tmp_path: Path) -> None:
    kernel = kernel_of((my_tar.hooks, "my-tar"))
    assert list(kernel.openers) == ["tar"] and kernel.owner[("openers", "tar")] == "my-tar"
    archive = make_tar(tmp_path / "tnews_public.tar.gz")
    result = run_cli("run", "tnews", "--model", "baseline", "--data-dir", archive, "-o", tmp_path / "a",
                     kernel=kernel)
    assert result.exit_code == 0, result.output
    assert [archive] == my_tar.open.OPENED
    parent = tmp_path / "clue"  # a folder holding <task>.tar.gz: found by the opener's suffix
    parent.mkdir()
    make_tar(parent / "tnews.tar.gz")
    again = run_cli("run", "tnews", "--model", "baseline", "--data-dir", parent, "-o", tmp_path / "b", kernel=kernel)
    assert again.exit_code == 0, again.output
    assert my_tar.open.OPENED[-1] == parent / "tnews.tar.gz"


def test_a_bad_line_in_the_tar_names_the_archive_and_member_and_tells_the_opener(run_cli, my_tar, tmp_path):
    [documented] = my_tar.hooks.clue_data_openers()
    kernel = kernel_of((plugin_with(dataclasses.replace(documented, refused="my_tar.open:refused")), "my-tar"))
    archive = make_tar(tmp_path / "tnews_public.tgz", broken=True)
    line = one_line(run_cli("run", "tnews", "--model", "baseline", "--data-dir", archive, "-o", tmp_path / "a",
                            kernel=kernel))
    assert line.startswith(f"error: {archive}:tnews_public/dev.json:2"), line
    assert not (tmp_path / "a").exists()
    [folder] = my_tar.open.REFUSED
    assert folder.parent == tmp_path / "clue-home" / "tar" and (folder / "tnews_public" / "dev.json").is_file()


def test_a_file_no_opener_takes_is_one_line_naming_it_and_what_to_install(run_cli, my_tar, tmp_path) -> None:
    user_zip = tmp_path / "tnews_public.zip"
    user_zip.write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip
    bare = one_line(run_cli("run", "tnews", "--model", "baseline", "--data-dir", user_zip, "-o", tmp_path / "a",
                            kernel=kernel_of()))
    assert bare == (f"error: {user_zip}: a file, not a folder, and no installed plugin opens archives: install "
                    "clue-data (pip install ./plugins/clue-data) for .zip, or pass the folder it unpacks to")
    with_tar = one_line(run_cli("run", "tnews", "--model", "baseline", "--data-dir", user_zip, "-o", tmp_path / "a",
                                kernel=kernel_of((my_tar.hooks, "my-tar"))))
    assert with_tar == (f"error: {user_zip}: expected a folder or a .tar.gz or .tgz archive, and this is not a tar "
                        "(clue-data opens .zip: pip install ./plugins/clue-data)")
    assert not (tmp_path / "a").exists() and my_tar.open.OPENED == []


def test_with_clue_data_a_zip_and_a_tar_each_go_to_their_opener(run_cli, my_tar, tmp_path: Path) -> None:
    kernel = kernel_of((clue_data, "clue-data"), (my_tar.hooks, "my-tar"))
    assert sorted(kernel.openers) == ["tar", "zip"]
    text = tmp_path / "notes.txt"
    text.write_text("not an archive\n")
    line = one_line(run_cli("run", "tnews", "--model", "baseline", "--data-dir", text, "-o", tmp_path / "a",
                            kernel=kernel))
    assert line == (f"error: {text}: expected a folder or a .zip or .tar.gz or .tgz archive, and this is not a zip "
                    "or a tar")
    archive = make_tar(tmp_path / "tnews_public.tar.gz")
    result = run_cli("run", "tnews", "--model", "baseline", "--data-dir", archive, "-o", tmp_path / "b", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "clue-home" / "extracted").exists()  # clue-data's zip opener was not asked


def plugin_with(*openers: OpenerSpec) -> object:
    class Plugin:
        @hookimpl
        def clue_data_openers(self) -> list[OpenerSpec]:
            return list(openers)

    return Plugin()


def test_two_openers_taking_one_suffix_refuse_such_a_file_naming_both(run_cli, my_tar, tmp_path: Path) -> None:
    other = OpenerSpec("lab-tar", "Another tar opener.", suffixes=(".tgz",), open="my_tar.open:open_tar")
    kernel = kernel_of((my_tar.hooks, "my-tar"), (plugin_with(other), "lab"))
    archive = make_tar(tmp_path / "tnews_public.tgz")
    line = one_line(run_cli("run", "tnews", "--model", "baseline", "--data-dir", archive, "-o", tmp_path / "a",
                            kernel=kernel))
    # CLUE_DISABLE_PLUGINS takes plugin names, not openers': the line names each opener's plugin (it named
    # only "tar, lab-tar", and CLUE_DISABLE_PLUGINS=lab-tar disables nothing)
    assert line == (f"error: {archive}: several openers take this file: tar (plugin my-tar), lab-tar (plugin lab); "
                    "disable all but one of these plugins with CLUE_DISABLE_PLUGINS")
    longer = make_tar(tmp_path / "tnews_public.tar.gz")  # only my-tar takes .tar.gz
    assert run_cli("run", "tnews", "--model", "baseline", "--data-dir", longer, "-o", tmp_path / "b",
                   kernel=kernel).exit_code == 0


def broken_open(path: Path) -> Path:
    raise KeyError("members")


def open_to_a_file(path: Path) -> Path:
    return path


@pytest.mark.parametrize(("open_ref", "expected"), [
    (broken_open, "opener lab (plugin lab-plugin): broken_open raised KeyError: 'members'"),
    (open_to_a_file, "opener lab (plugin lab-plugin): open_to_a_file returned {archive}, not a folder: a file"),
    ("no_such_module:open", "opener lab (plugin lab-plugin): no_such_module:open does not import "
                            "(ModuleNotFoundError: No module named 'no_such_module')"),
])
def test_an_opener_failing_is_one_line_naming_it(run_cli, tmp_path: Path, open_ref, expected) -> None:
    spec = OpenerSpec("lab", "A test stand-in.", suffixes=(".tar.gz",), open=open_ref)
    archive = make_tar(tmp_path / "tnews_public.tar.gz")
    line = one_line(run_cli("run", "tnews", "--model", "baseline", "--data-dir", archive, "-o", tmp_path / "a",
                            kernel=kernel_of((plugin_with(spec), "lab-plugin"))))
    assert line == "error: " + expected.format(archive=archive)


def test_a_bad_opener_spec_is_dropped_on_its_plugins_row() -> None:
    bad = OpenerSpec("lab", "Suffixes without their dot.", suffixes=("tar",), open="my_tar.open:open_tar",  # type: ignore[arg-type]
                     refused="not a reference")
    good = OpenerSpec("lab2", "Fine.", suffixes=(".tar",), open="my_tar.open:open_tar")
    kernel = kernel_of((plugin_with(bad, good), "lab-plugin"))
    assert list(kernel.openers) == ["lab2"]
    [row] = [p for p in kernel.plugins if p.name == "lab-plugin"]
    assert row.status == "error" and row.provides["openers"] == ["lab2"]
    assert row.error == ("opener 'lab' dropped: refused must be 'module:attr', got 'not a reference'; suffixes must "
                         "be a non-empty tuple of file name endings like ('.zip',), got ('tar',)")


def test_check_run_and_evaluate_open_a_users_zip_through_the_installed_kernels_opener(run_cli, tmp_path: Path) -> None:
    """Every command that takes --data-dir passes its kernel's openers (a forgotten one would refuse the zip)."""
    import zipfile

    user_zip = tmp_path / "tnews_public.zip"
    with zipfile.ZipFile(user_zip, "w") as archive:
        for file in sorted(SAMPLE.iterdir()):
            archive.write(file, f"tnews_public/{file.name}")
    checked = run_cli("check", "tnews", "--data-dir", user_zip)
    assert checked.exit_code == 0, checked.output
    assert "tnews: dev: 15 examples" in checked.output
    ran = run_cli("run", "tnews", "--model", "baseline", "--data-dir", user_zip, "-o", tmp_path / "a")
    assert ran.exit_code == 0, ran.output
    [copy] = (tmp_path / "clue-home" / "extracted").iterdir()
    assert (copy / "tnews_public" / "dev.json").is_file()
    scored = run_cli("evaluate", "tnews", tmp_path / "a" / "tnews" / "predictions" / "dev.jsonl", "--data-dir",
                     user_zip, "--json")
    assert scored.exit_code == 0, scored.output
    assert '"examples": 15' in scored.output
