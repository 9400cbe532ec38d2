"""The kernel knows no particular task: none of SuperCLUE's dimension or category names, in Chinese
or English, appears anywhere in clue_core/ (the plugin's dimensions.py is their one table)."""

from __future__ import annotations

import re
from pathlib import Path

from clue_tasks_superclue.dimensions import CATEGORY_EN, DIMENSION_EN, DIMENSIONS

KERNEL = Path(__file__).resolve().parents[2] / "clue_core"
#: English names that are also ordinary words of the kernel's own prose and code.
ORDINARY = {"code", "safety", "hard", "Hard"}


def names() -> set[str]:
    found = {*DIMENSIONS, *DIMENSIONS.values(), *DIMENSION_EN.values(), *CATEGORY_EN.values()}
    return {name for name in found if name not in ORDINARY}


def test_the_table_is_read_at_all():
    assert len(names()) > 20 and "计算" in names() and "logical reasoning" in names()


def test_no_superclue_dimension_or_category_name_in_the_kernel():
    hits = []
    for path in sorted(KERNEL.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for name in names():
            pattern = re.escape(name) if not name.isascii() else rf"\b{re.escape(name)}\b"
            if re.search(pattern, text, flags=re.IGNORECASE if name.isascii() else 0):
                hits.append(f"{path.relative_to(KERNEL.parent)}: {name}")
    assert not hits, "SuperCLUE names in the kernel:\n" + "\n".join(hits)
