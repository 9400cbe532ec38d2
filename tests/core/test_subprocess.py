"""A few deliberate subprocess tests: the installed entry points, the console script,
start-up imports, and a broken third-party distribution on the path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
HEAVY = ("torch", "transformers", "accelerate", "datasets")
SCRIPT = Path(sys.executable).with_name("clue-core")


def run(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("CLUE_STRICT_PLUGINS", None)
    return subprocess.run(args, capture_output=True, text=True, env=full_env, cwd=cwd, timeout=120)


@pytest.mark.parametrize("command", [["list"], ["list", "tasks"], ["list", "models"], ["--help"], ["info", "tnews"]])
def test_startup_commands_import_nothing_heavy(command):
    result = run([sys.executable, "-X", "importtime", "-m", "clue_core", *command])
    assert result.returncode == 0, result.stderr
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time")}
    top_level = {name.split(".")[0] for name in imported}
    assert not top_level & set(HEAVY), sorted(top_level & set(HEAVY))
    assert "clue_core.cli" in imported  # the measurement itself worked


def test_console_script_lists_installed_distributions_with_versions():
    result = run([str(SCRIPT), "list", "--json"])
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    expected = {"builtin": "clue-core", "clue-tasks-classic": "clue-tasks-classic", "clue-tasks-mrc": "clue-tasks-mrc",
                "clue-models-hf": "clue-models-hf", "clue-example-plugin": "clue-example-plugin"}
    for name, distribution in expected.items():
        assert rows[name]["distribution"] == distribution
        assert rows[name]["version"] and rows[name]["status"] == "ok", rows[name]


def test_broken_distribution_on_the_path(tmp_path):
    """A real (if tiny) third-party distribution whose plugin cannot be imported."""
    site = tmp_path / "site"
    dist = site / "clue_broken_plugin-0.0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: clue-broken-plugin\nVersion: 0.0.1\n")
    (dist / "entry_points.txt").write_text("[clue_core]\nclue-broken-plugin = clue_broken_plugin\n")
    (site / "clue_broken_plugin.py").write_text("import numpy_but_misspelled\n")
    env = {"PYTHONPATH": str(site), "CLUE_HOME": str(tmp_path / "home")}
    listing = run([str(SCRIPT), "list"], env=env)
    assert listing.returncode == 0, listing.stderr
    row = next(line for line in listing.stdout.splitlines() if line.startswith("clue-broken-plugin"))
    assert "0.0.1" in row and "error: import failed: ModuleNotFoundError" in row and "numpy_but_misspelled" in row
    result = run([str(SCRIPT), "run", "review-sentiment", "--model", "baseline", "--sample", "-o", str(tmp_path / "r")],
                 env=env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "r" / "review-sentiment" / "submission" / "review_sentiment_predict.json").is_file()
    disabled = run([str(SCRIPT), "list"], env={**env, "CLUE_DISABLE_PLUGINS": "clue-broken-plugin"})
    assert "disabled" in next(x for x in disabled.stdout.splitlines() if x.startswith("clue-broken-plugin"))
    strict = run([str(SCRIPT), "--strict", "list"], env=env)
    assert strict.returncode == 1 and "Traceback" in strict.stderr and "numpy_but_misspelled" in strict.stderr


def test_bad_input_through_the_console_script_has_no_traceback(tmp_path):
    result = run([str(SCRIPT), "evaluate", "review-sentiment", str(tmp_path / "missing.json"), "--sample"],
                 env={"CLUE_HOME": str(tmp_path)})
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {tmp_path / 'missing.json'}: no such predictions file"
