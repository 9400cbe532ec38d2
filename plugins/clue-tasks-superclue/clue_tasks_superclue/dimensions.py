"""SuperCLUE's dimensions and categories, with their English names (cheap to import).

A question of one of these dimensions may leave its category out (it is derived here);
a question set of one's own may use other dimensions, naming the category of each.
"""

from __future__ import annotations

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
