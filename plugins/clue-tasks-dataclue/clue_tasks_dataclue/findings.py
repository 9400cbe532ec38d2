"""What an audit found, and the files it writes: ``audit.json``, ``audit.md`` and the corrected copy.

The corrected copy (``OUT/data/``) is the user's ``train.json`` and ``dev.json`` with the suspects
relabelled (``--action relabel``: the suggested label, in the file's own JSON type, and
``label_des`` rewritten from labels.json where the record has one), dropped (``drop``) or left
(``none``); every other line is copied byte for byte, and ``labels.json``/``test_public.json`` are
copied beside them, so ``--data-dir OUT/data`` runs the task on the corrected files. Duplicates are
reported, not changed (which copy to keep is the user's call).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import atomic_open, write_json
from clue_tasks_dataclue.audit import SPLITS, Pool
from clue_tasks_dataclue.confident import Suspect, thresholds
from clue_tasks_dataclue.dupes import exact_groups, key, near_pairs
from clue_tasks_dataclue.readers import LABELS_FILE, locate

ACTIONS = ("relabel", "drop", "none")


def _where(pool: Pool, i: int) -> dict[str, Any]:
    example = pool.examples[i]
    return {"split": pool.splits[i], "line": pool.lines[i], "id": pool.records[i].get("id"), "text": example.text,
            **({"text_pair": example.text_pair} if example.text_pair is not None else {}), "label": example.label}


def findings(pool: Pool, rows: Sequence[Sequence[float]], found: Sequence[Suspect], *, near: float,
             arguments: dict[str, Any]) -> dict[str, Any]:
    """The audit as one JSON document."""
    labels = pool.task.labels
    limits = thresholds(rows, pool.given(), len(labels))
    keys = [key(e.text, e.text_pair) for e in pool.examples]
    groups = exact_groups(keys)
    return {
        "task": pool.task.name, **arguments,
        "examples": {split: pool.splits.count(split) for split in SPLITS},
        "thresholds": {labels[j]: limits[j] for j in range(len(labels)) if limits[j] is not None},
        "suspects": [{**_where(pool, s.index), "suggested": labels[s.suggested], "p_given": s.p_given,
                      "p_suggested": s.p_suggested, "margin": s.margin} for s in found],
        "exact_duplicates": [{"examples": [_where(pool, i) for i in group],
                              "conflicting_labels": len({pool.examples[i].label for i in group}) > 1}
                             for group in groups],
        "near_duplicates": [{"a": _where(pool, i), "b": _where(pool, j), "jaccard": similarity}
                            for i, j, similarity in near_pairs(keys, near)],
        "distribution": {split: dict(sorted(Counter(e.label for e, s in zip(pool.examples, pool.splits)
                                                    if s == split).items(), key=lambda kv: _order(kv[0])))
                         for split in SPLITS},
    }


def _order(label: str) -> tuple[int, str]:
    return (int(label), "") if label.isdigit() else (1 << 30, label)


def corrected_copy(pool: Pool, found: Sequence[Suspect], action: str, target: Path, data_dir: Path) -> dict[str, int]:
    """Write ``target/train.json`` and ``dev.json`` with ``action`` applied; how many lines changed."""
    target.mkdir(parents=True, exist_ok=True)
    change = {s.index: pool.task.labels[s.suggested] for s in found} if action != "none" else {}
    counts = {"relabelled": 0, "dropped": 0}
    for split in SPLITS:
        with atomic_open(target / f"{split}.json") as out:
            for i in (i for i, s in enumerate(pool.splits) if s == split):
                if i not in change:
                    out.write(pool.raw_lines[i] if pool.raw_lines[i].endswith("\n") else pool.raw_lines[i] + "\n")
                elif action == "drop":
                    counts["dropped"] += 1
                else:
                    out.write(json.dumps(_relabelled(pool, i, change[i]), ensure_ascii=False) + "\n")
                    counts["relabelled"] += 1
    for name in (LABELS_FILE, "test_public.json"):
        path, _ = locate(pool.task, data_dir, name, required=False)
        if path is not None:
            shutil.copy(path, target / name)
    return counts


def _relabelled(pool: Pool, i: int, label: str) -> dict[str, Any]:
    record = dict(pool.records[i])
    record["label"] = int(label) if type(record.get("label")) is int else label
    if "label_des" in record and label in pool.task.label_descriptions:
        record["label_des"] = pool.task.label_descriptions[label]
    return record


def write_reports(out: Path, report: dict[str, Any], top: int = 50) -> None:
    """``audit.json`` and a readable ``audit.md`` (the first ``top`` suspects and duplicates)."""
    write_json(out / "audit.json", report)
    lines = [f"# DataCLUE audit: {report['task']}", "",
             f"{report['folds']}-fold cross-validated predictions of `{report['model']}` (seed {report['seed']}) "
             f"on {report['examples']['train']} train + {report['examples']['dev']} dev examples from "
             f"`{report['data_dir']}`.", "",
             f"- suspects (confident learning): **{len(report['suspects'])}**; action `{report['action']}`: "
             f"{report['changes']['relabelled']} relabelled, {report['changes']['dropped']} dropped "
             f"(corrected copy in `data/`)",
             f"- exact duplicate groups: {len(report['exact_duplicates'])} "
             f"({sum(g['conflicting_labels'] for g in report['exact_duplicates'])} with conflicting labels)",
             f"- near-duplicate pairs (character {report['ngram']}-gram Jaccard >= {report['near']}): "
             f"{len(report['near_duplicates'])}", "", "## Likely label errors", "",
             "| rank | split:line | text | given | suggested | p(given) | p(suggested) |",
             "|---|---|---|---|---|---|---|"]
    for rank, s in enumerate(report["suspects"][:top], 1):
        text = s["text"] + (f" / {s['text_pair']}" if "text_pair" in s else "")
        lines.append(f"| {rank} | {s['split']}:{s['line']} | {_cell(text)} | {s['label']} | {s['suggested']} | "
                     f"{s['p_given']:.3f} | {s['p_suggested']:.3f} |")
    lines += ["", "## Label distribution", "", "| label | train | dev |", "|---|---|---|"]
    labels = dict.fromkeys([*report["distribution"]["train"], *report["distribution"]["dev"]])
    lines += [f"| {label} | {report['distribution']['train'].get(label, 0)} | "
              f"{report['distribution']['dev'].get(label, 0)} |" for label in labels]
    lines += ["", "## Duplicates", ""]
    for group in report["exact_duplicates"][:top]:
        places = ", ".join(f"{e['split']}:{e['line']} ({e['label']})" for e in group["examples"])
        lines.append(f"- exact{' (labels differ)' if group['conflicting_labels'] else ''}: "
                     f"{_cell(group['examples'][0]['text'])}: {places}")
    for pair in report["near_duplicates"][:top]:
        a, b = pair["a"], pair["b"]
        lines.append(f"- near ({pair['jaccard']:.2f}): {a['split']}:{a['line']} {_cell(a['text'])} ~ "
                     f"{b['split']}:{b['line']} {_cell(b['text'])}")
    with atomic_open(out / "audit.md") as handle:
        handle.write("\n".join(lines) + "\n")


def _cell(text: str, width: int = 60) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"
