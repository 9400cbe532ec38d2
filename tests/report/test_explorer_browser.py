"""The explorer in headless Chromium: the page opened from disk with a filter in its fragment renders
the rows the predictions files say it should (by task, wrong only, a text query, a confusion cell, two
models' disagreements, a second page), hostile example text stays text, and without JavaScript the first
rows are there. Under CI (CI=true) a missing Chromium fails, as in test_browser.py."""

from __future__ import annotations

import re
import subprocess
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from tests.report.recompute import dev_examples, records_of
from tests.report.test_browser import FLAGS, _chromium
from tests.report.test_explorer import BIG, HOSTILE, explorer_report, explorer_runs, read_report, right

__all__ = ["explorer_report", "explorer_runs"]  # the fixtures, shared with test_explorer.py

ROW = re.compile(r"<tr[^>]*\sdata-example-id=\"([^\"]*)\"")


def load(page: Path, profile: Path, fragment: str = "", *extra: str) -> str:
    """The DOM after the page's scripts ran, opened as ``file://…/index.html#fragment``."""
    result = subprocess.run([_chromium(), *FLAGS, f"--user-data-dir={profile}", *extra, "--dump-dom",
                             page.resolve().as_uri() + fragment], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def counted(dom: str) -> tuple[int, int]:
    """``(rows on the page, rows the filter matched)``; every element with data-example-id is a row."""
    assert len(re.findall(r"<\w+[^>]*\sdata-example-id=", dom)) == len(ROW.findall(dom))
    match = re.search(r'id="explorer-count"[^>]*data-count="(\d+)"', dom)
    assert match, "the explorer's script did not run"
    return len(ROW.findall(dom)), int(match.group(1))


def answers(kernel: Any, report: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
    """``(run, record, example)`` for every record of every run, read from the run folders."""
    found = []
    for run in report["runs"]:
        examples = dev_examples(kernel, run)
        found += [(run, record, examples[str(record["id"])]) for record in records_of(run)]
    return found


def inputs(example: Any) -> str:
    parts = [getattr(example, name, None) for name in ("text", "text_pair", "question", "context")]
    return "\n".join([p for p in parts if p] + list(getattr(example, "choices", ())))


@pytest.fixture(scope="module")
def page(explorer_report: Path) -> Path:
    return explorer_report / "index.html"


@pytest.fixture(scope="module")
def truth(kernel: Any, explorer_report: Path) -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
    return answers(kernel, read_report(explorer_report))


def test_a_task_filter_shows_its_examples(page: Path, truth: list, tmp_path: Path) -> None:
    dom = load(page, tmp_path, "#task=c3")
    expected = [str(record["id"]) for run, record, _ in truth if run["task"] == "c3"]
    assert counted(dom) == (len(expected), len(expected)) and ROW.findall(dom) == expected


def test_wrong_answers_only(page: Path, truth: list, tmp_path: Path) -> None:
    dom = load(page, tmp_path, "#wrong=1&page=2")  # the second page of 200 rows
    wrong = [r for r in truth if right(r[2], r[1]) is False]
    assert len(wrong) > 200
    assert counted(dom) == (len(wrong) - 200, len(wrong))
    assert ROW.findall(dom) == [str(record["id"]) for _, record, _ in wrong[200:]]
    assert dom.count("<td class=\"ex-mark\">✗</td>") == len(wrong) - 200


def test_a_text_query_searches_the_inputs(page: Path, truth: list, tmp_path: Path) -> None:
    dom = load(page, tmp_path, "#q=" + "%E8%8A%B1%E5%91%97")  # 花呗
    expected = [r for r in truth if "花呗" in inputs(r[2])]
    assert expected and counted(dom) == (len(expected), len(expected))


def test_a_confusion_cell_filters_to_its_examples(page: Path, truth: list, tmp_path: Path) -> None:
    source = page.read_text(encoding="utf-8")
    cells = re.findall(r'<td class="num ex-cell"><a href="(#task=afqmc&amp;model=llm%3AB%20[^"]*gold=1&amp;pred=0)">'
                       r"(\d+)</a>", source)
    assert len(cells) == 1, "model B's AFQMC table has one cell gold 1, predicted 0"
    link, count = unescape(cells[0][0]), int(cells[0][1])
    dom = load(page, tmp_path, link)
    expected = [r for r in truth if r[0]["model"] == "llm:B" and r[1]["gold"] == "1" and r[1]["prediction"] == "0"]
    assert count == len(expected) > 0 and counted(dom) == (count, count)


def test_two_models_disagree_side_by_side(page: Path, truth: list, tmp_path: Path) -> None:
    dom = load(page, tmp_path, "#task=afqmc&disagree=llm%3AA,llm%3AB")
    a = {str(r[1]["id"]): r[1]["prediction"] for r in truth if r[0]["model"] == "llm:A" and r[0]["task"] == "afqmc"}
    b = {str(r[1]["id"]): r[1]["prediction"] for r in truth if r[0]["model"] == "llm:B"}
    differ = [i for i in a if a[i] != b[i]]
    assert differ and counted(dom) == (len(differ), len(differ)) and ROW.findall(dom) == differ
    assert dom.count('class="ex-pred ex-side') == 2 * len(differ)  # one row per example, both answers in it


def test_hostile_text_is_shown_as_text_and_never_run(page: Path, tmp_path: Path) -> None:
    dom = load(page, tmp_path, "#model=llm%3AA&task=afqmc")
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]  # the body's own attributes
    assert "<title>CLUE report</title>" in dom and "<b id=\"bold\">" not in dom and "<img src=\"x\"" not in dom
    first = re.search(r'<td class="ex-input"><div>(.*?)</div>', dom).group(1)
    assert unescape(first) == HOSTILE


def test_without_javascript_the_first_rows_are_there(page: Path, explorer_report: Path, tmp_path: Path) -> None:
    # --dump-dom needs scripts itself, so the browser without JavaScript is the page without its scripts
    source = page.read_text(encoding="utf-8")
    silent = tmp_path / "index.html"
    silent.write_text(re.sub(r"<script>.*?</script>", "", source, flags=re.S), encoding="utf-8")
    assert "explorer-data" in silent.read_text(encoding="utf-8") and "<script>" not in silent.read_text("utf-8")
    dom = load(silent, tmp_path / "profile", "#task=c3")
    total = sum(run["shown"] for run in read_report(explorer_report)["explorer"]["runs"])
    assert len(ROW.findall(dom)) == 100 < total  # the unfiltered view's first rows
    assert f'data-count="{total}"' in dom and f"first 100 of {total} rows" in dom
    assert "&lt;/script&gt;&lt;script&gt;" in dom and "<b id=\"bold\">" not in dom  # escaped there too


def test_a_screenshot_of_a_filtered_view(page: Path, tmp_path: Path) -> None:
    from PIL import Image

    dom = load(page, tmp_path, "#model=llm%3ABig&page=2", "--window-size=1280,1000", "--hide-scrollbars")  # as shot
    assert counted(dom) == (BIG - 200, BIG)
    top = int(re.search(r'data-top="(\d+)"', dom).group(1))
    height = int(re.search(r'data-height="(\d+)"', dom).group(1))
    shot = tmp_path / "explorer.png"
    # the whole page in one window (a scrolled headless window is captured blank), then the explorer cut out
    subprocess.run([_chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'shot'}", "--hide-scrollbars",
                    f"--window-size=1280,{height}", f"--screenshot={shot}",
                    page.resolve().as_uri() + "#model=llm%3ABig&page=2"], capture_output=True, timeout=120, check=True)
    with Image.open(shot) as image:
        assert image.size == (1280, height)
        part = image.convert("L").crop((0, top, 1280, min(height, top + 900)))
        assert part.getextrema()[0] < 100  # text was drawn there, not a blank window
