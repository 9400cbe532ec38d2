"""DataCLUE in the report: each run on the user's data beside the run on the raw data.

DataCLUE fixes the model and its recipe; the user changes ``train.json``/``dev.json``, and the score
is macro F1 on ``test_public.json``, which every run shares (dev does not: the user changes it). So
where the report holds runs of one ``dataclue-*`` task by one model on different data (their
manifests' checksums of the data files differ), a section sets each one beside the raw-data run: the
``test_public`` primary (macro F1) of both, ``A − B`` and its paired bootstrap (95% interval and
p-value, :func:`clue_report.paired.paired`, the same numbers as ``clue-core bootstrap A B --split
test_public --samples R --seed S`` for the report's resamples and seed), and the run's
"not the DataCLUE protocol" mark, where its manifest's notes have one.

Which run is on the raw data, in this order:

1. the run ``clue-core report --baseline RUN`` names;
2. a run made with ``--sample`` (the bundled sample: the first lines of the raw files, byte for byte);
3. a run whose ``train.json`` and ``dev.json`` were read from a folder named ``raw_<task>`` (DataCLUE's
   own ``datasets/raw_cic`` layout: the checksums of the official files are not known to clue-core);
4. a run whose data checksums equal those of a run found by 1–3 (the same files, copied elsewhere: its
   seeds are averaged with it, as ``bootstrap --b`` does).

Runs with the same data are one side (their seeds averaged). When no run, or runs on two different data,
pass as the raw one, the section says so in one line (give ``--baseline``) and lists the runs' scores
without a difference. A run on other ``test_public`` examples (another file, ``--limit``) or without
``test_public`` predictions is listed with the reason instead of a difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, Registry, read_run
from clue_report.kit import Kit, escape, md_table, md_text, num, table

KEY = "dataclue"
TITLE = "DataCLUE: your data vs the raw data"
SPLIT = "test_public"
PREFIX = "dataclue-"
#: the DataCLUE plugin's mark (clue_tasks_dataclue.protocol.MARK; a plugin imports no other plugin's package)
MARK = "not the DataCLUE protocol"
DATA_FILES = ("train.json", "dev.json")


def _identity(record: Any) -> tuple[tuple[str, str], ...]:
    """The run's data: (file name, sha256) of each file it read (test_public's too: a run on another test_public
    is other data, listed with the reason it cannot be compared)."""
    files = (record.manifest.source or {}).get("files") or {}
    return tuple(sorted((Path(p).name, str(sha)) for p, sha in files.items()))


def _raw_by(record: Any, task: str) -> str | None:
    """Why the run is on the raw data (rules 2 and 3 of the module's docstring), or None."""
    source = record.manifest.source or {}
    if source.get("source") == "sample":
        return "the bundled raw sample (--sample)"
    folder = f"raw_{task[len(PREFIX):]}"
    parents = {Path(p).name: Path(p).parent.name for p in (source.get("files") or {})}
    if all(parents.get(name) == folder for name in DATA_FILES):
        return f"read from {folder}/ (DataCLUE's raw files)"
    return None


class _Run:
    """One DataCLUE run of the report: its record, its report id, its data, its marks."""

    def __init__(self, entry: Mapping[str, Any]) -> None:
        self.id, self.path = str(entry["id"]), Path(entry["path"])
        self.record = read_run(self.path)
        self.task, self.model = str(entry["task"]), str(entry["model"])
        value = ((entry.get("scored") or {}).get(SPLIT) or {}).get(entry["primary_metric"])
        self.score = float(value) if isinstance(value, (int, float)) else None
        self.data = _identity(self.record)
        self.marks = [str(n) for n in self.record.manifest.notes or () if MARK in str(n)]
        self.where = str((self.record.manifest.source or {}).get("user_data_dir")
                         or (self.record.manifest.source or {}).get("data_dir") or "")
        self._answers: dict[str, Any] | None = None

    @property
    def answers(self) -> dict[str, Any] | None:
        """Its test_public records by id (read when a comparison needs them), None when it has none."""
        if self._answers is None and self.record.has_predictions(SPLIT) and SPLIT in (
                self.record.metrics.scored_splits or ()):
            self._answers = {str(r.id): r for r in self.record.predictions(SPLIT)}
        return self._answers


def check_baseline(baseline: Path) -> None:
    """Before any work: ``--baseline`` names a complete run of a DataCLUE task (one line otherwise)."""
    if not baseline.is_dir():
        raise ClueError(f"--baseline {baseline}: no such run directory")
    try:
        task = read_run(baseline).metrics.task
    except ClueError as exc:
        raise ClueError(f"--baseline: {exc}") from None
    if not task.startswith(PREFIX):
        raise ClueError(f"--baseline {baseline}: a run of {task}, not of a DataCLUE task (dataclue-*)")


def build(kernel: Registry | None, report: Mapping[str, Any], *, baseline: Path | None = None, seed: int = 0,
          resamples: int = 1000) -> dict[str, Any] | None:
    """The section's data, or None when the report holds no DataCLUE task run on two different data."""
    entries = [e for e in report["runs"] if str(e["task"]).startswith(PREFIX)]
    chosen = None
    if baseline is not None:
        chosen = next((e["id"] for e in entries if Path(e["path"]).resolve() == baseline.resolve()), None)
        if chosen is None:
            raise ClueError(f"--baseline {baseline}: not one of the report's runs (give it among RUN_OR_FOLDER…)")
    runs: dict[tuple[str, str], list[_Run]] = {}
    for entry in entries:
        run = _Run(entry)
        runs.setdefault((run.task, run.model), []).append(run)
    blocks = [_block(kernel, task, model, members, chosen, seed, resamples)
              for (task, model), members in runs.items() if len({m.data for m in members}) > 1]
    if baseline is not None and not any(chosen in b["baseline"]["runs"] for b in blocks):
        raise ClueError(f"--baseline {baseline}: no other run of its task and model on other data in this report")
    return {"split": SPLIT, "resamples": resamples, "seed": seed, "tasks": blocks} if blocks else None


def _side(members: Sequence[_Run]) -> dict[str, Any]:
    """One data's runs (their seeds): ids, folder, their mean test_public primary (metrics.json's), marks."""
    present = [m.score for m in members if m.score is not None]
    return {"runs": [m.id for m in members], "paths": [str(m.path) for m in members], "where": members[0].where,
            "score": sum(present) / len(present) if present else None,
            "marks": list(dict.fromkeys(mark for m in members for mark in m.marks))}


def _block(kernel: Registry | None, task: str, model: str, members: list[_Run], chosen: str | None, seed: int,
           resamples: int) -> dict[str, Any]:
    by_data: dict[tuple[tuple[str, str], ...], list[_Run]] = {}
    for run in members:
        by_data.setdefault(run.data, []).append(run)
    if chosen is not None and any(m.id == chosen for m in members):
        raw_data, how = [m.data for m in members if m.id == chosen], "named by --baseline"
    else:
        found = {m.data: why for m in members if (why := _raw_by(m.record, task))}
        raw_data, how = list(found), next(iter(found.values()), "")
    block: dict[str, Any] = {"task": task, "model": model, "how": how, "reason": None, "comparisons": []}
    if len(raw_data) != 1:
        block["reason"] = ("cannot tell which run is on the raw data: " + (
            "none was made with --sample or read raw_<task>/" if not raw_data else
            "runs on different data each look raw") + "; give clue-core report --baseline RUN")
        block["baseline"] = {"runs": []}
        block["others"] = [_side(side) for side in by_data.values()]
        return block
    raw = by_data[raw_data[0]]
    block["baseline"] = _side(raw)
    task_spec = kernel.tasks.get(task) if kernel is not None else None
    for data, side in by_data.items():
        if data == raw_data[0]:
            continue
        entry = _side(side)
        entry.update(_compare(kernel, task_spec, side, raw, seed, resamples))
        block["comparisons"].append(entry)
    return block


def _compare(kernel: Registry | None, task: Any, side: Sequence[_Run], raw: Sequence[_Run], seed: int,
             resamples: int) -> dict[str, Any]:
    """The paired bootstrap of ``side`` against the raw runs, or the reason there is none."""
    from clue_report.paired import paired

    if task is None or kernel is None:
        return {"reason": "the task is not installed: no bootstrap"}
    try:  # a broken predictions file is this comparison's reason, not the whole report's error
        lacking = [str(r.path) for r in (*side, *raw) if r.answers is None]
    except ClueError as exc:
        return {"reason": f"cannot read its {SPLIT} predictions: {exc}"}
    if lacking:
        return {"reason": f"no {SPLIT} predictions in {', '.join(lacking)}"}
    first = raw[0].answers
    for run in (*raw[1:], *side):
        if set(run.answers) != set(first):
            return {"reason": f"{run.path} and {raw[0].path} scored different {SPLIT} examples "
                              f"({len(run.answers)} and {len(first)}): not comparable"}
        wrong = next((i for i in first if run.answers[i].gold != first[i].gold), None)
        if wrong is not None:
            return {"reason": f"{run.path} and {raw[0].path} have different {SPLIT} gold for id {wrong!r}: "
                              "not comparable"}
    metric = raw[0].record.metrics.primary_metric
    try:
        result = paired(kernel, task, metric, [r.answers for r in side], [r.answers for r in raw],
                        samples=resamples, seed=seed, files=[r.record.prediction_file(SPLIT) for r in (*side, *raw)])
    except ClueError as exc:  # e.g. no gold in the records: this comparison's reason
        return {"reason": str(exc)}
    return {"bootstrap": result, "reason": None}


def _p(value: float) -> str:
    return f"{value:.3g}"


def _rows(block: Mapping[str, Any], cell: Any) -> list[list[Any]]:
    rows = []
    base = block["baseline"]
    if base.get("runs"):
        rows.append(cell([f"B: raw data, {block['how']}", ", ".join(base["runs"]), base["where"], base["score"],
                          None, "", "; ".join(base["marks"])]))
    for entry in block["comparisons"] or block.get("others") or ():
        boot = entry.get("bootstrap")
        rows.append(cell(["A: your data" if base.get("runs") else "?", ", ".join(entry["runs"]), entry["where"],
                          entry["score"], boot, entry.get("reason") or "", "; ".join(entry["marks"])]))
    return rows


def _number(value: Any) -> str:
    return "—" if value is None else f"{value:.2f}"


def html(data: Mapping[str, Any], kit: Kit | None = None) -> str:
    """The section's body: a table per task and model."""
    parts = [f"<p class='muted'>{escape(SPLIT)} macro F1 (DataCLUE's score) of each run on your data (A) beside "
             f"the raw-data run (B); A − B with its paired bootstrap ({data['resamples']} draws, seed {data['seed']}, "
             f"95% percentile interval, two-sided p), as clue-core bootstrap A B --split {escape(SPLIT)} "
             "computes it.</p>"]
    for block in data["tasks"]:
        parts.append(f"<h3>{escape(block['task'])} · {escape(block['model'])}</h3>")
        if block["reason"]:
            parts.append(f"<p class='warn'>{escape(block['reason'])}</p>")

        def cell(values: list[Any]) -> list[str]:
            what, runs, where, score, boot, reason, marks = values
            diff = (f"<td class='num'>{boot['difference']:+.2f} <small>[{boot['low']:+.2f}, {boot['high']:+.2f}]"
                    f"</small></td>" if boot else f"<td class='text'>{escape(reason) or '—'}</td>")
            return [escape(what), escape(runs), f"<td class='text'>{escape(where)}</td>", num(score), diff,
                    f"<td>{_p(boot['p_value'])}</td>" if boot else "<td>—</td>",
                    f"<td class='text'>{escape(marks) or '—'}</td>"]

        parts.append(table(["data", "runs", "data folder", f"{SPLIT} macro F1", "A − B [95%]", "p", "mark"],
                           _rows(block, cell)))
    return "".join(parts)


def markdown(data: Mapping[str, Any], kit: Kit | None = None) -> list[str]:
    """The section in report.md: a table per task and model."""
    lines = [md_text(f"{SPLIT} macro F1 (DataCLUE's score) of each run on your data (A) beside the raw-data run "
                     f"(B); A − B with its "
                     f"paired bootstrap ({data['resamples']} draws, seed {data['seed']}, 95% interval, two-sided p), "
                     f"as clue-core bootstrap A B --split {SPLIT} computes it."), ""]
    for block in data["tasks"]:
        lines += [f"### {md_text(block['task'])} · {md_text(block['model'])}", ""]
        if block["reason"]:
            lines += [md_text(block["reason"]), ""]

        def cell(values: list[Any]) -> list[str]:
            what, runs, where, score, boot, reason, marks = values
            diff = f"{boot['difference']:+.2f} [{boot['low']:+.2f}, {boot['high']:+.2f}]" if boot else reason or "—"
            return [what, runs, where, _number(score), diff, _p(boot["p_value"]) if boot else "—", marks or "—"]

        lines += [md_table(["data", "runs", "data folder", f"{SPLIT} macro F1", "A − B [95%]", "p", "mark"],
                           _rows(block, cell)), ""]
    return lines


def views(kernel: Registry | None, report: dict[str, Any], *, baseline: Path | None, seed: int,
          resamples: int) -> tuple[list[tuple[str, str, str]], list[tuple[str, list[str]]]]:
    """Build the section into ``report[KEY]``; its HTML ``(name, title, body)`` and Markdown ``(title, lines)``
    views, to go before the plugins' sections (none when the report has nothing to compare)."""
    data = build(kernel, report, baseline=baseline, seed=seed, resamples=resamples)
    if data is None:
        return [], []
    report[KEY] = data
    return [(KEY, TITLE, html(data))], [(TITLE, markdown(data))]
