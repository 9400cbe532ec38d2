"""Every input the command refuses: one line naming the file (and line and field), exit 2, nothing written."""

from __future__ import annotations

import json

import pytest

from tests.compare.fixtures import record, write_run

QUESTIONS = [("q1", "计算", 8.0), ("q2", "知识百科", 6.0), ("q3", "角色扮演", 7.0)]


def _expect_error(result, message: str, out) -> None:
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.output
    assert not (out / "comparison.json").exists()


@pytest.fixture
def ref(tmp_path):
    return write_run(tmp_path / "ref", "ref", QUESTIONS)


def _bad_records(**changes):
    """Records of QUESTIONS with the second one's scoring changed (None deletes a key)."""
    records = [record(*q) for q in QUESTIONS]
    for key, value in changes.items():
        if value is None:
            records[1]["scoring"].pop(key)
        else:
            records[1]["scoring"][key] = value
    return records


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (_bad_records(points=11), "dev.jsonl:2 (q2): field 'scoring.points': expected a number from 0 to 10 or null"),
        (_bad_records(points="8"), "field 'scoring.points'"),
        (_bad_records(method="vote"), "dev.jsonl:2 (q2): field 'scoring.method': expected one of judge, "
                                      "constraints, tool_call"),
        (_bad_records(dimension=None), "dev.jsonl:2 (q2): field 'scoring.dimension': expected a non-empty string"),
        (_bad_records(category=""), "field 'scoring.category'"),
        (_bad_records(pairwise={"verdict": "draw"}), "field 'scoring.pairwise.verdict': expected win, tie, loss"),
        (_bad_records(judge="8"), "field 'scoring.judge': expected an object"),
        ([record(*QUESTIONS[0]), {"id": "q2", "prediction": "x"}, record(*QUESTIONS[2])],
         "dev.jsonl:2 (q2): field 'scoring': missing: the record was not scored"),
        ([record(*QUESTIONS[0]), record(*QUESTIONS[0])],
         "dev.jsonl:2 (q1): field 'id': duplicate id (first on line 1)"),
        ([{**record(*QUESTIONS[0]), "id": None}], "dev.jsonl:1: field 'id'"),
        ([], "dev.jsonl: no questions"),
    ],
)
def test_bad_records(compare, ref, tmp_path, records, message) -> None:
    run = write_run(tmp_path / "a", "a", [], records=records)
    _expect_error(compare(run, "--reference", ref, "-o", tmp_path / "out"), message, tmp_path / "out")


def test_broken_json_line(compare, ref, tmp_path) -> None:
    run = write_run(tmp_path / "a", "a", QUESTIONS)
    with (run / "superclue" / "predictions" / "dev.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("{broken\n")
    _expect_error(compare(run, "--reference", ref, "-o", tmp_path / "out"), "dev.jsonl:4: invalid JSON",
                  tmp_path / "out")


def test_not_complete_runs(compare, ref, tmp_path) -> None:
    out = tmp_path / "out"
    _expect_error(compare(tmp_path / "nowhere", "--reference", ref, "-o", out), "nowhere: no such run folder", out)
    (tmp_path / "empty").mkdir()
    _expect_error(compare(tmp_path / "empty", "--reference", ref, "-o", out),
                  "empty: no superclue run here (no superclue/ folder and no manifest.json)", out)
    running = write_run(tmp_path / "running", "a", QUESTIONS, status="running")
    _expect_error(compare(running, "--reference", ref, "-o", out), "not a complete run (status 'running'", out)
    other = write_run(tmp_path / "other", "a", QUESTIONS, task="afqmc")
    _expect_error(compare(other / "afqmc", "--reference", ref, "-o", out),
                  "metrics.json: field 'task': a run of 'afqmc', not 'superclue'", out)
    no_records = write_run(tmp_path / "norecords", "a", QUESTIONS)
    (no_records / "superclue" / "predictions" / "dev.jsonl").unlink()
    _expect_error(compare(no_records, "--reference", ref, "-o", out),
                  "not a complete run (no predictions/dev.jsonl)", out)
    nameless = write_run(tmp_path / "nameless", "a", QUESTIONS)
    metrics = nameless / "superclue" / "metrics.json"
    metrics.write_text(json.dumps({**json.loads(metrics.read_text(encoding="utf-8")), "model": " "}), encoding="utf-8")
    _expect_error(compare(nameless, "--reference", ref, "-o", out), "metrics.json: field 'model'", out)
    nameless = write_run(tmp_path / "nameless-manifest", "", QUESTIONS)  # the kernel's run reader refuses it
    _expect_error(compare(nameless, "--reference", ref, "-o", out), "manifest.json: field 'model'", out)
    broken = write_run(tmp_path / "broken", "a", QUESTIONS)
    (broken / "superclue" / "metrics.json").write_text("{", encoding="utf-8")
    _expect_error(compare(broken, "--reference", ref, "-o", out), "metrics.json: unreadable", out)


def test_the_task_folder_itself_and_another_task(compare, ref, tmp_path) -> None:
    a = write_run(tmp_path / "a", "a", QUESTIONS)
    assert compare(a / "superclue", "--reference", ref, "-o", tmp_path / "out").exit_code == 0
    mine = write_run(tmp_path / "mine-a", "a", QUESTIONS, task="my-questions")
    mine_ref = write_run(tmp_path / "mine-ref", "ref", QUESTIONS, task="my-questions")
    result = compare(mine, "--reference", mine_ref, "-o", tmp_path / "mine", "--task", "my-questions")
    assert result.exit_code == 0, result.output


def test_different_question_sets_are_refused(compare, ref, tmp_path) -> None:
    fewer = write_run(tmp_path / "a", "a", [*QUESTIONS[:2], ("q9", "计算", 5.0), ("q8", "计算", 5.0)])
    _expect_error(compare(fewer, "--reference", ref, "-o", tmp_path / "out"),
                  "its questions differ from the reference run", tmp_path / "out")
    result = compare(fewer, "--reference", ref, "-o", tmp_path / "out")
    assert "2 id(s) only in this run, 1 only in the reference (e.g. q8, q9)" in result.stderr
    moved = write_run(tmp_path / "b", "b", [("q1", "逻辑推理", 8.0), *QUESTIONS[1:]])
    _expect_error(compare(moved, "--reference", ref, "-o", tmp_path / "out"),
                  "question q1 is 逻辑推理/理科 here and 计算/理科 in the reference run", tmp_path / "out")


def test_a_dimension_in_two_categories(compare, tmp_path) -> None:
    ref = write_run(tmp_path / "ref", "ref", [], records=[record("q1", "计算", 5.0), record("q2", "计算", 6.0,
                                                                                           category="文科")])
    a = write_run(tmp_path / "a", "a", [], records=[record("q1", "计算", 5.0), record("q2", "计算", 6.0,
                                                                                     category="文科")])
    _expect_error(compare(a, "--reference", ref, "-o", tmp_path / "out"),
                  "dimension 计算 is in category 文科 here and 理科 elsewhere", tmp_path / "out")


def test_models_and_outputs(compare, ref, tmp_path) -> None:
    out = tmp_path / "out"
    twin = write_run(tmp_path / "twin", "ref", QUESTIONS)
    _expect_error(compare(twin, "--reference", ref, "-o", out), "are both runs of ref", out)
    _expect_error(compare(ref, "--reference", ref, "-o", out), "nothing to compare", out)
    unjudged = write_run(tmp_path / "unjudged", "u", [(q, d, None) for q, d, _ in QUESTIONS])
    _expect_error(compare(unjudged, "--reference", ref, "-o", out), "no question has points", out)
    a = write_run(tmp_path / "a", "a", QUESTIONS)
    _expect_error(compare(a, "--reference", ref, "-o", out, "--sheet-size", "3"),
                  "--sheet-size goes with --export-sheet", out)
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    result = compare(a, "--reference", ref, "-o", afile)
    assert result.exit_code == 2 and "is a file" in result.stderr


def test_existing_comparison_needs_force(compare, ref, tmp_path) -> None:
    a = write_run(tmp_path / "a", "a", QUESTIONS)
    out = tmp_path / "out"
    out.mkdir()
    (out / "comparison.json").write_text('{"kept": true}', encoding="utf-8")
    result = compare(a, "--reference", ref, "-o", out)
    assert result.exit_code == 2 and "comparison.json exists; pass --force to replace it" in result.stderr
    assert json.loads((out / "comparison.json").read_text(encoding="utf-8")) == {"kept": True}
    assert compare(a, "--reference", ref, "-o", out, "--force").exit_code == 0
    assert json.loads((out / "comparison.json").read_text(encoding="utf-8"))["reference"] == "ref"
    assert [p.name for p in out.iterdir()] == ["comparison.json"]  # no temporary file left behind


def test_different_judges_are_a_warning(compare, ref, tmp_path) -> None:
    a = write_run(tmp_path / "a", "a", QUESTIONS, settings={"judge": "other-judge"})
    result = compare(a, "--reference", ref, "-o", tmp_path / "out")
    assert result.exit_code == 0
    assert "judged by different judges (judge-model, other-judge)" in result.stderr
