"""The judge-agreement sheet: seeded, balanced export; fill in; strict import; the share graded 及格 or better."""

from __future__ import annotations

import codecs
import csv
import io
from collections import Counter

import pytest

from clue_tasks_superclue.agreement import sheet_agreement
from clue_tasks_superclue.compare.sheet import COLUMNS, HUMAN
from tests.compare.fixtures import read_comparison, write_run

DIMENSIONS = {"计算": 6, "知识百科": 2, "角色扮演": 4}


def _questions(offset: float):
    questions = []
    for dimension, count in DIMENSIONS.items():
        questions += [{"qid": f"{dimension}-{i}", "dimension": dimension, "points": min(10.0, 4 + i + offset),
                       "question": f"第{i}题\n第二行，有逗号"} for i in range(count)]
    # neither a constraints question, an unparsed judgment nor an unanswered question (0 points, no grade)
    # goes on the sheet
    questions += [{"qid": "hard-1", "dimension": "精确指令遵循", "points": 10, "method": "constraints"},
                  {"qid": "bad-1", "dimension": "计算", "points": None},
                  {"qid": "missing-1", "dimension": "计算", "points": 0.0, "grade": None}]
    return questions


@pytest.fixture
def pair(tmp_path):
    return write_run(tmp_path / "ref", "ref-model", _questions(1)), write_run(tmp_path / "a", "a-model", _questions(0))


def _export(compare, pair, tmp_path, sheet, *extra):
    ref, a = pair
    return compare(a, "--reference", ref, "-o", tmp_path / "out", "--export-sheet", sheet, *extra)


def _rows(sheet):
    raw = sheet.read_bytes()
    assert raw.startswith(codecs.BOM_UTF8)
    return list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")))


def _write(sheet, rows):
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)


def test_export_is_seeded_and_balanced(compare, pair, tmp_path) -> None:
    sheet = tmp_path / "sheet.csv"
    result = _export(compare, pair, tmp_path, sheet, "--sheet-size", "9")
    assert result.exit_code == 0, result.output
    rows = _rows(sheet)
    assert rows[0] == list(COLUMNS) and len(rows) == 10
    body = [dict(zip(rows[0], row)) for row in rows[1:]]
    # 3 dimensions with judged questions: 3 rows each, none from constraints or unparsed judgments
    assert Counter(r["dimension"] for r in body) == {"计算": 3, "知识百科": 3, "角色扮演": 3}
    assert all(r[HUMAN] == "" and r["id"] not in ("hard-1", "bad-1", "missing-1") for r in body)
    first = next(r for r in body if r["model"] == "a-model")
    assert first["question"].startswith(f"第{first['id'].split('-')[1]}题\n第二行，有逗号")
    assert first["answer"] == f"{first['id']} 的回答" and first["judge_reasons"].startswith("理由")
    assert first["run"] == str(tmp_path / "a" / "superclue")
    # the same seed gives the same sheet; another seed another
    again = tmp_path / "again.csv"
    assert _export(compare, pair, tmp_path, again, "--sheet-size", "9", "--force").exit_code == 0
    assert again.read_bytes() == sheet.read_bytes()
    other = tmp_path / "other.csv"
    assert _export(compare, pair, tmp_path, other, "--sheet-size", "9", "--seed", "7", "--force").exit_code == 0
    assert other.read_bytes() != sheet.read_bytes()


def test_export_takes_what_there_is(compare, pair, tmp_path) -> None:
    sheet = tmp_path / "sheet.csv"
    result = _export(compare, pair, tmp_path, sheet, "--sheet-size", "500")
    assert len(_rows(sheet)) == 1 + 2 * sum(DIMENSIONS.values())
    assert "24 judgments to grade (all there are; --sheet-size was 500)" in result.stdout


def test_export_never_replaces_a_sheet(compare, pair, tmp_path) -> None:
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("filled in by a person", encoding="utf-8")
    result = _export(compare, pair, tmp_path, sheet)
    assert result.exit_code == 2 and "pass --force to replace it" in result.stderr
    assert sheet.read_text(encoding="utf-8") == "filled in by a person"
    assert not (tmp_path / "out").exists()


def test_fill_and_import(compare, pair, tmp_path) -> None:
    sheet = tmp_path / "sheet.csv"
    assert _export(compare, pair, tmp_path, sheet, "--sheet-size", "8").exit_code == 0
    rows = _rows(sheet)
    grades = ["优秀", "良好", "及格", "不及格", "良好", "不及格", "优秀", ""]
    for row, grade in zip(rows[1:], grades):
        row[-1] = grade
    _write(sheet, rows)
    ref, a = pair
    result = compare(a, "--reference", ref, "-o", tmp_path / "out", "--import-sheet", sheet, "--force")
    assert result.exit_code == 0, result.output
    agreement = read_comparison(tmp_path / "out")["judge_agreement"]
    # the judge against the person, from the rows as the sheet has them (the run's grade, the person's band)
    graded = [(float(row[COLUMNS.index("judge_grade")]), row[-1], row[COLUMNS.index("model")])
              for row in rows[1:] if row[-1]]
    overall = sheet_agreement([(grade, band) for grade, band, _ in graded], seed=0)
    assert set(overall) == {"acceptable_interval", "band_agreement", "band_agreement_interval", "band_alpha",
                            "band_alpha_interval"}
    by_model = {}
    for model in ("ref-model", "a-model"):
        mine = [(grade, band) for grade, band, owner in graded if owner == model]
        if mine:
            share = round(100 * sum(band in ("优秀", "良好", "及格") for _, band in mine) / len(mine), 2)
            by_model[model] = {"graded": len(mine), "acceptable_share": share, **sheet_agreement(mine, seed=0)}
    assert agreement == {"file": str(sheet), "graded": 7, "ungraded": 1,
                         "by_grade": {"优秀": 2, "良好": 2, "及格": 1, "不及格": 2},
                         "acceptable_share": round(100 * 5 / 7, 2), **overall, "by_model": by_model}
    assert sum(part["graded"] for part in by_model.values()) == 7
    assert "1 row(s) without a 人工评级, left out" in result.stderr
    assert "judge agreement: 71.4% of 7 judgments graded 及格 or better" in result.stdout


def _sheet_with(tmp_path, pair, compare, edit):
    sheet = tmp_path / "sheet.csv"
    assert _export(compare, pair, tmp_path, sheet, "--sheet-size", "4").exit_code == 0
    rows = _rows(sheet)
    for row in rows[1:]:
        row[-1] = "及格"
    edit(rows)
    _write(sheet, rows)
    ref, a = pair
    return compare(a, "--reference", ref, "-o", tmp_path / "out", "--import-sheet", sheet, "--force")


def _set(row, column, value):
    def edit(rows):
        rows[row][COLUMNS.index(column)] = value
    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_set(2, HUMAN, "好"), "sheet.csv:4: column 9 (人工评级): '好' is not one of 优秀, 良好, 及格, 不及格"),
        (_set(1, "model", "nobody"), "sheet.csv:2: column 2 (model): 'nobody' is not one of the compared models"),
        (_set(1, "id", "计算-99"), "sheet.csv:2: column 3 (id): no question '计算-99' in the run of"),
        (_set(1, "id", "hard-1"), "column 3 (id): question 'hard-1' of"),
        (lambda rows: rows.append(list(rows[1])), "column 3 (id):"),
        (lambda rows: rows[0].__setitem__(8, "grade"), "sheet.csv:1: the header has no column '人工评级'"),
        (lambda rows: rows[0].__setitem__(3, "model"), "sheet.csv:1: the header names column 'model' twice"),
        (lambda rows: rows[1].pop(), "sheet.csv:2: 8 columns, the header has 9"),
        (lambda rows: [row.__setitem__(8, "") for row in rows[1:]], "sheet.csv: no row has a 人工评级"),
    ],
)
def test_strict_import(compare, pair, tmp_path, edit, message) -> None:
    result = _sheet_with(tmp_path, pair, compare, edit)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_line_numbers_count_multiline_cells(compare, pair, tmp_path) -> None:
    """Each question holds a newline, so data row k starts on physical line 2k (the header is line 1)."""
    result = _sheet_with(tmp_path, pair, compare, _set(3, HUMAN, "满分"))
    assert "sheet.csv:6: column 9 (人工评级): '满分'" in result.stderr


def test_a_changed_judge_grade_is_a_warning(compare, pair, tmp_path) -> None:
    result = _sheet_with(tmp_path, pair, compare, _set(1, "judge_grade", "1"))
    assert result.exit_code == 0
    assert "sheet.csv:2: the sheet's judge grade 1 is not the run's" in result.stderr


def test_not_utf8(compare, pair, tmp_path) -> None:
    sheet = tmp_path / "sheet.csv"
    sheet.write_bytes("model,id,人工评级\n".encode() + "a-model,计算-1,及格\n".encode("gbk"))
    ref, a = pair
    result = compare(a, "--reference", ref, "-o", tmp_path / "out", "--import-sheet", sheet)
    assert result.exit_code == 2 and "sheet.csv:2: not UTF-8 text" in result.stderr
