"""The report explorer's data and markup, without a browser (tests/report/test_explorer_browser.py has one).

:func:`check_explorer` recomputes the explorer's data in report.json from each run's own files:
every run's items against its ``predictions/dev.jsonl`` (ids, predictions, per-choice scores,
right or wrong, the judge's grade), every example's inputs against the task's dev data read
again, the counts against ``--examples``, and the confusion tables against the report's own
(already recomputed) confusion matrices. The numbers listed under *the explorer section* in
:data:`tests.report.recompute.VERIFIED` are the ones checked here.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from clue_core.data import sample_dir
from clue_core.examples import ClassificationExample, MultipleChoiceExample, SpanExample
from clue_tasks_mrc import cmrc_metric
from clue_tasks_superclue.examples import OpenQuestionExample
from tests.report.fixtures import llm_answer, write_run
from tests.report.recompute import check_all_numbers_covered, dev_examples, records_of

#: An example text that would be markup, or end the data's <script> element, if it were not escaped.
HOSTILE = ("</script><script>document.body.setAttribute('data-pwned','1')</script>"
           "<img src=x onerror=\"document.title='pwned'\"><b id='bold'>bold</b><!--<script>")
BIG = 250


def right(example: Any, record: dict[str, Any]) -> bool | None:
    """Whether a record's prediction is right, recomputed without the report's code."""
    if isinstance(example, SpanExample):
        return cmrc_metric.exact_match(record["gold"], str(record["prediction"])) == 1
    if isinstance(example, (ClassificationExample, MultipleChoiceExample)):
        return record["prediction"] == record["gold"]
    scoring = record.get("scoring") or {}
    return scoring.get("passed") if isinstance(scoring.get("passed"), bool) else None


def _inputs(example: Any) -> dict[str, Any]:
    if isinstance(example, ClassificationExample):
        return {"text": example.text, **({"text_pair": example.text_pair} if example.text_pair is not None else {})}
    if isinstance(example, SpanExample):
        return {"question": example.question, "context": example.context}
    if isinstance(example, MultipleChoiceExample):
        return {"question": example.question, "context": example.context, "choices": list(example.choices)}
    if isinstance(example, OpenQuestionExample):
        return {"turns": list(example.turns)}
    raise AssertionError(f"unknown example {example!r}")


def check_explorer(report: dict[str, Any], kernel: Any, limit: int = 1000) -> None:
    explorer = report["explorer"]
    assert explorer["limit"] == limit and explorer["per_page"] >= 100 and explorer["static_rows"] >= 1
    runs = {run["id"]: run for run in report["runs"]}
    sources = {source["key"]: source for source in explorer["sources"]}
    assert {run["run"] for run in explorer["runs"]} == {r["id"] for r in report["runs"] if r["scored_from"]}
    for shown in explorer["runs"]:
        run = runs[shown["run"]]
        records = records_of(run)
        assert shown["total"] == len(records) and shown["shown"] == min(limit, len(records))
        assert shown["left_out"] == len(records) - shown["shown"]
        assert shown["task"] == run["task"] and shown["source"].startswith(f"{run['task']} · ")
        examples = dev_examples(kernel, run)
        by_id = {e["id"]: e for e in sources[shown["source"]]["examples"]}
        for item, record in zip(shown["items"], records, strict=False):
            example = examples[str(record["id"])]
            assert item["id"] == str(record["id"])
            assert item["p"] == (None if record["prediction"] is None else str(record["prediction"]))
            assert item.get("scores") == (record.get("scores") or None)
            assert item["ok"] == right(example, record), (run["path"], record)
            grade = ((record.get("scoring") or {}).get("judge") or {}).get("grade")
            assert item.get("grade") == grade
            described = by_id[item["id"]]
            for key, value in _inputs(example).items():
                assert described[key] == value, (key, described)
            gold = getattr(example, "label", None)
            assert described["g"] == (None if gold is None or isinstance(example, SpanExample) else str(gold))
        assert len(shown["items"]) == shown["shown"]
        confusion = run["analysis"].get("confusion")
        if confusion:
            assert shown["confusion"]["matrix"] == confusion["matrix"]
            assert shown["confusion"]["columns"] == confusion["columns"]
        else:
            assert "confusion" not in shown


def afqmc_data(kernel: Any, target: Path, size: int | None = None, first: str | None = None) -> Path:
    """AFQMC's sample copied to ``target`` (standing for a full dev set): ``size`` dev examples made from the
    sample's lines, the first one's sentence1 replaced by ``first``."""
    shutil.copytree(sample_dir(kernel.task("afqmc")), target)
    lines = [json.loads(line) for line in (target / "dev.json").read_text(encoding="utf-8").splitlines() if line]
    if size is not None:
        lines = [dict(lines[i % len(lines)], sentence1=f"{lines[i % len(lines)]['sentence1']} #{i}")
                 for i in range(size)]
    if first is not None:
        lines[0]["sentence1"] = first
    (target / "dev.json").write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
                                     encoding="utf-8")
    return target


@pytest.fixture(scope="session")
def explorer_runs(kernel: Any, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Model A on AFQMC (a copy of the sample whose first text is hostile), C3, CMRC2018 and CHID; model B on the
    same AFQMC (always "0"); model Big on a 250-example AFQMC."""
    root = tmp_path_factory.mktemp("explorer")
    data = afqmc_data(kernel, root / "afqmc-data", first=HOSTILE)
    big = afqmc_data(kernel, root / "afqmc-big", size=BIG)
    settings = {"mode": "generate", "shots": 0}
    write_run(kernel, root / "A", "afqmc", model="llm:A", sample=False, data_dir=data, report_settings=settings)
    for task in ("c3", "cmrc2018", "chid"):
        write_run(kernel, root / "A", task, model="llm:A", report_settings=settings)
    write_run(kernel, root / "B", "afqmc", model="llm:B", sample=False, data_dir=data, report_settings=settings,
              answer=lambda example, index: "0")
    write_run(kernel, root / "Big", "afqmc", model="llm:Big", sample=False, data_dir=big, report_settings=settings,
              answer=lambda example, index: llm_answer(example, 0 if index % 5 == 0 else 1))  # wrong 4 in 5
    return [root / "A", root / "B", root / "Big"]


@pytest.fixture(scope="session")
def explorer_report(kernel: Any, explorer_runs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clue_report import write_report

    output = tmp_path_factory.mktemp("explorer-report")
    write_report(kernel, explorer_runs, output, charts=False)
    return output


def read_report(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


def data_of(page: str) -> Any:
    """The explorer's embedded JSON, as the page's script reads it."""
    found = re.findall(r"<script type='application/json' id='explorer-data'>(.*?)</script>", page, re.S)
    assert len(found) == 1, "the data is embedded exactly once"
    return json.loads(found[0])


def test_every_example_of_every_run_against_the_files(kernel: Any, explorer_report: Path) -> None:
    report = read_report(explorer_report)
    check_explorer(report, kernel)
    check_all_numbers_covered(report)
    assert sum(run["shown"] for run in report["explorer"]["runs"]) == 16 + 3 + 6 + 4 + 16 + BIG
    hostile = next(s for s in report["explorer"]["sources"] if s["examples"][0].get("text") == HOSTILE)
    assert hostile["task"] == "afqmc" and len(hostile["examples"]) == 16  # A and B share it: stored once
    assert "explorer" in [s["name"] for s in report["sections"]]


def test_the_llm_report_explorer_against_the_files(llm_kernel: Any, llm_report: Path) -> None:
    report = read_report(llm_report)
    check_explorer(report, llm_kernel)
    said = [item["said"] for run in report["explorer"]["runs"] for item in run["items"] if "said" in item]
    assert said and all(text.startswith("答案：") for text in said)  # what the model generated, beside the answer


def test_the_data_is_embedded_once_and_hostile_text_stays_text(explorer_report: Path) -> None:
    page = (explorer_report / "index.html").read_text(encoding="utf-8")
    embedded = re.search(r"id='explorer-data'>(.*?)</script>", page, re.S).group(1)
    assert "<" not in embedded  # nothing inside can close the element or open a comment
    assert data_of(page) == read_report(explorer_report)["explorer"]
    for markup in ("<script>document.body", "<img src=x", "<b id='bold'>", "<!--<script>"):
        assert markup not in page
    assert "&lt;/script&gt;&lt;script&gt;document.body.setAttribute(" in page  # the first rows, escaped
    rows = re.findall(r"<(\w+)[^>]*\sdata-example-id=", page)
    assert rows == ["tr"] * 100  # the first 100 rows for a browser without JavaScript; no other element


def test_examples_caps_each_run_and_counts_the_rest(run_cli, explorer_runs: list[Path], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch, kernel: Any) -> None:
    monkeypatch.setenv("CLUE_REPORT_FONT", "none")
    result = run_cli("report", *explorer_runs, "-o", tmp_path / "r", "--examples", "5")
    assert result.exit_code == 0, result.output
    report = read_report(tmp_path / "r")
    check_explorer(report, kernel, limit=5)
    big = next(run for run in report["explorer"]["runs"] if run["model"] == "llm:Big")
    assert (big["shown"], big["left_out"]) == (5, BIG - 5)
    capped = [r for r in report["explorer"]["runs"] if r["left_out"]]
    assert any(w.startswith(f"explorer: {len(capped)} run(s) show their first 5 dev examples only "
                            f"({sum(r['left_out'] for r in capped)} left out") for w in report["warnings"])
    markdown = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "## Explorer" in markdown and "| afqmc | llm:Big" in markdown and f"| 5 | {BIG - 5} |" in markdown


@pytest.mark.parametrize("args, message", [
    (("--examples", "0", "-o", "out"), "Invalid value for '--examples'"),
    (("--examples", "3"), "error: --examples goes with -o DIR (the explorer is in index.html)"),
])
def test_bad_examples_values_are_refused(run_cli, explorer_runs: list[Path], tmp_path: Path, args: tuple[str, ...],
                                         message: str) -> None:
    result = run_cli("report", explorer_runs[0], *(str(tmp_path / a) if a == "out" else a for a in args))
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
