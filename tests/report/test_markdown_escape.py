"""report.md shows every user-controlled text as text: a model named ``<img src=x onerror=alert(1)>``
was written raw, so GitHub (or any renderer allowing inline HTML) made an element of it. The page
escapes the same texts (issue: report.md writes model names raw)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from clue_report.kit import Markdown, md_table, md_text
from tests.report.fixtures import write_run

IMG = "<img src=x onerror=alert(1)>"
SETTING = "<script>alert(2)</script>"
FOLDER = "<svg onload=alert(3)>"


def _until_blank(lines: list[str]) -> list[str]:
    """The table lines at the start of ``lines``."""
    out = []
    for line in lines:
        if not line.startswith("|"):
            break
        out.append(line)
    return out


def _cells(line: str) -> list[str]:
    """A table line split on its unescaped pipes."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def test_hostile_names_stay_text_in_report_md_and_index_html(run_cli, llm_kernel, tmp_path: Path) -> None:
    kernel = llm_kernel  # its AFQMC has a published generation score: the run is set beside it, in bold
    runs = tmp_path / "runs"
    for task in ("afqmc", "c3"):
        write_run(kernel, runs, task, model=IMG + " a|b `c` *d* [e](http://x)",
                  report_settings={"mode": "generate", "shots": 0, "prompt": SETTING})
    unfinished = write_run(kernel, tmp_path / "elsewhere", "tnews").rename(runs / FOLDER)
    manifest = unfinished / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text(encoding="utf-8")), "status": "running"}),
                        encoding="utf-8")
    out = tmp_path / "report"
    result = run_cli("report", runs, "-o", out, kernel=kernel)
    assert result.exit_code == 0, result.output

    markdown = (out / "report.md").read_text(encoding="utf-8")
    for raw in (IMG, SETTING, FOLDER, "<img", "<script", "<svg", "[e](http"):
        assert raw not in markdown
    assert "&lt;img src=x onerror=alert(1)&gt; a\\|b \\`c\\` \\*d\\* \\[e\\](http://x)" in markdown
    assert "prompt=&lt;script&gt;alert(2)&lt;/script&gt;" in markdown
    assert f"left out, unfinished: {runs}/&lt;svg onload=alert(3)&gt; (status 'running'" in markdown
    board = _until_blank(markdown.split("## Leaderboard\n\n", 1)[1].splitlines())
    assert len({len(_cells(line)) for line in board}) == 1  # the name's pipe split no cell
    assert "**&lt;img src=x onerror=alert(1)&gt;" in markdown  # bold in the boards beside published scores

    page = (out / "index.html").read_text(encoding="utf-8")
    for raw in (IMG, SETTING, FOLDER, "<img src=x", "<svg onload"):
        assert raw not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert "&lt;svg onload=alert(3)&gt;" in page


def test_md_text_escapes_html_and_markdown_but_not_words() -> None:
    assert md_text(IMG) == "&lt;img src=x onerror=alert(1)&gt;"
    assert md_text("a&b|c`d`*e*[f](g)\\h\ni") == "a&amp;b\\|c\\`d\\`\\*e\\*\\[f\\](g)\\\\h i"
    assert md_text("test_public hf-tiny · sample 文心") == "test_public hf-tiny · sample 文心"


def test_md_table_escapes_text_cells_and_keeps_markdown_cells() -> None:
    table = md_table(["model", "<b>"], [["a|b", Markdown("**x** [1.00, 2.00]")]])
    assert table.splitlines() == ["| model | &lt;b&gt; |", "|---|---|", "| a\\|b | **x** [1.00, 2.00] |"]


def test_a_comparison_title_and_reference_stay_text(run_cli, kernel, tmp_path: Path) -> None:
    """The SuperCLUE section's own lines (its title, the reference model, the quadrant's and the
    maturity's texts) come from comparison.json, a file the user gives: escaped as the tables are."""
    import copy

    from tests.report.fixtures import COMPARISON, write_comparison

    data = copy.deepcopy(COMPARISON)
    hostile = "<img src=x onerror=alert(4)>"
    data["title"] = hostile + " title"
    data["reference"] = data["models"][-1]["name"] = hostile + " ref"
    data["quadrant"]["x"]["name"] = hostile + " x"
    data["maturity_definition"] = hostile + " maturity"
    write_comparison(tmp_path / "cmp", data)
    result = run_cli("report", tmp_path / "cmp", "-o", tmp_path / "report", kernel=kernel)
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "<img" not in markdown
    for text in ("title", "ref", "x", "maturity"):
        assert f"&lt;img src=x onerror=alert(4)&gt; {text}" in markdown
    assert "<img src=x" not in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
