"""SuperCLUE's dimensions, categories and quadrant axes: the order and English names a comparison uses.

Runs may carry dimensions of their own (a user's question set); those keep the order in
which the runs name them, after SuperCLUE's, and get no English name (the report then
numbers them when it has no CJK font).
"""

from __future__ import annotations

from collections.abc import Iterable

#: SuperCLUE's dimensions in the benchmark's order, with their English names.
DIMENSIONS_EN = {
    "计算": "calculation", "逻辑推理": "logical reasoning", "代码": "code",
    "知识百科": "encyclopedic knowledge", "语言理解": "language understanding", "长文本": "long text",
    "角色扮演": "role playing", "生成与创作": "generation and creation", "安全": "safety",
    "工具使用": "tool use", "精确指令遵循": "precise instruction following",
}
CATEGORIES_EN = {"理科": "science", "文科": "liberal arts", "Hard": "hard"}

#: The capability quadrant: 基础能力 (basic abilities) on x, 应用能力 (applied abilities) on y.
QUADRANT_X = ("计算", "逻辑推理", "代码", "知识百科", "语言理解")
QUADRANT_Y = ("长文本", "角色扮演", "生成与创作", "安全", "工具使用")


def ordered(names: Iterable[str], canonical: Iterable[str]) -> list[str]:
    """``names`` without repeats: the canonical ones in canonical order, then the others as first seen."""
    seen = list(dict.fromkeys(names))
    known = [n for n in canonical if n in seen]
    return known + [n for n in seen if n not in known]


def named(names: Iterable[str], english: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": n, **({"name_en": english[n]} if n in english else {})} for n in names]
