"""``answers:<file>``: recorded answers scored through the same tasks, metrics and run records as a model's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clue_core.plugin import ClueError
from clue_models_llm.backends.recorded import RecordedBackend
from clue_models_llm.recorded_file import RecordedAnswers

SAMPLES = Path(__file__).resolve().parents[2] / "plugins"
AFQMC_DEV = SAMPLES / "clue-tasks-classic" / "clue_tasks_classic" / "samples" / "afqmc" / "dev.json"
SUPERCLUE_DEV = SAMPLES / "clue-tasks-superclue" / "clue_tasks_superclue" / "sample" / "dev.jsonl"
WORDS = {"0": "不同", "1": "相同"}


def afqmc_dev() -> list[dict[str, Any]]:
    return [json.loads(line) for line in AFQMC_DEV.read_text(encoding="utf-8").splitlines() if line.strip()]


def superclue_dev() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SUPERCLUE_DEV.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def run_dir(run_cli, out: Path, task: str, file: Path, *more: str):
    return run_cli("run", task, "--sample", "--model", f"answers:{file}", *more, "-o", out)


def metrics(out: Path, task: str) -> dict[str, Any]:
    return json.loads((out / task / "metrics.json").read_text(encoding="utf-8"))


def predictions(out: Path, task: str) -> list[dict[str, Any]]:
    lines = (out / task / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


# -- the file -----------------------------------------------------------------------------

def test_json_array_and_json_lines_read_the_same(tmp_path) -> None:
    records = [{"id": 1, "answer": "甲"}, {"prompt": "问题", "answer": ["一", "二"]}]
    lines = RecordedAnswers.read(write_jsonl(tmp_path / "a.jsonl", records), "answer", "auto")
    array_file = tmp_path / "a.json"
    array_file.write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")
    array = RecordedAnswers.read(array_file, "answer", "auto")
    assert [(r.id, r.prompt, r.answers) for r in lines.records] == [(r.id, r.prompt, r.answers) for r in array.records]
    assert [r.line for r in lines.records] == [1, 2] and [r.line for r in array.records] == [2, 6]
    assert lines.find(1, "x").by == "id" and lines.find(7, "问题").by == "prompt"


def test_messages_content_is_the_prompt_where_prompt_is_empty(tmp_path) -> None:
    book = RecordedAnswers.read(write_jsonl(tmp_path / "m.jsonl", [
        {"prompt": "", "messages": [{"role": "user", "content": "写一首诗"}], "r1": "诗"}]), "r1", "auto")
    assert book.find("0", "写一首诗").record.answers == ("诗",)


@pytest.mark.parametrize(("text", "expected"), [
    ('{"answer": "a"}\n{"answer": \n', "line 2: not JSON"),
    ('{"answer": "a"}\n[1, 2]\n', "line 2: a JSON array, not an object"),
    ('[{"answer": "a"},\n 3]', "line 2: a JSON number, not an object"),
    ('[{"answer": "a"},\n', "not closed"),
    ('{"answer": 3}\n', "line 1: field 'answer': expected the answer's text or a non-empty list of texts"),
    ('{"answer": ["a", 1]}\n', "got a list of string, number"),
    ('{"answer": []}\n', "field 'answer'"),
    ('{"id": 1.5, "answer": "a"}\n', "line 1: field 'id': expected a string or an integer"),
    ('{"prompt": 3, "answer": "a"}\n', "line 1: field 'prompt': expected text"),
    ('{"id": 1, "answer": "a"}\n\n{"id": "1", "answer": "b"}\n', "line 3: field 'id': '1' is already the id of line 1"),
    ('{"response": "a"}\n{"response": "b"}\n', "no record has the answer field 'answer' (other fields: response)"),
    ("\n\n", "no records"),
])
def test_a_malformed_file_is_one_line_naming_file_line_and_field(tmp_path, text, expected) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ClueError) as caught:
        RecordedAnswers.read(path, "answer", "auto")
    message = str(caught.value)
    assert expected in message and str(path) in message and "\n" not in message


def test_the_identity_is_the_file_content_field_and_matching(tmp_path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [{"id": 0, "answer": "相同"}])
    values = {"answer_field": "answer", "answer_match": "auto"}
    first = RecordedBackend(str(path), values, "answers").describe().identity
    assert first["source"] == "answers" and first["path"] == str(path.resolve()) and first["field"] == "answer"
    assert RecordedBackend(str(path), values, "answers").describe().identity == first
    write_jsonl(path, [{"id": 0, "answer": "不同", "x": "相同"}])
    changed = RecordedBackend(str(path), values, "answers").describe().identity
    assert changed["sha256"] != first["sha256"] and changed["path"] == first["path"]
    assert RecordedBackend(str(path), {**values, "answer_field": "x"}, "answers").describe().identity != changed


# -- CLUE tasks in generation mode --------------------------------------------------------

def test_ids_match_and_label_words_are_extracted(run_cli, tmp_path) -> None:
    rows = afqmc_dev()
    file = write_jsonl(tmp_path / "a.jsonl", [{"id": i, "answer": WORDS[r["label"]]} for i, r in enumerate(rows)])
    result = run_dir(run_cli, tmp_path / "out", "afqmc", file)
    assert result.exit_code == 0, result.output
    found = metrics(tmp_path / "out", "afqmc")
    assert found["dev"]["accuracy"] == 100.0
    recorded = found["model_info"]["recorded"]
    # the test split's ids are 0.. too, but a record matched by id answers one question: the dev one
    assert recorded["matched_by_id"] == len(rows) and recorded["unmatched_records"] == 0
    assert recorded["missing"] == 16  # the test split: no recorded answers, placeholders in the submission
    assert found["model_info"]["model"]["sha256"] == recorded["sha256"]
    assert found["model_info"]["decoding"]["mode"] == "generate"
    assert "cache" not in found["model_info"]
    first = predictions(tmp_path / "out", "afqmc")[0]
    assert first["raw"]["generation"] == WORDS[rows[0]["label"]] and first["raw"]["recorded"] == {
        "line": 1, "record": 1, "match": "id"}


def test_prompt_matching_and_forced_modes(run_cli, tmp_path) -> None:
    rows = afqmc_dev()
    by_id = write_jsonl(tmp_path / "ids.jsonl", [{"id": i, "answer": WORDS[r["label"]]} for i, r in enumerate(rows)])
    assert run_dir(run_cli, tmp_path / "ids", "afqmc", by_id).exit_code == 0
    prompts = [p["raw"]["prompt"] for p in predictions(tmp_path / "ids", "afqmc")]
    # the prompt as the task asks it, with ids that name other questions: auto takes the id first
    shifted = [{"id": i + 1, "prompt": prompt, "answer": WORDS[r["label"]]}
               for i, (prompt, r) in enumerate(zip(prompts, rows))]
    file = write_jsonl(tmp_path / "p.jsonl", shifted)
    assert run_dir(run_cli, tmp_path / "prompt", "afqmc", file, "--set", "answer_match=prompt").exit_code == 0
    found = metrics(tmp_path / "prompt", "afqmc")
    assert found["dev"]["accuracy"] == 100.0 and found["model_info"]["recorded"]["matched_by_prompt"] == len(rows)
    assert run_dir(run_cli, tmp_path / "auto", "afqmc", file).exit_code == 0
    auto = metrics(tmp_path / "auto", "afqmc")["model_info"]["recorded"]
    # ids 1..15 name other questions than the prompts they hold; question 0 has no id: its prompt finds it
    assert auto["matched_by_id"] == len(rows) - 1 and auto["matched_by_prompt"] == 1
    no_ids = write_jsonl(tmp_path / "n.jsonl", [{k: v for k, v in r.items() if k != "id"} for r in shifted])
    result = run_dir(run_cli, tmp_path / "id", "afqmc", no_ids, "--set", "answer_match=id")
    assert result.exit_code == 2 and "none of its 16 records answers any of the 16 questions" in result.output


def test_missing_answers_are_counted_warned_and_scored_as_wrong(run_cli, tmp_path) -> None:
    rows = afqmc_dev()
    answered = [{"id": i, "answer": WORDS[r["label"]]} for i, r in enumerate(rows)][4:]
    stray = [{"id": "elsewhere", "answer": "相同"}, {"id": 99, "answer": None}]
    file = write_jsonl(tmp_path / "a.jsonl", [*answered, *stray])
    result = run_dir(run_cli, tmp_path / "out", "afqmc", file)
    assert result.exit_code == 0, result.output
    assert "warning: 4 of 16 questions of the dev split have no recorded answer" in result.output
    assert "warning: 16 of 16 questions of the test 1.1 split have no recorded answer" in result.output
    assert "warning: 2 of the 14 records" in result.output and "answer no question asked" in result.output
    found = metrics(tmp_path / "out", "afqmc")
    assert found["dev"]["accuracy"] == pytest.approx(100 * 12 / 16)
    recorded = found["model_info"]["recorded"]
    assert (recorded["records"], recorded["records_without_answer"], recorded["unmatched_records"]) == (14, 1, 2)
    missing = predictions(tmp_path / "out", "afqmc")[:4]
    assert all(p["prediction"] is None and p["raw"]["missing"] and p["raw"]["recorded"] is None for p in missing)
    manifest = json.loads((tmp_path / "out" / "afqmc" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["model_info"]["recorded"]["missing"] == recorded["missing"]


def test_an_empty_answer_is_an_answer_checked_like_any_other(run_cli, tmp_path) -> None:
    rows = afqmc_dev()
    file = write_jsonl(tmp_path / "a.jsonl", [{"id": i, "answer": "" if i < 3 else WORDS[r["label"]]}
                                              for i, r in enumerate(rows)])
    assert run_dir(run_cli, tmp_path / "out", "afqmc", file).exit_code == 0
    found = metrics(tmp_path / "out", "afqmc")
    assert found["dev"]["accuracy"] == pytest.approx(100 * 13 / 16)
    recorded = found["model_info"]["recorded"]
    assert recorded["empty"] == 3 and recorded["missing"] == 16  # the test split only
    assert found["model_info"]["unextracted"] == 3


def test_a_file_that_matches_nothing_is_one_line(run_cli, tmp_path) -> None:
    file = write_jsonl(tmp_path / "a.jsonl", [{"id": "x", "prompt": "无关", "answer": "相同"}])
    result = run_dir(run_cli, tmp_path / "out", "afqmc", file)
    assert result.exit_code == 2 and "none of its 1 records" in result.output and str(file) in result.output
    assert not (tmp_path / "out" / "afqmc").exists()


def test_likelihood_is_refused_and_a_malformed_file_stops_before_any_task(run_cli, tmp_path) -> None:
    file = write_jsonl(tmp_path / "a.jsonl", [{"id": 0, "answer": "相同"}])
    result = run_dir(run_cli, tmp_path / "ll", "afqmc", file, "--set", "mode=loglikelihood")
    assert result.exit_code == 2 and "no log-probabilities" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 0, "answer": "相同"}\n{oops\n', encoding="utf-8")
    result = run_dir(run_cli, tmp_path / "bad", "afqmc", bad)
    assert result.exit_code == 2 and f"{bad.resolve()} line 2: not JSON" in result.output
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1


# -- open questions -----------------------------------------------------------------------

def open_records(rows: list[dict[str, Any]], field: str = "response") -> list[dict[str, Any]]:
    records = []
    for row in rows:
        turns = [row["turns"]] if isinstance(row["turns"], str) else row["turns"]
        answer: Any = f"<think>想</think> 答：{row['id']} " if len(turns) == 1 else [f"第{i}轮" for i in
                                                                                    range(len(turns))]
        records.append({"id": row["id"], field: answer})
    return records


def test_open_questions_keep_every_turn_as_recorded(run_cli, tmp_path) -> None:
    rows = superclue_dev()
    file = write_jsonl(tmp_path / "s.jsonl", open_records(rows))
    result = run_dir(run_cli, tmp_path / "out", "superclue", file, "--set", "answer_field=response")
    assert result.exit_code == 0, result.output
    by_id = {p["id"]: p for p in predictions(tmp_path / "out", "superclue")}
    multi = next(r for r in rows if not isinstance(r["turns"], str) and len(r["turns"]) > 1)
    said = by_id[multi["id"]]
    assert said["raw"]["answers"] == [f"第{i}轮" for i in range(len(multi["turns"]))]
    assert len(said["raw"]["prompts"]) == len(multi["turns"]) and said["prediction"] == said["raw"]["answers"][-1]
    assert "第0轮" in said["raw"]["prompts"][1]  # the second turn is asked after the first answer
    single = next(r for r in rows if isinstance(r["turns"], str))
    assert by_id[single["id"]]["prediction"] == f"<think>想</think> 答：{single['id']} "  # nothing stripped
    assert metrics(tmp_path / "out", "superclue")["model_info"]["recorded"]["missing"] == 0


def test_a_multi_turn_question_needs_one_answer_per_turn(run_cli, tmp_path) -> None:
    rows = superclue_dev()
    records = open_records(rows)
    multi = next(i for i, r in enumerate(rows) if not isinstance(r["turns"], str) and len(r["turns"]) > 1)
    records[multi]["response"] = "只有一轮"
    file = write_jsonl(tmp_path / "s.jsonl", records)
    result = run_dir(run_cli, tmp_path / "out", "superclue", file, "--set", "answer_field=response")
    assert result.exit_code == 2
    assert f"line {multi + 1}: field 'response': holds one answer, but question" in result.output
    assert "a list of" in result.output and "one per turn" in result.output


def test_open_questions_match_by_first_turn(run_cli, tmp_path) -> None:
    rows = superclue_dev()
    records = [{"prompt": r["turns"] if isinstance(r["turns"], str) else r["turns"][0], **{
        k: v for k, v in rec.items() if k != "id"}} for r, rec in zip(rows, open_records(rows))]
    file = write_jsonl(tmp_path / "s.jsonl", records[:-2])
    result = run_dir(run_cli, tmp_path / "out", "superclue", file, "--set", "answer_field=response")
    assert result.exit_code == 0, result.output
    recorded = metrics(tmp_path / "out", "superclue")["model_info"]["recorded"]
    assert recorded["matched_by_prompt"] == len(rows) - 2 and recorded["missing"] == 2
    assert "warning: 2 of 48 questions of the dev split have no recorded answer" in result.output


@pytest.mark.slow
def test_superclue_end_to_end_with_a_judge(run_cli, tmp_path) -> None:
    rows = superclue_dev()
    file = write_jsonl(tmp_path / "s.jsonl", [*open_records(rows, "my-model")[:-1], {"id": "stray", "my-model": "?"}])
    result = run_dir(run_cli, tmp_path / "out", "superclue", file, "--set", "answer_field=my-model",
                     "--set", "judge=llm-tiny", "--set", "judge.max_new_tokens=8")
    assert result.exit_code == 0, result.output
    found = metrics(tmp_path / "out", "superclue")
    assert found["dev"]["questions"] == len(rows) and found["dev"]["judged"] + found["dev"]["unjudged"] == len(rows)
    recorded = found["model_info"]["recorded"]
    assert (recorded["missing"], recorded["unmatched_records"], recorded["field"]) == (1, 1, "my-model")
    assert "warning: 1 of 48 questions of the dev split have no recorded answer" in result.output
