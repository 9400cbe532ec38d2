"""The report explorer's data: every dev example of every run, with what each run answered.

People judge a model by reading what it got wrong, so the page carries each run's examples
(up to ``--examples N`` per run, the rest counted), not a handful. The explorer is one of
clue-report's own report sections (``clue_report_sections``, :data:`clue_report.hooks.EXPLORER`):
its ``build`` is called like any section's, with report.json's data so far. The examples
themselves are what the report already read and re-scored for the intervals
(:mod:`clue_report.scored`); :func:`clue_report.build.build_report` hands them over through
:data:`FEED` for the time its sections are built, so the dev data is read once, not twice.

The inputs of a task's examples are stored once per set of dev examples (``sources``: runs whose
examples under the same ids have the same texts and gold share one, whichever and however many
examples each answered), so two of them can be set side by side; each run's ``items`` hold the answers.
A run whose examples can be neither read again nor rebuilt from its records (an open question whose
dev data is gone) is still shown, from its records: ids, gold, answers, no inputs.
Ids are text, so the page's script keeps the data's order (``{"0": …}`` keys would be
reordered as numbers).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from clue_core.plugin import CLASSIFICATION, TaskSpec
from clue_report.collect import Run
from clue_report.explorer_items import describe, item_of, unread
from clue_report.scored import Scored

#: ``clue-core report --examples N``'s default: the examples shown per run (the rest are counted).
DEFAULT_EXAMPLES = 1000
#: Rows per page of the explorer (the issue asks for at least 100).
PER_PAGE = 200
#: Rows written into the page as HTML, for a browser without JavaScript.
STATIC_ROWS = 100


@dataclass
class Feed:
    """What the report read for the explorer: each run's re-scored examples, by report run id."""

    runs: dict[str, tuple[TaskSpec, Run, Scored]] = field(default_factory=dict)
    limit: int = DEFAULT_EXAMPLES


#: Set by :func:`clue_report.build.build_report` while its sections are built; ``None`` otherwise
#: (the explorer then has nothing to show).
FEED: ContextVar[Feed | None] = ContextVar("clue_report_explorer_feed", default=None)


@contextmanager
def feeding(feed: Feed) -> Iterator[None]:
    """Make ``feed`` the explorer's for the ``with`` block."""
    token = FEED.set(feed)
    try:
        yield
    finally:
        FEED.reset(token)


def run_labels(report: Mapping[str, Any]) -> dict[str, str]:
    """The name each run goes by in the explorer: its leaderboard row's label (``· seed N`` when the row
    averages seeds of the task), or ``model · run-N`` for a run with other settings (in no row)."""
    rows = {row["id"]: row for row in report["rows"]}
    labels = {}
    for run in report["runs"]:
        row = rows.get(run["row"]) if run.get("row") else None
        if row is None:
            labels[run["id"]] = f"{run['model']} · {run['id']}"
            continue
        cell = row["cells"].get(run["task"]) or {}
        seeds = len(cell.get("runs") or ()) > 1
        labels[run["id"]] = row["label"] + (f" · seed {run['seed']}" if seeds else "")
    return labels


def _confusion(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report's confusion matrix of a classification run (over all its examples), for the cells that filter."""
    found = (entry.get("analysis") or {}).get("confusion")
    if not found:
        return None
    return {"labels": list(found["labels"]), "columns": list(found["columns"]), "matrix": found["matrix"]}


def _source_key(task: str, described: Sequence[Mapping[str, Any]]) -> str:
    """A name for a set of dev examples: the task and a digest of what is shown of its first run's."""
    digest = hashlib.sha256(json.dumps(described, ensure_ascii=False, sort_keys=True).encode("utf-8"))
    return f"{task} · dev {digest.hexdigest()[:12]}"


def _source_for(sources: dict[str, dict[str, Any]], task: TaskSpec, task_name: str, from_data: bool,
                described: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The set of examples a run's answers join: the first of its task whose examples with the run's ids
    are the run's (same texts and gold), so runs on the same dev data share one however many examples
    each answered (a ``--limit`` run, another ``--examples`` cap) and can be set side by side; else a new one."""
    for source in sources.values():
        if source["task"] != task_name:
            continue
        by_id = source["by_id"]
        if all(by_id.get(example["id"], example) == example for example in described):
            return source
    key = _source_key(task_name, described)
    while key in sources:  # the same examples in another order: a name of its own
        key += "'"
    sources[key] = {"key": key, "task": task_name, "kind": task.kind, "labels": list(task.labels),
                    "from_data": from_data, "examples": [], "by_id": {}}
    return sources[key]


def _answers(feed: Feed, entry: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int] | None:
    """A run's shown examples (as :func:`describe` writes them), its answers to them, and how many it has.
    A run whose examples could be neither read nor rebuilt (an open question whose data is gone) is shown
    from its records: the ids, gold and answers, no inputs."""
    fed = feed.runs.get(entry["id"])
    if fed is None:
        return None
    task, run, scored = fed
    records = run.records or []
    metric = entry["primary_metric"]
    if scored.examples:
        shown = min(feed.limit, len(scored.examples))
        described = [describe(task, example, scored.from_data) for example in scored.examples[:shown]]
        items = [item_of(task, example, records[index], scored, index, metric)
                 for index, example in enumerate(scored.examples[:shown])]
        return described, items, len(scored.examples)
    if not records:
        return None
    shown = min(feed.limit, len(records))
    return ([unread(record) for record in records[:shown]],
            [item_of(task, None, record, None, index, metric) for index, record in enumerate(records[:shown])],
            len(records))


def build(files: Sequence[Any], report: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """The section's data: ``sources`` (each dev data's example inputs) and ``runs`` (each run's answers)."""
    feed = FEED.get()
    if feed is None or not feed.runs:
        return None, []
    labels = run_labels(report)
    sources: dict[str, dict[str, Any]] = {}
    runs = []
    for entry in report["runs"]:
        answered = _answers(feed, entry)
        if answered is None:
            continue
        described, items, total = answered
        task = feed.runs[entry["id"]][0]
        source = _source_for(sources, task, entry["task"], feed.runs[entry["id"]][2].from_data, described)
        for example in described:
            if example["id"] not in source["by_id"]:
                source["by_id"][example["id"]] = example
                source["examples"].append(example)
        data = {"run": entry["id"], "task": entry["task"], "model": entry["model"], "label": labels[entry["id"]],
                "source": source["key"], "metric": entry["primary_metric"], "total": total, "shown": len(items),
                "left_out": total - len(items), "items": items}
        confusion = _confusion(entry) if task.kind == CLASSIFICATION else None
        if confusion:
            data["confusion"] = confusion
        runs.append(data)
    for source in sources.values():
        del source["by_id"]
    if not runs:
        return None, []
    warnings = []
    capped = [r for r in runs if r["left_out"]]
    if capped:
        warnings.append(f"explorer: {len(capped)} run(s) show their first {feed.limit} dev examples only "
                        f"({sum(r['left_out'] for r in capped)} left out; clue-core report --examples N shows more)")
    return {"per_page": PER_PAGE, "static_rows": STATIC_ROWS, "limit": feed.limit,
            "sources": list(sources.values()), "runs": runs}, warnings
