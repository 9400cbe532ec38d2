"""``clue-core report`` on the kinds the task plugins bring: CLUENER2020's entity spans, KgCLUE's KBQA triples,
a third party's kind it knows nothing of (shown by its fields), and each run's own notes (DataCLUE's
"not the DataCLUE protocol" mark).

The runs are made here, on the plugins' bundled samples, with the tests-only models of tests/ner and
tests/kgclue on an isolated kernel; clue-report reads their examples by field names and kinds by name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import KindSpec, MetricSpec, ModelSpec, Prediction, SplitData, TaskSpec, hookimpl, iter_jsonl

UNKNOWN = ("unknown kind", "cannot be rebuilt", "cannot be compared", "could not re-score")


def _kernel(isolated: Kernel, *plugins: tuple[Any, str, str | None]) -> Kernel:
    import clue_report.hooks

    for plugin, name, distribution in (*plugins, (clue_report.hooks, "clue-report", "clue-report")):
        isolated.register(plugin, name, distribution=distribution)
    assert all(p.status == "ok" for p in isolated.plugins), [p.error for p in isolated.plugins]
    return isolated


def _report(run_cli, kernel: Kernel, runs: Path, output: Path) -> tuple[dict[str, Any], str, str]:
    """report.json, index.html and report.md of ``runs``."""
    result = run_cli("report", runs, "-o", output, kernel=kernel)
    assert result.exit_code == 0, result.output
    return (json.loads((output / "report.json").read_text(encoding="utf-8")),
            (output / "index.html").read_text(encoding="utf-8"), (output / "report.md").read_text(encoding="utf-8"))


def _run(run_cli, kernel: Kernel, task: str, model: str, out: Path, *extra: str) -> None:
    result = run_cli("run", task, "--model", model, "--sample", "-o", out, *extra, kernel=kernel)
    assert result.exit_code == 0, result.output


def _clean(entry: dict[str, Any]) -> None:
    """Read again from its data, scored, with no note of a kind the report could not handle."""
    assert entry["scored_from"] == "data", entry["notes"]
    assert not any(word in note for note in entry["notes"] for word in UNKNOWN), entry["notes"]


def _explorer(report: dict[str, Any], task: str) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The explorer's examples and one run's answers of ``task``, by id."""
    source = next(s for s in report["explorer"]["sources"] if s["task"] == task)
    run = next(r for r in report["explorer"]["runs"] if r["task"] == task)
    return {e["id"]: e for e in source["examples"]}, {i["id"]: i for i in run["items"]}


# --- CLUENER2020: the text with its gold and predicted entities -------------------------------------------------


def test_cluener2020_report_shows_the_text_and_entities(run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    import clue_tasks_ner.hooks as ner_hooks
    from tests.ner.dictionary_model import Plugin

    kernel = _kernel(isolated_kernel, (ner_hooks, "clue-tasks-ner", "clue-tasks-ner"), (Plugin(), "ner-dict", None))
    _run(run_cli, kernel, "cluener2020", "ner-dictionary", tmp_path / "runs")
    summary = run_cli("report", tmp_path / "runs", kernel=kernel)  # the terminal table, no -o
    assert summary.exit_code == 0 and re.search(r"^cluener2020 +macro_f1 +[0-9.]+ +ner-dictionary", summary.output,
                                                re.M), summary.output
    report, page, md = _report(run_cli, kernel, tmp_path / "runs", tmp_path / "report")
    (entry,) = report["runs"]
    _clean(entry)
    assert entry["recomputed"]["macro_f1"] == pytest.approx(entry["dev"]["macro_f1"])
    assert re.search(r"\| ner-dictionary · sample \(not comparable\) .*\| [0-9.]+ \|", md)  # the summary table
    # explorer: dev line 0 of the sample, its text and its gold entities as strings with their types
    examples, items = _explorer(report, "cluener2020")
    first = examples["0"]
    assert first["text"].startswith("彭小军认为") and first["gold"] == "彭小军 (name) · 台湾 (address)"
    records = [r for _, r in iter_jsonl(tmp_path / "runs" / "cluener2020" / "predictions" / "dev.jsonl")]
    for record in records:  # every answer shown as entity strings, right exactly when its spans are the gold's
        item, text = items[str(record["id"])], examples[str(record["id"])]["text"]
        spans = sorted(record["prediction"], key=lambda s: (s[1], s[2], s[0]))
        assert item["pred"] == (" · ".join(f"{text[s:e]} ({t})" for t, s, e in spans) or "(no entities)")
        assert item["ok"] is ({tuple(s) for s in record["prediction"]} == {tuple(s) for s in record["gold"]})
    # error analysis: the wrong examples read as the explorer does; none of them is right
    wrong = entry["analysis"]["wrong_examples"]
    assert wrong and all(w["text"] == examples[str(w["id"])]["text"] and w["gold"] == examples[str(w["id"])]["gold"]
                         and items[str(w["id"])]["ok"] is False for w in wrong)
    assert "彭小军 (name) · 台湾 (address)" in page and wrong[0]["text"][:12] in page


# --- KgCLUE: the question, its KB candidates, gold and predicted triple -----------------------------------------


def test_kgclue_report_shows_the_question_and_triples(run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    from clue_tasks_kgclue import hooks as kgclue_plugin
    from tests.kgclue.tiny_model import TinyModelPlugin

    kernel = _kernel(isolated_kernel, (kgclue_plugin, "clue-tasks-kgclue", "clue-tasks-kgclue"),
                     (TinyModelPlugin(), "kg-tiny", None))
    _run(run_cli, kernel, "kgclue", "kg-first-candidate", tmp_path / "runs", "--set", "kb=Knowledge.txt")
    report, page, md = _report(run_cli, kernel, tmp_path / "runs", tmp_path / "report")
    (entry,) = report["runs"]
    _clean(entry)
    assert entry["recomputed"]["emf1"] == pytest.approx(entry["dev"]["emf1"]) and "emf1" in entry["intervals"]
    assert "| kgclue (emf1) |" in md
    examples, items = _explorer(report, "kgclue")
    first = examples["0"]
    assert first["question"] == "刘晓华主要讲什么课啊？"
    assert first["gold"] == "刘晓华（广东工业大学教授） ||| 主讲课程 ||| 《固体物理》"
    (name, candidates), = first["fields"]  # the KB's triples for the question's entity, one a line
    assert name == "candidates" and all(line.count(" ||| ") == 2 for line in candidates.splitlines())
    assert items["0"]["p"] == candidates.splitlines()[0]  # the tiny model answers the first candidate
    records = {str(r["id"]): r for _, r in iter_jsonl(tmp_path / "runs" / "kgclue" / "predictions" / "dev.jsonl")}
    assert set(items) == set(records)
    # right by the metric's per-example value (normalised text): every answer here, even 140's, whose
    # gold object has a no-break space the first candidate lacks
    assert entry["dev"]["emf1"] == 100 and all(item["ok"] is True for item in items.values())
    assert records["140"]["prediction"] != records["140"]["gold"]
    assert "刘晓华主要讲什么课啊？" in page and "<dl class='ex-fields'><dt>candidates</dt>" in page
    # closed book (no KB): nothing answered, every example wrong, shown with its question and gold triple
    _run(run_cli, kernel, "kgclue", "kg-first-candidate", tmp_path / "closed")
    report, page, _ = _report(run_cli, kernel, tmp_path / "closed", tmp_path / "closed-report")
    (entry,) = report["runs"]
    _clean(entry)
    examples, items = _explorer(report, "kgclue")
    assert "fields" not in examples["0"] and not any(item["ok"] for item in items.values())
    wrong = entry["analysis"]["wrong_examples"]
    assert len(wrong) == 5 and all(w["question"] == examples[str(w["id"])]["question"] for w in wrong)
    assert all(w["gold"] == examples[str(w["id"])]["gold"] and w["gold"].count(" ||| ") == 2 for w in wrong)
    assert all(w["prediction"] == " |||  ||| " and w["emf1"] == 0 for w in wrong)
    assert wrong[0]["question"] in page.split("Wrong examples")[1]


def test_the_explorers_script_renders_and_searches_the_candidates(run_cli, isolated_kernel: Kernel,
                                                                  tmp_path: Path) -> None:
    """In headless Chromium (skipped without one, as tests/report/test_browser.py): a query that only the KB
    candidates hold (主讲课程, not in the question) finds dev line 0, drawn with its candidates by the script."""
    from clue_tasks_kgclue import hooks as kgclue_plugin
    from tests.kgclue.tiny_model import TinyModelPlugin
    from tests.report.test_explorer_browser import counted, load

    kernel = _kernel(isolated_kernel, (kgclue_plugin, "clue-tasks-kgclue", "clue-tasks-kgclue"),
                     (TinyModelPlugin(), "kg-tiny", None))
    _run(run_cli, kernel, "kgclue", "kg-first-candidate", tmp_path / "runs", "--set", "kb=Knowledge.txt")
    report, _, _ = _report(run_cli, kernel, tmp_path / "runs", tmp_path / "report")
    examples, _ = _explorer(report, "kgclue")
    found = sorted(i for i, e in examples.items()
                   if "主讲课程" in "".join(text for _, text in e.get("fields", ())) + e["question"])
    dom = load(tmp_path / "report" / "index.html", tmp_path / "profile", "#task=kgclue&q=" + quote("主讲课程"))
    assert "0" in found and counted(dom) == (len(found), len(found))
    assert "刘晓华主要讲什么课啊？" in dom and '<dl class="ex-fields"><dt>candidates</dt>' in dom


# --- a third party's kind: its fields as text ---------------------------------------------------------------------

KIND = "toy_keywords"
DEV = [("北京的冬天很冷", ["北京", "冬天"]), ("上海下雨了", ["上海"]), ("今天没有地名", [])]


@dataclass(frozen=True, slots=True)
class Keywords:
    id: int
    sentence: str
    source: str
    keywords: tuple[str, ...] | None = None


def keywords_gold(example: Keywords) -> list[str] | None:
    return None if example.keywords is None else list(example.keywords)


def check_keywords(task: TaskSpec, example: Keywords, value: object) -> str | None:
    return None if isinstance(value, list) and all(isinstance(v, str) for v in value) else "expected a list"


def read_keywords(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    rows = [record for _, record in iter_jsonl(Path(data_dir) / f"{split}.jsonl")]
    return SplitData(tuple(Keywords(r["id"], r["sentence"], "新闻", tuple(r["keywords"])) for r in rows))


def keywords_all_right(examples: list[Keywords], predictions: list[Prediction | None]) -> dict[str, float]:
    """A total only (no per-example values): the report judges each answer against the gold itself."""
    right = [p is not None and p.value == list(e.keywords or ()) for e, p in zip(examples, predictions)]
    return {"exact": 100.0 * sum(right) / len(right)}


class FirstTwoCharacters:
    def fit(self, train: list[Keywords], dev: list[Keywords], context: Any) -> None:
        pass

    def predict(self, examples: list[Keywords]) -> list[Prediction]:
        return [Prediction(e.id, [e.sentence[:2]]) for e in examples]

    def save(self, directory: Path) -> None:
        pass


def create_keywords(argument: str | None, task: TaskSpec, settings: dict[str, Any]) -> FirstTwoCharacters:
    return FirstTwoCharacters()


class _KeywordsPlugin:
    @hookimpl
    def clue_kinds(self) -> list[KindSpec]:
        return [KindSpec(KIND, "a sentence's keywords", example=f"{__name__}:Keywords", prediction="a list of strings",
                         check_prediction=f"{__name__}:check_keywords", gold=f"{__name__}:keywords_gold")]

    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return [TaskSpec("toy-keywords", KIND, "find the keywords", f"{__name__}:read_keywords",
                         metrics=("keywords_exact",), primary_metric="exact", data_files=("train.jsonl", "dev.jsonl"))]

    @hookimpl
    def clue_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("keywords_exact", f"{__name__}:keywords_all_right", "share of exact keyword lists",
                           kinds=(KIND,), produces=("exact",))]

    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("first-two", f"{__name__}:create_keywords", (KIND,), "the first two characters")]


def test_a_kind_the_report_does_not_know_is_shown_by_its_fields(run_cli, isolated_kernel: Kernel,
                                                                tmp_path: Path) -> None:
    kernel = _kernel(isolated_kernel, (_KeywordsPlugin(), "toy-keywords", None))
    data = tmp_path / "data"
    data.mkdir()
    for split in ("train", "dev"):
        (data / f"{split}.jsonl").write_text("".join(json.dumps({"id": i, "sentence": s, "keywords": k},
                                                                ensure_ascii=False) + "\n"
                                                     for i, (s, k) in enumerate(DEV)), encoding="utf-8")
    result = run_cli("run", "toy-keywords", "--model", "first-two", "--data-dir", data, "-o", tmp_path / "runs",
                     kernel=kernel)
    assert result.exit_code == 0, result.output
    report, page, _ = _report(run_cli, kernel, tmp_path / "runs", tmp_path / "report")
    (entry,) = report["runs"]
    _clean(entry)
    examples, items = _explorer(report, "toy-keywords")
    assert examples["0"]["fields"] == [["sentence", "北京的冬天很冷"], ["source", "新闻"],
                                       ["keywords", '["北京", "冬天"]']]
    assert [examples[i]["gold"] for i in "012"] == ['["北京", "冬天"]', '["上海"]', "[]"]
    # right where the answer is the gold (an empty list is gold too: 今天 is no keyword there)
    assert [items[i]["ok"] for i in "012"] == [False, True, False]
    assert [w["id"] for w in entry["analysis"]["wrong_examples"]] == [0, 2]
    assert entry["analysis"]["wrong_examples"][0]["prediction"] == '["北京"]'
    assert "<dt>sentence</dt><dd>北京的冬天很冷</dd>" in page


# --- each run's own notes: DataCLUE's mark ----------------------------------------------------------------------


def test_the_runs_notes_reach_the_report(run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    from clue_tasks_dataclue import hooks as dataclue_plugin

    kernel = _kernel(isolated_kernel, (dataclue_plugin, "clue-tasks-dataclue", "clue-tasks-dataclue"))
    _run(run_cli, kernel, "dataclue-cic", "baseline", tmp_path / "runs")
    manifest = json.loads((tmp_path / "runs" / "dataclue-cic" / "manifest.json").read_text(encoding="utf-8"))
    marked = [note for note in manifest["notes"] if "not the DataCLUE protocol" in note]
    assert marked, manifest["notes"]  # baseline is not the recipe's model
    report, page, md = _report(run_cli, kernel, tmp_path / "runs", tmp_path / "report")
    (entry,) = report["runs"]
    assert entry["run_notes"] == manifest["notes"]
    assert f"<b>run note:</b> {marked[0]}" in page.split("<section id='runs'>")[1]
    assert f"- run-1 · dataclue-cic · baseline: {marked[0]}" in md.split("## Runs' notes")[1]


def test_runs_without_notes_add_no_notes_section(run_cli, isolated_kernel: Kernel, tmp_path: Path) -> None:
    import clue_tasks_ner.hooks as ner_hooks
    from tests.ner.dictionary_model import Plugin

    kernel = _kernel(isolated_kernel, (ner_hooks, "clue-tasks-ner", "clue-tasks-ner"), (Plugin(), "ner-dict", None))
    _run(run_cli, kernel, "cluener2020", "ner-dictionary", tmp_path / "runs")
    report, page, md = _report(run_cli, kernel, tmp_path / "runs", tmp_path / "report")
    assert "run_notes" not in report["runs"][0] and "## Runs' notes" not in md and "run note:" not in page


def test_entity_spans_whose_dev_data_is_gone_are_shown_from_the_records(run_cli, isolated_kernel: Kernel,
                                                                        tmp_path: Path) -> None:
    """No texts to read again and no way to rebuild the kind's examples: ids, gold and answers from the
    records, the spans written as JSON (not Python's repr), and a note saying why."""
    import shutil

    import clue_tasks_ner.hooks as ner_hooks
    from tests.ner.conftest import SAMPLE
    from tests.ner.dictionary_model import Plugin

    kernel = _kernel(isolated_kernel, (ner_hooks, "clue-tasks-ner", "clue-tasks-ner"), (Plugin(), "ner-dict", None))
    shutil.copytree(SAMPLE, tmp_path / "data")
    result = run_cli("run", "cluener2020", "--model", "ner-dictionary", "--data-dir", tmp_path / "data", "-o",
                     tmp_path / "runs", kernel=kernel)
    assert result.exit_code == 0, result.output
    shutil.rmtree(tmp_path / "data")
    report, page, _ = _report(run_cli, kernel, tmp_path / "runs", tmp_path / "report")
    (entry,) = report["runs"]
    assert entry["scored_from"] is None and any("entity_spans examples cannot be rebuilt" in n for n in entry["notes"])
    examples, items = _explorer(report, "cluener2020")
    assert examples["0"] == {"id": "0", "gold": '["name", 0, 3] | ["address", 15, 17]', "g": None, "unread": True}
    assert len(items) == 16 and all(item["ok"] is None for item in items.values())
    assert "text not available" in page
