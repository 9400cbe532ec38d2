"""writing-a-plugin.md's "Fetching data" section, run as a third party would use it.

The section's two code blocks (``my_mirror/hooks.py``, ``my_mirror/fetch.py``) are written out as a
package and registered on an isolated kernel: a run with no ``--data-dir`` reads the mirror's copy,
a task the mirror lacks is the fetcher's own one line, and every helper the section names is what
``clue_core.plugin`` exports.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from clue_builtin import hooks as builtin
from clue_core.data import sample_dir
from clue_core.kernel import Kernel
from clue_tasks_classic import hooks as classic

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "writing-a-plugin.md"
EXPORTS = ("FetcherSpec", "clue_home", "file_digests")


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## Fetching data")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def blocks() -> dict[str, str]:
    """``{path comment: code}`` for each python block of the section (its first line names the file)."""
    found = {}
    for code in re.findall(r"```python\n(.*?)```", section(), flags=re.S):
        first = code.splitlines()[0]
        assert first.startswith("# "), first
        found[first[2:].strip()] = code
    return found


@pytest.fixture
def my_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for path, code in blocks().items():
        target = tmp_path / "pkg" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    for name in [m for m in sys.modules if m == "my_mirror" or m.startswith("my_mirror.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delenv("CLUE_FETCHER", raising=False)
    import my_mirror.fetch
    import my_mirror.hooks

    shared = tmp_path / "shared"
    monkeypatch.setattr(my_mirror.fetch, "SHARED", shared)
    return my_mirror.hooks, shared


def test_the_section_names_every_export_a_fetcher_uses() -> None:
    from clue_core import plugin

    text = section()
    for name in EXPORTS:
        assert name in plugin.__all__ and getattr(plugin, name) is not None, name
        assert re.search(rf"\b{name}\b", text), f"{name} is not explained in the Fetching data section"


def test_the_documented_mirror_fetcher_works(run_cli, my_mirror, tmp_path: Path) -> None:
    hooks, shared = my_mirror
    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    for plugin, name in [(builtin, "builtin"), (classic, "clue-tasks-classic"), (hooks, "my-mirror")]:
        kernel.register(plugin, name)
    assert list(kernel.fetchers) == ["lab-mirror"]

    missing = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "a", kernel=kernel)
    assert missing.exit_code == 2 and missing.output == "error: the lab mirror has no afqmc: pass --data-dir\n"

    import shutil

    shutil.copytree(sample_dir(kernel.task("afqmc")), shared / "afqmc")
    result = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "b", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "clue-home" / "mirror" / "afqmc").is_dir()


def test_the_documented_fetcher_killed_half_way_is_not_taken_for_the_data(run_cli, my_mirror, tmp_path: Path,
                                                                           monkeypatch) -> None:
    import shutil

    hooks, shared = my_mirror
    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    for plugin, name in [(builtin, "builtin"), (classic, "clue-tasks-classic"), (hooks, "my-mirror")]:
        kernel.register(plugin, name)
    shutil.copytree(sample_dir(kernel.task("afqmc")), shared / "afqmc")
    real_copy = shutil.copyfile  # copy2's, looked up when called (copytree binds copy2 itself)
    copied: list[str] = []

    def killed_after_one(src, dst, **kwargs):
        if copied:
            raise KeyboardInterrupt  # as a Ctrl-C or a kill half-way through the copy
        copied.append(src)
        return real_copy(src, dst, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", killed_after_one)
    first = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "a", kernel=kernel)
    assert first.exit_code == 130
    monkeypatch.setattr(shutil, "copyfile", real_copy)
    again = run_cli("run", "afqmc", "--model", "baseline", "-o", tmp_path / "b", kernel=kernel)
    assert again.exit_code == 0, again.output
