"""SuperCLUE's one dimension table: dimensions, categories, English names and the quadrant's axes.

The task's reader derives a question's category from it, ``compare`` orders and names the
dimensions of a comparison with it, and the report's SuperCLUE section gets the English
names through the comparison it reads; keeping one table means a renamed or added dimension
cannot score under one name and be drawn under another. Cheap to import (plain data).

A question of one of these dimensions may leave its category out (it is derived here); a
question set of one's own may use other dimensions, naming the category of each. Those keep
the order in which the runs name them, after SuperCLUE's, and get no English name (the
report then numbers them when it has no CJK font).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

SCIENCE, LIBERAL_ARTS, HARD = "理科", "文科", "Hard"

#: dimension → category, in SuperCLUE's order.
DIMENSIONS: dict[str, str] = {
    "计算": SCIENCE,
    "逻辑推理": SCIENCE,
    "代码": SCIENCE,
    "知识百科": LIBERAL_ARTS,
    "语言理解": LIBERAL_ARTS,
    "长文本": LIBERAL_ARTS,
    "角色扮演": LIBERAL_ARTS,
    "生成与创作": LIBERAL_ARTS,
    "安全": LIBERAL_ARTS,
    "工具使用": LIBERAL_ARTS,
    "精确指令遵循": HARD,
}

#: dimension → English name, in SuperCLUE's order (the order a comparison lists them in).
DIMENSION_EN: dict[str, str] = {
    "计算": "calculation",
    "逻辑推理": "logical reasoning",
    "代码": "code",
    "知识百科": "encyclopedic knowledge",
    "语言理解": "language understanding",
    "长文本": "long text",
    "角色扮演": "role playing",
    "生成与创作": "generation and creation",
    "安全": "safety",
    "工具使用": "tool use",
    "精确指令遵循": "precise instruction following",
}

CATEGORY_EN: dict[str, str] = {SCIENCE: "science", LIBERAL_ARTS: "liberal arts", HARD: "hard"}

#: The capability quadrant: 基础能力 (basic abilities) on x, 应用能力 (applied abilities) on y,
#: as (name, English name, dimensions).
QUADRANT_X = ("基础能力", "basic abilities", ("计算", "逻辑推理", "代码", "知识百科", "语言理解"))
QUADRANT_Y = ("应用能力", "applied abilities", ("长文本", "角色扮演", "生成与创作", "安全", "工具使用"))


def ordered(names: Iterable[str], canonical: Iterable[str]) -> list[str]:
    """``names`` without repeats: the canonical ones in canonical order, then the others as first seen."""
    seen = list(dict.fromkeys(names))
    known = [n for n in canonical if n in seen]
    return known + [n for n in seen if n not in known]


def named(names: Iterable[str], english: Mapping[str, str]) -> list[dict[str, str]]:
    """``[{"name", "name_en"?}]`` as comparison.json lists dimensions and categories (no English: left out)."""
    return [{"name": n, **({"name_en": english[n]} if n in english else {})} for n in names]
