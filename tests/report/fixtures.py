"""Run directories and comparisons written by the tests, where real ones do not exist yet.

LLM runs are written in exactly the layout ``clue-core run`` writes (manifest.json,
metrics.json, predictions/dev.jsonl) over the tasks' bundled samples, with
``model_category`` "llm" and ``report_settings`` {mode, shots}; their dev metrics are
scored with the kernel, as the runner would. The SuperCLUE comparison follows the schema
in docs/report.md, with numbers in the spirit of the SuperCLUE 2024 H1 report.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clue_core.data import sample_dir
from clue_core.examples import Example, MultipleChoiceExample, Prediction, SpanExample
from clue_core.reading import read_split
from clue_core.rundir import MANIFEST, METRICS
from clue_core.runner import prediction_records
from clue_core.scoring import score


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def llm_answer(example: Example, index: int) -> Any:
    """A deterministic 'LLM' that is right on every other example."""
    right = index % 2 == 0
    if isinstance(example, SpanExample):
        gold = example.answers[0][0] if example.answers else ""
        return gold if right else example.context[:6]
    if isinstance(example, MultipleChoiceExample):
        return example.label if right else (example.label + 1) % len(example.choices)
    return example.label if right else "0" if example.label != "0" else "1"


def write_run(kernel: Any, root: Path, task_name: str, *, model: str = "llm:Qwen-7B-Chat", category: str = "llm",
              report_settings: dict[str, Any] | None = None, answer: Callable[[Example, int], Any] = llm_answer,
              seed: int = 42, sample: bool = True, data_dir: Path | None = None,
              model_info: dict[str, Any] | None = None) -> Path:
    """One complete run directory of ``task_name`` answered by ``answer``; returns its path."""
    task = kernel.task(task_name)
    folder = data_dir or sample_dir(task)
    examples = read_split(task, folder, "dev").examples
    predictions = [Prediction(id=e.id, value=answer(e, i), raw=f"答案：{answer(e, i)}") for i, e in
                   enumerate(examples)]
    metrics = score(kernel, task, examples, predictions)
    run_dir = root / task.name
    (run_dir / "predictions").mkdir(parents=True)
    files = {str(p): _sha(p) for p in sorted(folder.iterdir()) if p.is_file()}
    manifest = {"status": "complete", "task": task.name, "kind": task.kind, "model": model, "model_spec": "llm",
                "clue_core": "0.1.0", "seed": seed, "settings": {**(report_settings or {}), "temperature": 0.0},
                "partial": None, "finished": f"2026-01-01T00:00:{seed % 60:02d}+0000",
                "data": {"source": "sample" if sample else "dir", "data_dir": str(folder), "files": files},
                "counts": {"dev": len(examples)}, "model_info": model_info or {}}
    (run_dir / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    (run_dir / METRICS).write_text(json.dumps({
        "task": task.name, "model": model, "model_category": category, "split": "dev",
        "primary_metric": task.primary_metric, "primary": metrics.get(task.primary_metric), "dev": metrics,
        "counts": {"dev": len(examples)}, "train_seconds": 0.0,
        "leaderboards": [lb.as_dict() for lb in task.leaderboards],
        "report_settings": report_settings or {}, "partial": False, "sample": sample,
        "model_info": model_info or {},
    }, ensure_ascii=False), encoding="utf-8")
    with open(run_dir / "predictions" / "dev.jsonl", "w", encoding="utf-8") as handle:
        for record in prediction_records(examples, predictions):
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return run_dir


def copy_as_full_data(kernel: Any, task_name: str, target: Path) -> Path:
    """The task's sample copied to a plain folder, to stand for a full dev set (a comparable run)."""
    shutil.copytree(sample_dir(kernel.task(task_name)), target)
    return target


COMPARISON = {
    "schema": "clue-core/comparison",
    "version": 1,
    "benchmark": "SuperCLUE",
    "title": "SuperCLUE 通用能力对比（测试数据）",
    "judge": "gpt-4-turbo (fixture)",
    "reference": "GPT-4-Turbo-0409",
    "tie_margin": 0.5,
    "dimensions": [
        {"name": "计算", "name_en": "calculation"},
        {"name": "逻辑推理", "name_en": "reasoning"},
        {"name": "知识百科", "name_en": "knowledge"},
        {"name": "语言理解", "name_en": "language"},
        {"name": "工具使用", "name_en": "tool use"},
        {"name": "角色扮演", "name_en": "role play"},
        {"name": "精确指令遵循", "name_en": "instruction following"},
    ],
    "categories": [
        {"name": "理科", "name_en": "science", "dimensions": ["计算", "逻辑推理"]},
        {"name": "文科", "name_en": "humanities", "dimensions": ["知识百科", "语言理解", "角色扮演"]},
        {"name": "Hard", "dimensions": ["精确指令遵循"]},
    ],
    "quadrant": {
        "x": {"name": "基础能力", "name_en": "basic abilities",
              "dimensions": ["计算", "逻辑推理", "知识百科", "语言理解"]},
        "y": {"name": "应用能力", "name_en": "applied abilities", "dimensions": ["工具使用", "角色扮演"]},
    },
    "models": [
        {"name": "GPT-4o", "kind": "llm", "total": 81.0,
         "dimensions": {"计算": 82.1, "逻辑推理": 80.4, "知识百科": 78.0, "语言理解": 79.5, "工具使用": 83.0,
                        "角色扮演": 76.2, "精确指令遵循": 85.0},
         "categories": {"理科": 81.0, "文科": 76.0, "Hard": 85.0},
         "vs_reference": {"overall": {"win": 20.47, "tie": 66.81, "loss": 12.72},
                          "dimensions": {"计算": {"win": 25.0, "tie": 60.0, "loss": 15.0}}}},
        {"name": "Qwen2-72B-Instruct", "kind": "llm", "parameters": 72000000000, "total": 77.0,
         "dimensions": {"计算": 76.3, "逻辑推理": 75.1, "知识百科": 77.2, "语言理解": 78.0, "工具使用": 74.5,
                        "角色扮演": 75.0, "精确指令遵循": 79.0},
         "categories": {"理科": 76.0, "文科": 75.5, "Hard": 79.0},
         "vs_reference": {"overall": {"win": 18.86, "tie": 65.06, "loss": 16.08}, "dimensions": {}}},
        {"name": "文心一言4.0", "name_en": "ERNIE-4.0", "kind": "llm", "total": 72.5,
         "dimensions": {"计算": 70.0, "逻辑推理": 68.5, "知识百科": 80.1, "语言理解": 77.4, "工具使用": 70.2,
                        "角色扮演": 71.0, "精确指令遵循": 60.3},
         "categories": {"理科": 69.2, "文科": 76.2, "Hard": 60.3},
         "vs_reference": {"overall": {"win": 12.0, "tie": 55.5, "loss": 32.5}, "dimensions": {}}},
        {"name": "GPT-4-Turbo-0409", "kind": "llm", "total": 79.1,
         "dimensions": {"计算": 79.0, "逻辑推理": 78.2, "知识百科": 79.3, "语言理解": 79.0, "工具使用": 80.1,
                        "角色扮演": 77.0, "精确指令遵循": 80.0},
         "categories": {"理科": 77.0, "文科": 77.5, "Hard": 80.0}},
    ],
    "maturity": [
        {"dimension": "知识百科", "index": 0.86, "band": "high"},
        {"dimension": "计算", "index": 0.71, "band": "middle"},
        {"dimension": "精确指令遵循", "index": 0.23, "band": "low"},
    ],
}


def write_comparison(folder: Path, data: dict[str, Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "comparison.json"
    path.write_text(json.dumps(data or COMPARISON, ensure_ascii=False, indent=1), encoding="utf-8")
    return path
