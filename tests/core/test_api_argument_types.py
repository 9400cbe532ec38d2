"""Every argument of :mod:`clue_core.api` of the wrong type is an ``ArgumentError`` naming it (a
``ClueError`` and a ``TypeError``): ``api.submit(run, None)`` raised a plain ``TypeError``, which an
``except ClueError`` around a notebook's loop did not catch, unlike every other wrong argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from clue_core import api
from clue_core.config import ArgumentError
from clue_core.errors import ClueError


def _refused(call, says: str) -> None:
    with pytest.raises(ArgumentError, match=says) as refused:
        call()
    assert isinstance(refused.value, ClueError) and isinstance(refused.value, TypeError)


def test_submit_with_no_output_is_an_argument_error(tmp_path: Path):
    _refused(lambda: api.submit(tmp_path, None), r"^output: expected the path of the zip to write")  # type: ignore[arg-type]
    _refused(lambda: api.submit(tmp_path, 3), r"^output: expected a path")  # type: ignore[arg-type]


@pytest.mark.parametrize("call", ["run", "plan", "evaluate", "submit", "report"])
def test_a_kernel_that_is_not_one_is_an_argument_error(tmp_path: Path, monkeypatch, call: str):
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    calls = {
        "run": lambda: api.run("afqmc", "baseline", sample=True, output_dir=tmp_path / "r", kernel="k", echo=None),
        "plan": lambda: api.plan("afqmc", "baseline", sample=True, kernel="k"),
        "evaluate": lambda: api.evaluate("afqmc", tmp_path / "p.json", sample=True, kernel="k"),
        "submit": lambda: api.submit(tmp_path, tmp_path / "s.zip", kernel="k"),
        "report": lambda: api.report([tmp_path], kernel="k"),
    }
    _refused(calls[call], r"^kernel: expected a clue_core.kernel.Kernel, got str 'k'")
    assert not (tmp_path / "r").exists() and not (tmp_path / "s.zip").exists()


def test_an_echo_that_is_no_function_is_an_argument_error(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    _refused(lambda: api.run("afqmc", "baseline", sample=True, output_dir=tmp_path / "r", echo="loud"),
             r"^echo: expected a function of one line \(or None for silence\), got str 'loud'")
    assert not (tmp_path / "r").exists()


def test_invoke_command_checks_its_name_and_arguments():
    _refused(lambda: api.invoke_command(None, 5, []), r"^name: expected a command name, got int 5")  # type: ignore[arg-type]
    _refused(lambda: api.invoke_command(None, "list", "tasks"), r"^args: expected a list of argument texts, got str")
    _refused(lambda: api.invoke_command(None, "list", ["tasks", 1]), r"^args: expected a list")  # type: ignore[list-item]
    _refused(lambda: api.invoke_command("k", "list", []), r"^kernel: expected")  # type: ignore[arg-type]
