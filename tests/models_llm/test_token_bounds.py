"""``max_new_tokens`` and ``thinking_tokens`` have a declared maximum (32768): llm-tiny never writes an
end-of-sequence token, so ``--set mode=generate --set max_new_tokens=99999999999999999999`` generated
for ten minutes and more. Now the value is refused at planning, one line, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("name", ["max_new_tokens", "thinking_tokens"])
@pytest.mark.parametrize("dry", [(), ("--dry-run",)])
def test_an_absurd_token_budget_is_one_line_at_planning(run_cli, tmp_path: Path, name: str, dry: tuple) -> None:
    out = tmp_path / "out"
    result = run_cli("run", "tnews", "-m", "llm-tiny", "--sample", "--limit", "2", *dry, "--set", "mode=generate",
                     "--set", f"{name}=99999999999999999999", "-o", out)
    assert result.exit_code == 2, result.output
    assert result.output == f"error: setting '{name}' (--set): must be at most 32768, " \
                            f"got '99999999999999999999'\n"
    assert not out.exists()


def test_the_largest_budget_plans(run_cli, tmp_path: Path) -> None:
    result = run_cli("run", "tnews", "-m", "llm-tiny", "--sample", "--limit", "2", "--dry-run",
                     "--set", "mode=generate", "--set", "max_new_tokens=32768", "--set", "thinking_tokens=32768",
                     "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "max_new_tokens = 32768" in result.output
