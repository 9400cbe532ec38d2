"""SuperCLUE run folders with fixed judgments, written in the record format the superclue task writes.

Each question is ``(id, dimension, points)`` or a dict with more (method, grade, pairwise
verdict, …); the category is SuperCLUE's for the dimension, so tests state only what they
check.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CATEGORY = {"计算": "理科", "逻辑推理": "理科", "代码": "理科", "知识百科": "文科", "语言理解": "文科",
            "长文本": "文科", "角色扮演": "文科", "生成与创作": "文科", "安全": "文科", "工具使用": "文科",
            "精确指令遵循": "Hard"}


def record(qid: str, dimension: str, points: float | None, *, method: str = "judge",
           pairwise: str | bool | None = False, grade: Any = "auto", question: str | None = None,
           category: str | None = None) -> dict[str, Any]:
    scoring: dict[str, Any] = {"dimension": dimension, "category": category or CATEGORY.get(dimension, "其他"),
                               "method": method, "points": points}
    if method == "judge":
        parsed = points is not None
        scoring["judge"] = {"grade": (int(points) if parsed else None) if grade == "auto" else grade,
                            "reasons": f"理由：{qid} 的回答" if parsed else "", "output": "评分：…",
                            "parsed": parsed, "repaired": False, "prompt": "…"}
    elif method == "constraints":
        scoring["constraints"] = {"strict": points == 10, "loose": points == 10, "checks": []}
    if pairwise is not False:
        scoring["pairwise"] = {"verdict": pairwise, "reference_answer": "参考答案", "orders": []}
    text = question or f"问题 {qid}：请回答。"
    return {"id": qid, "prediction": f"{qid} 的回答", "raw": {"prompts": [text], "answers": [f"{qid} 的回答"]},
            "scoring": scoring}


def write_run(root: Path, model: str, questions: Sequence[tuple | dict[str, Any]], *, task: str = "superclue",
              status: str = "complete", settings: dict[str, Any] | None = None,
              records: list[dict[str, Any]] | None = None) -> Path:
    """``root/<task>/`` with manifest.json, metrics.json and predictions/dev.jsonl; returns ``root``."""
    folder = root / task
    (folder / "predictions").mkdir(parents=True, exist_ok=True)
    if records is None:
        records = [record(*q) if isinstance(q, tuple) else record(**q) for q in questions]
    (folder / "manifest.json").write_text(json.dumps(
        {"status": status, "task": task, "model": model, "settings": {"judge": "judge-model", **(settings or {})}},
        ensure_ascii=False), encoding="utf-8")
    (folder / "metrics.json").write_text(json.dumps(
        {"task": task, "primary_metric": "score", "model": model, "model_category": "llm", "dev": {},
         "model_info": {}}, ensure_ascii=False),
        encoding="utf-8")
    with (folder / "predictions" / "dev.jsonl").open("w", encoding="utf-8") as handle:
        for item in records:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    return root


def read_comparison(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "comparison.json").read_text(encoding="utf-8"))
