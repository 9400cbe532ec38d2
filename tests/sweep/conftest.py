"""Fixtures of the sweep tests: sweep files written from Python values, and hf-tiny at its smallest.

Trials use the offline hf-tiny backbone at one layer of 32 units and a few optimizer steps on
the bundled samples, so a trial trains in a second or two; the in-process executor
(``--workers 0``) is used wherever worker processes are not what is tested (each worker
imports torch afresh).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

#: Settings every hf-tiny trial of these tests shares: a few steps of the smallest backbone.
TINY: dict[str, Any] = {"progress": False, "max_steps": 2, "max_length": 32, "tiny_hidden_size": 32,
                        "tiny_num_layers": 1, "tiny_intermediate_size": 64, "tiny_num_heads": 2}


def toml_value(value: Any) -> str:
    if isinstance(value, dict):
        raise TypeError("tables are written by write_sweep")
    return json.dumps(value)  # lists, strings, numbers and booleans are spelled alike in TOML


def write_sweep(path: Path, **fields: Any) -> Path:
    """A sweep file: top-level keys first, then each table (``settings``, ``grid``, ``resources``)."""
    lines = [f"{k} = {toml_value(v)}" for k, v in fields.items() if not isinstance(v, dict)]
    for name, table in fields.items():
        if isinstance(table, dict):
            lines += [f"[{name}]", *(f"{k} = {toml_value(v)}" for k, v in table.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def summary(root: Path) -> dict[str, Any]:
    return json.loads((root / "summary.json").read_text(encoding="utf-8"))


@pytest.fixture
def sweep_file(tmp_path: Path):
    def make(name: str = "sweep.toml", **fields: Any) -> Path:
        return write_sweep(tmp_path / name, **fields)
    return make
