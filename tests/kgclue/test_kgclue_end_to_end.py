"""KgCLUE through the CLI, in-process: ``run --sample`` with and without a knowledge base, ``submit``
of the run's ``kgclue_predict.json`` and ``evaluate`` of files in the leaderboard's and the run's format.

The model is the tests' tiny ``kbqa_triple`` model (first candidate, else a memorised train answer),
registered on an isolated kernel beside the plugin: the task side is what is under test.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path

import pytest

from clue_tasks_kgclue import hooks

SAMPLE = Path(hooks.__file__).parent / "samples" / "kgclue"
DATA = Path(__file__).parent / "data"


def _run(run_cli, kernel, out: Path, *extra: str) -> dict:
    result = run_cli("run", "kgclue", "--model", "kg-first-candidate", "--sample", "-o", out, *extra, kernel=kernel)
    assert result.exit_code == 0, result.output
    return json.loads((out / "kgclue" / "metrics.json").read_text(encoding="utf-8"))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_with_the_samples_knowledge_base_the_first_candidate_answers_dev(run_cli, kernel, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    metrics = _run(run_cli, kernel, out, "--set", "kb=Knowledge.txt")
    # the sample's KB holds each sampled question's own triple, and the longest name found is its subject
    assert metrics["dev"]["emf1"] == 100.0 and metrics["dev"]["malformed"] == 0
    assert metrics["test_public"]["emf1"] == 100.0  # scored beside dev, under its own name
    run = out / "kgclue"
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    kb = str((SAMPLE / "Knowledge.txt").resolve())
    assert manifest["data"]["files"][kb] == hashlib.sha256((SAMPLE / "Knowledge.txt").read_bytes()).hexdigest()
    assert manifest["settings"]["kb"] == "Knowledge.txt"
    records = _lines(run / "predictions" / "dev.jsonl")
    gold = _lines(SAMPLE / "dev.json")
    assert [r["gold"] for r in records] == [g["answer"] for g in gold]
    # dev id 140's object starts with a no-break space; the KB's value is stripped (as es.py reads it):
    # another string, the same normalised answer, so still an exact match
    assert gold[15]["id"] == 140 and gold[15]["answer"].endswith(" ||| \xa021.44 米")
    assert [r["prediction"] for r in records] == [g["answer"].replace("\xa0", "") for g in gold]
    submission = _lines(run / "submission" / "kgclue_predict.json")
    test = _lines(SAMPLE / "test.json")
    assert [s["id"] for s in submission] == [t["id"] for t in test]
    assert all(len(s["answer"].split(" ||| ")) == 3 for s in submission)
    # test 0 (刘质平) names no entity of the sample's KB, test 5 (三泽市) does: its triple comes from another file
    assert submission[0]["answer"] == " |||  ||| " and submission[5]["answer"].startswith("三泽市")

    zipped = tmp_path / "kgclue_predict.zip"
    submitted = run_cli("submit", out, "-o", zipped, kernel=kernel)
    assert submitted.exit_code == 0, submitted.output
    with zipfile.ZipFile(zipped) as archive:
        assert archive.namelist() == ["kgclue_predict.json"]
        assert archive.read("kgclue_predict.json") == (run / "submission" / "kgclue_predict.json").read_bytes()

    evaluated = run_cli("evaluate", "kgclue", run / "predictions" / "dev.jsonl", "--sample", "--split", "dev",
                        "--json", kernel=kernel)
    assert evaluated.exit_code == 0, evaluated.output
    assert json.loads(evaluated.output)["emf1"] == 100.0


def test_without_a_knowledge_base_there_are_no_candidates(run_cli, kernel, tmp_path: Path) -> None:
    metrics = _run(run_cli, kernel, tmp_path / "runs")
    # no candidate, no dev question seen in train: three empty parts, every part wrong, none malformed
    assert metrics["dev"]["emf1"] == 0.0 and metrics["dev"]["f1_all"] == 0.0 and metrics["dev"]["malformed"] == 0
    manifest = json.loads((tmp_path / "runs" / "kgclue" / "manifest.json").read_text(encoding="utf-8"))
    assert not any(name.endswith("Knowledge.txt") for name in manifest["data"]["files"])


def test_evaluate_a_leaderboard_format_file_on_dev_as_the_official_script(run_cli, kernel, tmp_path: Path) -> None:
    official = json.loads((DATA / "official.json").read_text(encoding="utf-8"))["dev_first_10_of_16"]
    short = tmp_path / "dev_predict.json"
    short.write_text("".join(line + "\n" for line in (SAMPLE / "dev.json").read_text(encoding="utf-8")
                             .splitlines()[:10]), encoding="utf-8")
    refused = run_cli("evaluate", "kgclue", short, "--sample", "--split", "dev", kernel=kernel)
    assert refused.exit_code == 2
    assert refused.stderr.strip().splitlines() == [f"error: {short}: no prediction for 6 of 16 examples, first id 10"]
    result = run_cli("evaluate", "kgclue", short, "--sample", "--split", "dev", "--allow-missing", "--json",
                     kernel=kernel)
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert f"{scores['emf1']:.3f}" == official["EMF1"] and f"{scores['f1_all']:.3f}" == official["F1_All"]


def test_evaluate_counts_malformed_answers_instead_of_crashing(run_cli, kernel, tmp_path: Path) -> None:
    lines = _lines(SAMPLE / "dev.json")
    lines[0]["answer"] = ""
    lines[1]["answer"] = "a|||b|||c"
    lines[2]["answer"] = "a ||| b ||| c ||| d"
    path = tmp_path / "dev_predict.json"
    path.write_text("".join(json.dumps({"id": r["id"], "answer": r["answer"]}, ensure_ascii=False) + "\n"
                            for r in lines), encoding="utf-8")
    result = run_cli("evaluate", "kgclue", path, "--sample", "--split", "dev", "--json", kernel=kernel)
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["malformed"] == 3 and scores["em_all"] == pytest.approx(100 * 13 / 16)


def test_a_line_without_an_answer_is_one_error_line(run_cli, kernel, tmp_path: Path) -> None:
    path = tmp_path / "dev_predict.json"
    path.write_text('{"id": 0, "answer": "a ||| b ||| c"}\n{"id": 1}\n', encoding="utf-8")
    result = run_cli("evaluate", "kgclue", path, "--sample", "--split", "dev", kernel=kernel)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"error: {path}:2: field 'answer': missing"]


def test_an_answer_that_is_no_string_is_one_error_line(run_cli, kernel, tmp_path: Path) -> None:
    path = tmp_path / "dev_predict.json"
    path.write_text('{"id": 0, "answer": ["s", "p", "o"]}\n', encoding="utf-8")
    result = run_cli("evaluate", "kgclue", path, "--sample", "--split", "dev", "--allow-missing", kernel=kernel)
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    # the field is named by the leaderboard plugin's evaluate ('label' for every leaderboard file today)
    assert line.startswith(f"error: {path}:1: field ")
    assert line.endswith(": expected an answer string 'subject ||| predicate ||| object', got list")


def test_the_kind_and_the_task_are_listed(run_cli, kernel) -> None:
    kinds = run_cli("list", "kinds", kernel=kernel)
    assert kinds.exit_code == 0
    assert re.search(r"^kbqa_triple +the answer text 'subject \|\|\| predicate \|\|\| object'.* question, candidates "
                     r"+clue-tasks-kgclue ", kinds.output, flags=re.M), kinds.output
    info = run_cli("info", "kgclue", kernel=kernel)
    assert info.exit_code == 0 and "scored beside dev: test_public" in info.output
    assert "1.0   split test       → kgclue_predict.json" in info.output
