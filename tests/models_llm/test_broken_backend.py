"""A third party's backend module that fails to import does not take clue-models-llm down with it.

Installed as pip would install it (a dist-info with its ``clue_models_llm.backends`` entry point), the
module imports an SDK that is not there. ``clue-core list`` still shows every model of the plugin with
the broken family among them, and using that family is one ``error:`` line naming the package, the
module and the import error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    (folder / "broken_backend.py").write_text("import no_such_llm_sdk  # the SDK this backend needs\n",
                                              encoding="utf-8")
    info = folder / "broken_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-backend\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[clue_models_llm.backends]\nbroken = broken_backend\n", encoding="utf-8")
    return folder


def clue(site: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "CLUE_HOME": str(home), "CLUE_PROGRESS": "off"}
    return subprocess.run([sys.executable, "-m", "clue_core", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_the_plugin_and_the_broken_family_are_still_listed(site: Path, tmp_path: Path) -> None:
    listed = clue(site, tmp_path, "list", "models", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert {"llm", "llm-tiny", "openai", "answers"} <= set(rows)  # the plugin's own models are all there
    broken = rows["broken"]
    assert broken["plugin"] == "clue-models-llm" and broken["family"]
    assert "unavailable" in broken["description"] and "no_such_llm_sdk" in broken["description"]
    plugins = clue(site, tmp_path, "list", "plugins", "--json")
    row = next(p for p in json.loads(plugins.stdout) if p["name"] == "clue-models-llm")
    assert row["status"] == "ok", row


@pytest.mark.parametrize("model", ["broken:some-model", "broken"])
def test_using_it_is_one_line_naming_the_package_and_the_import_error(site: Path, tmp_path: Path,
                                                                       model: str) -> None:
    result = clue(site, tmp_path, "run", "afqmc", "--model", model, "--sample", "-o", str(tmp_path / "out"))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "package broken-backend" in lines[0] and "broken_backend" in lines[0]
    assert "ModuleNotFoundError: No module named 'no_such_llm_sdk'" in lines[0]
    assert "Traceback" not in result.stdout + result.stderr
