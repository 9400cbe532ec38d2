"""A Ctrl-C while the ``clue-core`` console script is still importing the CLI: exit 130, one line."""

from __future__ import annotations

import importlib.abc
import subprocess
import sys

import pytest

from clue_core import entry


class _InterruptingImport(importlib.abc.MetaPathFinder):
    """Raises what a SIGINT raises, at the moment ``clue_core.cli`` is imported."""

    def find_spec(self, name, path=None, target=None):
        if name == "clue_core.cli":
            raise KeyboardInterrupt
        return None


def test_an_interrupt_during_the_cli_import_is_exit_130_without_a_traceback(monkeypatch, capsys) -> None:
    monkeypatch.delitem(sys.modules, "clue_core.cli", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_InterruptingImport(), *sys.meta_path])
    with pytest.raises(SystemExit) as stopped:
        entry.main()
    assert stopped.value.code == 130
    err = capsys.readouterr().err
    assert err == "clue-core: interrupted while starting\n"


def test_the_console_script_and_python_m_run_the_same_entry() -> None:
    from importlib.metadata import entry_points

    scripts = {e.name: e.value for e in entry_points(group="console_scripts")}
    assert scripts["clue-core"] == "clue_core.entry:main"
    done = subprocess.run([sys.executable, "-m", "clue_core", "--version"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "0.1.0" in done.stdout
