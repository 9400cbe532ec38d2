"""CLUENER2020 asked of language models: the task's prompt and parse (clue_tasks_ner.prompting), end to end.

The LLM plugin names no task: it runs the entity_spans kind through the task's ``Prompt.parse`` (and
``answer`` for few-shot demos). Here: the parse's rules (every occurrence, malformed answers), then
``clue-core run cluener2020`` in-process with ``llm-tiny`` (valid predictions, malformed counted) and with
``answers:<file>`` (recorded answers, so the scores are known exactly).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clue_models_llm.hooks as llm_hooks
import clue_tasks_ner.hooks as ner_hooks
from clue_core.kernel import Kernel
from clue_tasks_ner.examples import EntitySpansExample, check_prediction
from clue_tasks_ner.prompting import answer, occurrences, parse

from .conftest import SAMPLE, lines


@pytest.fixture
def llm_kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(ner_hooks, "clue-tasks-ner", distribution="clue-tasks-ner")
    isolated_kernel.register(llm_hooks, "clue-models-llm", distribution="clue-models-llm")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel


def dev_examples() -> list[EntitySpansExample]:
    """The dev sample as the reader gives it ([start, end) spans, line ids)."""
    from clue_tasks_ner.reader import read

    return list(read(ner_hooks.CLUENER2020, SAMPLE, "dev").examples)


# -- the parse ----------------------------------------------------------------------------

TEXT = "台湾的朋友说，台湾和台湾人"


def test_every_occurrence_is_located_left_to_right() -> None:
    example = EntitySpansExample(0, TEXT)
    spans, problem = parse('答案：{"address": ["台湾"], "name": "朋友"}', example)
    assert problem is None
    assert spans == (("address", 0, 2), ("name", 3, 5), ("address", 7, 9), ("address", 10, 12))
    assert occurrences("aaaa", "aa") == [(0, 2), (2, 4)]  # never overlapping itself


def test_keys_aliases_and_odd_values() -> None:
    example = EntitySpansExample(0, "张三在北京的政府工作")
    spans, problem = parse('{"姓名": ["张三", "张三", "李四"], "goverment": ["政府"], "person": ["北京"], '
                           '"address": [1, "北京"], "scene": {"x": 1}}', example)
    assert problem is None  # unknown keys, non-strings and an entity not in the text are left out, not malformed
    assert spans == (("name", 0, 2), ("address", 3, 5), ("government", 6, 8))
    assert parse("{}", example) == ((), None)


@pytest.mark.parametrize("text, why", [("不知道", "no JSON object"), ('{"name": ["张三"', "no JSON object"),
                                       ('{"name": 张三}', "does not parse"), ("", "no JSON object"),
                                       ('["张三"]', "no JSON object"), ('{"a": 1} x {"b"}', "does not parse")])
def test_malformed_answers_are_no_entities_and_say_why(text: str, why: str) -> None:
    spans, problem = parse(text, EntitySpansExample(0, "张三"))
    assert spans == () and problem is not None and why in problem


def test_the_gold_written_as_a_model_should_reads_back_as_the_gold() -> None:
    examples = dev_examples()
    first = examples[0]
    assert json.loads(answer(first)) == {"address": ["台湾"], "name": ["彭小军"]}
    assert parse(answer(first), first) == (first.entities, None)
    for example in examples:  # every gold span is found again (a repeated string may add more)
        spans, problem = parse(answer(example), example)
        assert problem is None and set(example.entities or ()) <= set(spans)
        assert check_prediction(ner_hooks.CLUENER2020, example, spans) is None


# -- end to end -----------------------------------------------------------------------------

def run(run_cli, kernel: Kernel, out: Path, model: str, *more: str) -> Path:
    result = run_cli("run", "cluener2020", "--model", model, "--sample", "-o", out, *more, kernel=kernel)
    assert result.exit_code == 0, result.output
    return out / "cluener2020"


def read(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text(encoding="utf-8"))


def test_llm_tiny_runs_the_sample_with_valid_predictions_and_counts_malformed(run_cli, llm_kernel: Kernel,
                                                                               tmp_path: Path) -> None:
    folder = run(run_cli, llm_kernel, tmp_path / "out", "llm-tiny", "--set", "max_new_tokens=24")
    examples = {e.id: e for e in dev_examples()}
    records = lines(folder / "predictions" / "dev.jsonl")
    assert [r["id"] for r in records] == list(range(16))
    for record in records:
        assert check_prediction(ner_hooks.CLUENER2020, examples[record["id"]], record["prediction"]) is None
        assert record["raw"]["extracted"] is ("malformed" not in record["raw"])
    info = read(folder, "manifest.json")["model_info"]
    tests = lines(folder / "predictions" / "test-1.0.jsonl")
    malformed = sum("malformed" in r["raw"] for r in records + tests)
    assert info["malformed"] == malformed and info["examples"] == 32
    assert 0 <= read(folder, "metrics.json")["dev"]["macro_f1"] <= 100
    assert (folder / "submission" / "cluener_predict.json").is_file()


def write_answers(path: Path, answers: dict[int, str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "answer": a}, ensure_ascii=False) + "\n"
                            for i, a in answers.items()), encoding="utf-8")
    return path


def test_recorded_gold_answers_score_exactly(run_cli, llm_kernel: Kernel, tmp_path: Path) -> None:
    examples = dev_examples()
    file = write_answers(tmp_path / "answers.jsonl", {e.id: answer(e) for e in examples})
    folder = run(run_cli, llm_kernel, tmp_path / "out", f"answers:{file}")
    dev = read(folder, "metrics.json")["dev"]
    # every string right (all ten types are in the dev sample); by offsets, every occurrence of a
    # string finds the 33 gold spans and 2 more that the annotators did not label (雪山, 爱情公寓)
    assert dev["macro_f1"] == pytest.approx(100.0)
    assert dev["micro_recall_exact"] == pytest.approx(100.0)
    assert dev["micro_precision_exact"] == pytest.approx(100 * 33 / 35)
    assert dev["micro_f1_exact"] == pytest.approx(100 * 66 / 68)
    info = read(folder, "manifest.json")["model_info"]
    assert info["malformed"] == 0 and info["recorded"]["missing"] == 16  # the test questions: none recorded
    tests = lines(folder / "predictions" / "test-1.0.jsonl")
    assert all(r["prediction"] == [] and r["raw"]["missing"] for r in tests)


def test_recorded_malformed_answers_are_counted_and_scored_as_no_entities(run_cli, llm_kernel: Kernel,
                                                                          tmp_path: Path) -> None:
    examples = dev_examples()
    answers = {e.id: answer(e) if e.id < 8 else ["不知道", '{"name": ['][e.id % 2] for e in examples}
    folder = run(run_cli, llm_kernel, tmp_path / "out", f"answers:{write_answers(tmp_path / 'a.jsonl', answers)}")
    records = lines(folder / "predictions" / "dev.jsonl")
    assert [bool(r["raw"].get("malformed")) for r in records] == [False] * 8 + [True] * 8
    assert all(r["prediction"] == [] for r in records[8:])
    assert read(folder, "manifest.json")["model_info"]["malformed"] == 8
    # the official score.py's arithmetic, by hand: per type, strings of each line; macro = mean F1 of the ten
    counts = {kind: [0, 0, 0] for kind in ner_hooks.CLUENER2020.labels}
    for example in examples:
        gold = {(k, example.text[s:e]) for k, s, e in example.entities or ()}
        said = gold if example.id < 8 else set()
        for kind, _ in said & gold:
            counts[kind][0] += 1
        for kind, _ in gold - said:
            counts[kind][2] += 1
    f1 = [2 * tp / (2 * tp + fp + fn) if tp else 0.0 for tp, fp, fn in counts.values()]
    assert read(folder, "metrics.json")["dev"]["macro_f1"] == pytest.approx(100 * sum(f1) / len(f1))
