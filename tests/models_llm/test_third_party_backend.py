"""A backend written as a third party would: one file and one registration line, both taken from
docs/writing-a-plugin.md, installed as a package would be (a dist-info with the entry point) and run end to
end through ``clue-core run`` on the bundled sample."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-a-plugin.md"
SECTION = "## A backend for the LLM models (one file, one line)"


def doc_blocks() -> tuple[str, str]:
    """The section's Python file and its pyproject lines, as the page shows them."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ", len(SECTION))]
    [code] = re.findall(r"```python\n(# echo_backend\.py\n.*?)```", section, re.S)
    [toml] = re.findall(r"```toml\n(.*?)```", section, re.S)
    return code, toml


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder on sys.path holding echo_backend.py and the dist-info its pyproject would install."""
    code, toml = doc_blocks()
    group, name, module = re.search(r'\[project\.entry-points\."([^"]+)"\]\n(\w+) = "([\w.]+)"', toml).groups()
    assert (group, name, module) == ("clue_models_llm.backends", "echo", "echo_backend")
    site = tmp_path_factory.mktemp("site")
    (site / "echo_backend.py").write_text(code, encoding="utf-8")
    info = site / "echo_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-backend\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {module}\n", encoding="utf-8")  # as pip writes it
    return site


def clue(site: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "CLUE_HOME": str(home), "CLUE_PROGRESS": "off"}
    return subprocess.run([sys.executable, "-m", "clue_core", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_the_doc_backend_is_one_file_and_one_line(installed: Path, tmp_path: Path) -> None:
    listed = clue(installed, tmp_path, "list", "models", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    echo = rows["echo"]
    assert echo["plugin"] == "clue-models-llm" and echo["family"] and not echo["trains"]
    assert echo["factory"] == "clue_models_llm.factory:create.echo"
    assert "answers every choice by a fixed rule" in echo["description"]


def test_the_doc_backend_runs_a_task_end_to_end(installed: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    result = clue(installed, tmp_path, "run", "afqmc", "--model", "echo:first", "--sample", "-o", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    manifest = json.loads((out / "afqmc" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["model"] == "echo:first"
    assert manifest["model_info"]["model"] == {"source": "echo", "rule": "first"}
    assert manifest["model_info"]["device"] == "none"
    predictions = [json.loads(line) for line in (out / "afqmc" / "predictions" / "dev.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert len(predictions) == 16  # the sample's dev split
    for prediction in predictions:  # the first choice, always, scored as the rule says
        raw = prediction["raw"]
        assert raw["answer"] == raw["continuations"][0] == "不同" and prediction["prediction"] == "0"
        assert raw["logprobs"] == [0.0, -1.0]
    assert json.loads((out / "afqmc" / "metrics.json").read_text(encoding="utf-8"))


def test_the_doc_backend_refuses_a_missing_or_unknown_rule(installed: Path, tmp_path: Path) -> None:
    bare = clue(installed, tmp_path, "run", "afqmc", "--model", "echo", "--sample", "-o", str(tmp_path / "a"))
    assert bare.returncode == 2
    assert "error: model 'echo' needs a rule: echo:<first or longest>" in bare.stdout + bare.stderr
    wrong = clue(installed, tmp_path, "run", "afqmc", "--model", "echo:last", "--sample", "-o", str(tmp_path / "b"))
    assert wrong.returncode == 2 and "echo:last: the rule is one of first, longest" in wrong.stdout + wrong.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
