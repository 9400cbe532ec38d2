"""The leaderboard of every CLUE task and four models fits a 1400 px window in headless Chromium
(it was 2,156 px wide, scrolling in its box); wider still (FewCLUE's tasks too) it scrolls in its
box and the page stays within the window. Under CI (CI=true) a missing Chromium fails, as in
test_browser.py."""

from __future__ import annotations

import json
import re
import subprocess
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from clue_report import write_report
from tests.report.fixtures import write_run
from tests.report.test_browser import FLAGS, _chromium

CLUE = ["afqmc", "tnews", "iflytek", "ocnli", "cmnli", "cluewsc2020", "csl", "cmrc2018", "chid", "c3"]
FEWCLUE = ["fewclue-eprstmt", "fewclue-bustm", "fewclue-ocnli", "fewclue-csldcp", "fewclue-tnews",
           "fewclue-cluewsc", "fewclue-iflytek", "fewclue-csl", "fewclue-chid"]
MODELS = [("llm:Qwen/Qwen2.5-7B-Instruct", "llm", {"mode": "generate", "shots": 0, "chat": True}),
          ("llm:meta-llama/Meta-Llama-3.1-8B-Instruct", "llm", {"mode": "loglikelihood", "shots": 5}),
          ("hf:hfl/chinese-roberta-wwm-ext-large", "encoder",
           {"epochs": 3, "learning_rate": 2e-05, "batch_size": 32, "max_length": 512}),
          ("hf:nghuyong/ernie-3.0-base-zh", "encoder",
           {"epochs": 3, "learning_rate": 3e-05, "batch_size": 16, "max_length": 256})]
WIDTH = 1400
#: Appended to a copy of the page: what the layout came to, written where --dump-dom reads it.
PROBE = """<script>window.addEventListener('load', function () {
  var root = document.documentElement, table = document.querySelector('#leaderboard table');
  var box = table.parentElement, rect = table.getBoundingClientRect();
  document.body.setAttribute('data-layout', JSON.stringify({client: root.clientWidth, page: root.scrollWidth,
    left: rect.left, right: rect.right, box: box.getBoundingClientRect().right, boxScroll: box.scrollWidth,
    boxClient: box.clientWidth, columns: table.rows[0].cells.length}));
});</script>"""


def _report(kernel: Any, root: Path, tasks: list[str], charts: bool) -> Path:
    for number, (model, category, settings) in enumerate(MODELS):
        for task in tasks:
            write_run(kernel, root / "runs" / f"m{number}", task, model=model, category=category,
                      report_settings=settings)
    out = root / "report"
    write_report(kernel, sorted((root / "runs").iterdir()), out, charts=charts)
    return out


def _layout(report: Path, tmp_path: Path) -> dict[str, Any]:
    page = tmp_path / "probe.html"
    page.write_text((report / "index.html").read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                    encoding="utf-8")
    result = subprocess.run([_chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                             f"--window-size={WIDTH},1000", "--virtual-time-budget=5000", "--dump-dom",
                             page.as_uri()], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    match = re.search(r'data-layout="([^"]*)"', result.stdout)
    assert match, "the probe did not run"
    return json.loads(unescape(match.group(1)))


def test_every_clue_task_and_four_models_fit_1400_px(kernel, tmp_path: Path) -> None:
    report = _report(kernel, tmp_path, CLUE, charts=True)
    data = json.loads((report / "report.json").read_text(encoding="utf-8"))
    assert len(data["rows"]) == 4 and len(data["tasks"]) == 10 and len(data["groups"]) == 4
    layout = _layout(report, tmp_path)
    assert layout["columns"] == 2 + 4 + 10  # #, model (its kind, size, use and settings below it), groups, tasks
    assert layout["page"] <= layout["client"] <= WIDTH
    assert layout["left"] >= 0 and layout["right"] <= layout["client"], layout  # the table itself, not its box
    assert layout["boxScroll"] <= layout["boxClient"], layout  # nothing hidden to scroll to
    page = (report / "index.html").read_text(encoding="utf-8")
    assert ('<td class="model">hf:hfl/chinese-roberta-wwm-ext-large · sample<span class="badge"' in page
            and "<small>encoder · fine-tuned</small>" in page
            and '<small class="settings" title="epochs=3, learning_rate=2e-05, batch_size=32, max_length=512">'
            in page)


def test_wider_than_the_window_it_scrolls_in_its_box_and_the_page_does_not(kernel, tmp_path: Path) -> None:
    layout = _layout(_report(kernel, tmp_path, CLUE + FEWCLUE, charts=False), tmp_path)
    assert layout["columns"] == 2 + 5 + 19
    assert layout["boxScroll"] > layout["boxClient"]  # 19 tasks do not fit: the box scrolls
    assert layout["page"] <= layout["client"] <= WIDTH and layout["box"] <= layout["client"], layout


@pytest.fixture(autouse=True)
def _chromium_there() -> None:
    _chromium()  # skips (fails under CI) before any report is built


def test_a_long_unbroken_model_name_wraps_and_the_page_stays_in_the_window(kernel, tmp_path: Path) -> None:
    """An answers file's path or a checkpoint folder has no space to wrap at: each task's table, the error
    analysis and the explorer grew to its width (the page was 2,146 px wide in a 1400 px window)."""
    long_name = "answers:/data/" + "verylongdirectoryname" * 8 + ".jsonl"
    for number, model in enumerate((long_name, MODELS[0][0])):
        for task in ("afqmc", "tnews", "cmrc2018", "c3"):
            write_run(kernel, tmp_path / "runs" / f"m{number}", task, model=model, category="llm",
                      report_settings={"mode": "generate"})
    out = tmp_path / "report"
    write_report(kernel, sorted((tmp_path / "runs").iterdir()), out, charts=False)
    layout = _layout(out, tmp_path)
    assert layout["page"] <= layout["client"] <= WIDTH, layout
    assert layout["boxScroll"] <= layout["boxClient"], layout  # the leaderboard's model cell wraps too
