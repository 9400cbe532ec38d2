"""``compare``'s float options refuse nan, inf and -inf while parsing (``--tie-margin nan`` made every
game a tie, wrote NaN into comparison.json and exited 0)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.compare.fixtures import write_run


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "1e400"])
def test_compare_refuses_a_non_finite_tie_margin_in_one_line(compare, tmp_path: Path, value: str) -> None:
    reference = write_run(tmp_path / "ref", "ref", [("q1", "计算", 5.0)])
    other = write_run(tmp_path / "m", "m", [("q1", "计算", 6.0)])
    result = compare(other, "--reference", reference, "-o", tmp_path / "out", "--tie-margin", value)
    assert result.exit_code == 2
    assert f"Error: Invalid value for '--tie-margin': '{value}' is not a finite number." in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_compare_refuses_a_non_finite_elo_k(compare, tmp_path: Path, value: str) -> None:
    reference = write_run(tmp_path / "ref", "ref", [("q1", "计算", 5.0)])
    other = write_run(tmp_path / "m", "m", [("q1", "计算", 6.0)])
    result = compare(other, "--reference", reference, "-o", tmp_path / "out", "--elo-k", value)
    assert result.exit_code == 2 and "Invalid value for '--elo-k'" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("margin", "message"), [
    ("NaN", "expected a finite number, got nan"), ("Infinity", "expected a finite number, got inf"),
    ("-1", "expected a number ≥ 0, got -1"),
])
def test_a_comparison_file_with_a_non_finite_tie_margin_is_refused_naming_the_field(
        compare, run_cli, tmp_path: Path, margin: str, message: str) -> None:
    """A comparison.json written before --tie-margin refused nan (or edited by hand): the report named nothing."""
    reference = write_run(tmp_path / "ref", "ref", [("q1", "计算", 5.0)])
    other = write_run(tmp_path / "m", "m", [("q1", "计算", 6.0)])
    assert compare(other, "--reference", reference, "-o", tmp_path / "out").exit_code == 0
    target = tmp_path / "out" / "comparison.json"
    target.write_text(re.sub(r'"tie_margin": [0-9.]+', f'"tie_margin": {margin}', target.read_text(encoding="utf-8")),
                      encoding="utf-8")
    result = run_cli("report", target, "-o", tmp_path / "report")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{target}: field 'tie_margin': {message}" in result.output
    assert not (tmp_path / "report").exists()
