"""Model and file names reach the terminal escaped: an OSC in a model name (``ESC ] 0 ; pwned BEL`` sets the
terminal's title) was printed raw by compare's tables, its warnings and its one-line refusals."""

from __future__ import annotations

import json

from tests.compare.fixtures import write_run

OSC = "\x1b]0;pwned\x07"
SHOWN = "\\x1b]0;pwned\\x07"


def test_compare_tables_and_warnings_escape_a_model_name(compare, tmp_path) -> None:
    reference = write_run(tmp_path / "ref", "ref", [("q1", "计算", 5.0), ("q2", "计算", 6.0)])
    other = write_run(tmp_path / "m", f"m{OSC}", [("q1", "计算", 7.0), ("q2", "计算", 3.0)])
    third = write_run(tmp_path / "n", "n", [("q1", "计算", 4.0), ("q2", "计算", 8.0)])
    human = tmp_path / "h.json"
    human.write_text(json.dumps({"ref": 1, f"m{OSC}": 2, "n": 3, f"x{OSC}": 4}), encoding="utf-8")
    result = compare(other, third, "--reference", reference, "-o", tmp_path / "out", "--human", human)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    tables = result.stdout.splitlines()
    assert sum(line.startswith(f"m{SHOWN}  ") for line in tables) == 2  # the scores and the ratings table
    assert f"warning: {human}: x{SHOWN} has a human score but is not among the compared models" in result.stderr
    stored = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    assert f"m{OSC}" in [m["name"] for m in stored["models"]]  # the file keeps the name as it is


def test_a_refusal_naming_a_path_escapes_it(compare, tmp_path) -> None:
    reference = write_run(tmp_path / "ref", "ref", [("q1", "计算", 5.0)])
    missing = tmp_path / f"gone{OSC}"
    result = compare(missing, "--reference", reference, "-o", tmp_path / "out")
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and f"gone{SHOWN}" in result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
