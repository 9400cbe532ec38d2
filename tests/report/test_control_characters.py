"""report.md and index.html show a name's terminal controls escaped, as every printed line does: a model
named with ``ESC ] 0 ; … BEL`` set the terminal's title when report.md was shown with ``cat``, ``ESC [ 31 m``
coloured the rest of it, and a bidi override (U+202E) reversed the rest of its line or cell in any viewer."""

from __future__ import annotations

import re
from pathlib import Path

from clue_report.kit import escape, md_text
from tests.report.fixtures import write_run

HOSTILE = "m\x1b]0;pwned\x07\u202e\x1b[31m\x9b2J"
SHOWN = "m\\x1b]0;pwned\\x07\\u202e\\x1b[31m\\x9b2J"
MD_SHOWN = SHOWN.replace("]", "\\]").replace("[", "\\[")  # brackets are Markdown's
#: What no report file may hold raw (tab, newline and CR are layout in HTML and Markdown).
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_md_text_and_escape_show_control_characters_as_escapes() -> None:
    assert md_text(HOSTILE) == MD_SHOWN
    assert md_text("a\tb\r\nc") == "a b  c"
    assert escape(HOSTILE + "<\t\n\r") == SHOWN + "&lt;\t\n\r"
    assert escape("文心 hf-tiny") == "文心 hf-tiny"


def test_a_hostile_model_name_reaches_no_report_file_raw(run_cli, kernel, tmp_path: Path) -> None:
    write_run(kernel, tmp_path / "runs", "afqmc", model=HOSTILE)
    result = run_cli("report", tmp_path / "runs", "-o", tmp_path / "report", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert not CONTROL.search(result.output)
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert not CONTROL.search(markdown) and MD_SHOWN in markdown
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    outside_data = re.sub(r"<script type='application/json' id='explorer-data'>.*?</script>", "", page, flags=re.S)
    assert not CONTROL.search(outside_data) and SHOWN in outside_data


def test_the_terminal_summary_escapes_a_row_label(run_cli, kernel, tmp_path: Path) -> None:
    """With two rows each group line starts with the row's label (a model name, a sweep's grid values):
    it was printed raw, where the table above it was escaped."""
    import json

    write_run(kernel, tmp_path / "runs" / "a", "afqmc", model=HOSTILE)
    write_run(kernel, tmp_path / "runs" / "b", "afqmc", model="llm:other")
    folders = (tmp_path / "runs" / "a", tmp_path / "runs" / "b")
    result = run_cli("report", *folders, kernel=kernel)
    assert result.exit_code == 0, result.output
    assert not CONTROL.search(result.output.replace("\n", ""))
    assert any(line.startswith(SHOWN) and "CLUE 1.1 classification" in line for line in result.output.splitlines())
    as_json = run_cli("report", *folders, "--json", kernel=kernel)
    assert as_json.exit_code == 0 and not CONTROL.search(as_json.output.replace("\n", ""))
    assert HOSTILE in {row["label"].split(" · ")[0] for row in json.loads(as_json.output)["rows"]}  # the same JSON
