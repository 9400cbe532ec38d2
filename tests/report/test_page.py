"""index.html is one self-contained page whose images all decode; report.md holds the tables;
the terminal output without -o is unchanged."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from clue_report import report_command
from tests.report.fixtures import COMPARISON

IMAGE = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')
#: Anything that would make the browser fetch: a src/href/url() not pointing at data: or an anchor.
_LOCAL = r"(?!data:|#)"
EXTERNAL = re.compile(rf"""(?:\bsrc|\bhref|\baction)\s*=\s*(?:"{_LOCAL}|'{_LOCAL}|(?!["']){_LOCAL})"""
                      rf"""|url\(\s*(?:"{_LOCAL}|'{_LOCAL}|(?!["']){_LOCAL})|@import|<link\b""", re.IGNORECASE)


def _html(folder: Path) -> str:
    return (folder / "index.html").read_text(encoding="utf-8")


def check_page(folder: Path) -> list[Image.Image]:
    html = _html(folder)
    assert not EXTERNAL.findall(html), EXTERNAL.findall(html)[:3]
    images = []
    for data in IMAGE.findall(html):
        image = Image.open(io.BytesIO(base64.b64decode(data)))
        image.load()  # decodes every pixel: a truncated or corrupt PNG raises here
        assert image.format == "PNG" and image.width > 50 and image.height > 50
        images.append(image)
    assert html.count("<img ") == len(images)
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert len(images) == len(report["charts"]["images"]) > 0
    return images


@pytest.mark.slow
def test_demo_page_is_self_contained_and_images_decode(demo_report: Path) -> None:
    check_page(demo_report)
    html = _html(demo_report)
    for text in ("Leaderboard", "hf-tiny · sample", "CLUE 1.1 reading comprehension", "cmrc2018", "chid", "c3",
                 "Wrong examples", "By context length", "Most confused pairs", "BERT-base"):
        assert text in html, text


def test_llm_page_shows_superclue_views(llm_report: Path) -> None:
    images = check_page(llm_report)
    report = json.loads((llm_report / "report.json").read_text(encoding="utf-8"))
    ids = [chart["id"] for chart in report["charts"]["images"]]
    for view in ("dimensions", "categories", "outcomes", "quadrant"):
        assert f"chart-comparison-1-{view}" in ids
    assert len(images) == len(ids)
    html = _html(llm_report)
    for text in ("SuperCLUE", "基础能力", "应用能力", "计算, 逻辑推理, 知识百科, 语言理解", "Maturity index",
                 "精确指令遵循", "Win / tie / loss", "GPT-4-Turbo-0409", "generate, 0-shot", "± "):
        assert text in html, text


def test_markdown_has_the_tables(llm_report: Path) -> None:
    markdown = (llm_report / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("# CLUE report\n")
    assert "| # | model | kind | size | use | settings |" in markdown
    assert "llm:Qwen-7B-Chat · generate, 0-shot" in markdown
    assert "| Qwen-7B-Chat | 69.00 |" in markdown
    assert "## SuperCLUE" in markdown and "| 精确指令遵循 | 0.23 | low |" in markdown
    for model in COMPARISON["models"]:
        assert f"| {model['name']} |" in markdown


def test_text_output_without_o_is_unchanged(run_cli, baseline_runs: Path, kernel) -> None:
    """The summary printed without -o is the one the CLI printed before the HTML report."""
    for extra in ((), ("--json",)):
        before = run_cli("report", baseline_runs, *extra)
        assert before.exit_code == 0, before.output
        assert report_command(kernel, [baseline_runs], as_json=bool(extra)) + "\n" == before.output
    text = report_command(kernel, [baseline_runs])
    assert "CLUE 1.1 reading comprehension:" in text and "afqmc" in text


def test_with_o_the_summary_names_the_files(baseline_runs: Path, kernel, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CLUE_REPORT_FONT", "none")
    run = baseline_runs / "afqmc"
    text = report_command(kernel, [run], tmp_path / "out")
    assert "baseline · sample *" in text and f"wrote {tmp_path / 'out' / 'index.html'}" in text
    data = json.loads(report_command(kernel, [run], tmp_path / "out2", as_json=True))
    assert data["rows"][0]["label"] == "baseline · sample" and len(data["files"]) == 3
    assert all(Path(f).is_file() for f in data["files"])
