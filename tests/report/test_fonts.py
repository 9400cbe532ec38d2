"""Chinese labels never turn into boxes: with a CJK font they are drawn, without one the
charts use English names. matplotlib's missing-glyph warnings are errors here."""

from __future__ import annotations

import io
import warnings

import pytest

from clue_report.fonts import FONT_ENV, choose_font
from clue_report.kit import Chart, Kit
from clue_tasks_superclue import report_section
from clue_tasks_superclue.compare.comparison_file import load_comparison
from tests.report.conftest import GLYPH_WARNING, in_ci
from tests.report.fixtures import write_comparison


@pytest.fixture
def comparison(tmp_path):
    return load_comparison(write_comparison(tmp_path))


def _draw_strict(comparison, choice) -> list[Chart]:
    """The SuperCLUE section's charts, drawn through the report's kit as a report draws them."""
    drawn: list[Chart] = []
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=GLYPH_WARNING)
        report_section.html([comparison], Kit("superclue", choice, drawn))
    return drawn


def test_the_check_catches_boxes() -> None:
    """Drawing Chinese with a font that lacks it warns, and the tests' filter makes that an error."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure()
    FigureCanvasAgg(figure)
    figure.add_subplot().set_title("基础能力")
    with warnings.catch_warnings(), pytest.raises(UserWarning, match="Glyph"):
        warnings.filterwarnings("error", message=GLYPH_WARNING)
        with __import__("matplotlib").rc_context({"font.family": "sans-serif", "font.sans-serif": ["DejaVu Sans"]}):
            figure.savefig(io.BytesIO(), format="png")


def test_without_cjk_font_labels_fall_back_to_english(comparison, monkeypatch) -> None:
    monkeypatch.setenv(FONT_ENV, "none")
    choice = choose_font()
    assert not choice.cjk
    assert choice.label("计算", "calculation") == "calculation"
    assert choice.label("文心一言4.0", None) == "????4.0"  # no English name: never a box, still a label
    assert choice.label("afqmc") == "afqmc"
    assert [m["name_en"] for m in comparison["models"]][2] == "ERNIE-4.0"
    drawn = _draw_strict(comparison, choice)
    assert [c.id.rsplit("-", 1)[1] for c in drawn] == ["dimensions", "categories", "outcomes", "quadrant"]


def test_with_cjk_font_chinese_is_drawn(comparison) -> None:
    choice = choose_font("auto")
    if not choice.cjk:
        if in_ci():
            pytest.fail(f"CI installs fonts-wqy-microhei, but no CJK font was found: {choice.reason}")
        pytest.skip(choice.reason)
    assert choice.label("计算", "calculation") == "计算"
    assert len(_draw_strict(comparison, choice)) == 4


def test_a_named_font_without_chinese_falls_back(monkeypatch) -> None:
    choice = choose_font("DejaVu Sans")
    assert not choice.cjk and "English labels" in choice.reason
