"""``--resume`` of a complete LLM run with another ``circular`` or ``prompt_variants`` is refused (its
metrics would lack what was asked), and a run made before such a setting existed resumes as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("setting", ["circular=all", "prompt_variants=all"])
def test_a_complete_run_with_another_value_is_not_left_as_it_is(run_cli, tmp_path: Path, setting: str) -> None:
    first = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "-o", tmp_path)
    assert first.exit_code == 0, first.output
    again = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "--set", setting, "-o", tmp_path, "--resume")
    assert again.exit_code == 2, again.output
    name = setting.split("=")[0]
    assert f"setting {name}" in again.output and "--overwrite" in again.output, again.output
    assert "nothing to resume" not in again.output


def test_a_run_older_than_the_settings_resumes_with_their_defaults(run_cli, tmp_path: Path) -> None:
    first = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "-o", tmp_path)
    assert first.exit_code == 0, first.output
    manifest_path = tmp_path / "c3" / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    for key in ("settings", "schedule"):  # as code from before the two settings wrote it
        for name in ("circular", "prompt_variants"):
            manifest.get(key, {}).pop(name, None)
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    again = run_cli("run", "c3", "--model", "llm-tiny", "--sample", "-o", tmp_path, "--resume")
    assert again.exit_code == 0, again.output
    assert "already complete" in again.output, again.output
