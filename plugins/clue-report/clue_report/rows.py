"""Leaderboard rows: which runs make one row, and what each cell and group score holds.

A row is one way of running one model: the model, how it was used (mode and shots for
LLMs) and the data it saw (full dev, the bundled sample, or a ``--limit`` subset); the
last keeps sample and partial runs visibly apart from full ones. In a row, a task's runs
that differ only in seed are one cell (mean ± std over seeds); runs of the same task
with other settings or other data are not averaged in, and the report says so.

A task that repeats its training over the values of a reader setting (``TaskSpec.repeat``:
FewCLUE's ``--set split=all``, six run folders) reports the mean ± std over the repeat's
``averaged`` values (splits 0–4). Those runs form a row of their own (``· split 0–4``), in
which the repeat value is treated as the seed is: runs differing only in it (and in the dev
files it picks) are one cell, the spread is over them. The repeat's other values (``few_all``)
are ordinary runs, in the ordinary row. Cells carry the labelled splits besides dev that the
runs scored (``scored``: FewCLUE's test_public), averaged the same way.

A sweep's trials (``clue-core sweep -o DIR``, :mod:`clue_report.sweeps`) are rows per
configuration: the grid values are part of how the model was run, as an LLM's prompt settings
are, and a cell whose runs are the configuration the sweep chose for the task is marked
``sweep_best``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import Registry
from clue_report.groups import average_groups
from clue_report.stats import spread

NOT_COMPARABLE_SAMPLE = "bundled sample data, not the official dev set"


def human_count(count: int | None) -> str:
    if not count:
        return ""
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if count >= size:
            return f"{count / size:.3g}{suffix}"
    return str(count)


def model_facts(kernel: Registry | None, manifest: Mapping[str, Any], metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Kind, size and parameter count of a run's model (from its spec when installed)."""
    spec = kernel.models.get(manifest.get("model_spec") or "") if kernel is not None else None
    category = metrics.get("model_category") or (spec.category if spec else "") or ""
    info = metrics.get("model_info") or {}
    parameters = info.get("parameters") if isinstance(info.get("parameters"), int) else None
    parameters = parameters or (spec.parameters if spec else None)
    if category == "llm":
        kind = "LLM"
    elif category:
        kind = category
    else:
        kind = "encoder" if spec is not None and spec.trains else "?"
    return {"kind": kind, "category": category, "parameters": parameters,
            "size": human_count(parameters) or (spec.size_class if spec else "")}


def data_version(manifest: Mapping[str, Any], sample: bool) -> str:
    """``"sample 1a2b3c4d"`` / ``"full …"``: where the dev data came from and a digest of its dev files."""
    files = (manifest.get("data") or {}).get("files") or {}
    named = {Path(path).name: digest for path, digest in files.items()}
    dev = {name: digest for name, digest in named.items() if "dev" in name} or named
    digest = hashlib.sha256(json.dumps(sorted(dev.items())).encode()).hexdigest()[:8] if dev else "unknown"
    return f"{'sample' if sample else 'full'} {digest}"


def extra_fields(run: Any, task: Any) -> dict[str, Any]:
    """A run's scores on its labelled splits besides dev (``scored``) and its place in a repeat
    (``repeat``): keys present only where the run has them, so a report of runs without either
    reads as it did before they existed."""
    extra: dict[str, Any] = {}
    if run.scored:
        extra["scored"] = run.scored
    repeat = repeat_of(run.manifest, task)
    if repeat is not None:
        extra["repeat"] = repeat
    if run.sweep:  # a sweep's trial: its grid values split its row (row_key), its cell may be the best
        extra["sweep"] = run.sweep
    return extra


def repeat_of(manifest: Mapping[str, Any], task: Any) -> dict[str, Any] | None:
    """``{"setting", "value", "averaged"}`` for one training of a repeated task (the manifest's
    ``repeat``), ``averaged`` the values the task's :class:`~clue_core.plugin.Repeat` averages
    (empty when the task is not installed: its runs are then not folded); None for other runs."""
    repeat = manifest.get("repeat")
    if not isinstance(repeat, Mapping) or not isinstance(repeat.get("setting"), str):
        return None
    spec = getattr(task, "repeat", None)
    averaged = list(spec.averaged) if spec is not None and spec.setting == repeat["setting"] else []
    return {"setting": repeat["setting"], "value": str(repeat.get("value")), "averaged": averaged}


def family(run: Mapping[str, Any]) -> str:
    """``"split 0–4"`` for a run among a repeat's averaged values, else ``""``."""
    repeat = run.get("repeat")
    if not repeat or repeat["value"] not in repeat["averaged"]:
        return ""
    values = repeat["averaged"]
    return f"{repeat['setting']} {values[0]}–{values[-1]}" if len(values) > 2 else \
        f"{repeat['setting']} {', '.join(values)}"


#: Reported settings left out of a row's key at this value: a task asked by clue-core's own prompt (the
#: ``protocol`` setting's default) shares its row with a run made before the setting existed, which was asked
#: so too; a preset (``opencompass:<config>``) is a row of its own.
KEY_DEFAULTS = {"protocol": "clue-core"}


def row_key(run: Mapping[str, Any]) -> tuple[Any, ...]:
    """Model, mode, shots, data, and for an LLM every other reported setting (chat, temperature, …):
    asked another way, an LLM is another row; an encoder's epochs differ per task and do not split it.
    Last, the repeat family (``"split 0–4"``, :func:`family`), whose runs are a row of their own."""
    usage = run["usage"]
    parts = ["sample"] if run["sample"] else []
    if run["partial"]:
        flag = "--first" if run.get("first") else "--limit"
        parts.append(f"{flag} {run['limit']}" if run["limit"] is not None else flag)
    folded = family(run)
    skip = ("mode", "shots", run["repeat"]["setting"]) if folded else ("mode", "shots")
    asked = ({k: v for k, v in run["report_settings"].items() if k not in skip and KEY_DEFAULTS.get(k) != v}
             if usage["llm"] else {})
    if run.get("sweep"):  # a sweep's configurations are rows of their own: the grid point is how it was run
        asked.update(run["sweep"]["settings"])
    return (run["model"], usage["mode"], usage["shots"], ", ".join(parts) or "full",
            json.dumps(asked, sort_keys=True, default=str), folded)


def row_label(key: tuple[Any, ...]) -> str:
    model, mode, shots, data, _, folded = key
    parts = [model]
    if mode and mode != "fine-tuned":
        parts.append(mode if shots is None else f"{mode}, {shots}-shot")
    if data != "full":
        parts.append(data)
    if folded:
        parts.append(folded)
    return " · ".join(parts)


def _config(run: Mapping[str, Any]) -> str:
    """Everything but the seed (and, in a repeat family, the repeat value) that decides a run's result."""
    if family(run):  # the repeat value picks the train and dev files: like the seed, it is what varies
        settings = {k: v for k, v in run["settings"].items() if k != run["repeat"]["setting"]}
        return json.dumps([settings, run["data_version"].split()[0], run["limit"]], sort_keys=True, default=str)
    return json.dumps([run["settings"], run["data_version"], run["limit"]], sort_keys=True, default=str)


def _trial(run: Mapping[str, Any]) -> tuple[Any, ...]:
    """What tells the runs of one cell apart: the seed, and in a repeat family the repeat value."""
    return (run["repeat"]["value"], run["seed"]) if family(run) else (run["seed"],)


def _trial_text(run: Mapping[str, Any]) -> str:
    text = f"seed {run['seed']}"
    return f"{run['repeat']['setting']} {run['repeat']['value']}, {text}" if family(run) else text


def _pick(runs: Sequence[dict[str, Any]], warnings: list[str], label: str) -> list[dict[str, Any]]:
    """The runs of one (row, task) that form its cell: one configuration, one run per seed."""
    configs: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        configs.setdefault(_config(run), []).append(run)
    # most runs first, then the latest, then the first named on the command line
    ordered = [group for _, group in sorted(enumerate(configs.values()), key=lambda item: (
        len(item[1]), max(r["finished"] for r in item[1]), -item[0]))]
    chosen = ordered[-1]
    for other in ordered[:-1]:
        differs = sorted(k for k in {*chosen[0]["settings"], *other[0]["settings"]}
                         if chosen[0]["settings"].get(k) != other[0]["settings"].get(k))
        if chosen[0]["data_version"] != other[0]["data_version"]:
            differs.append("dev data")
        warnings.append(f"{label}, {chosen[0]['task']}: {len(other)} run(s) with other settings "
                        f"({', '.join(differs[:4]) or 'limit'}) are listed under Runs but not averaged into "
                        f"the table: {', '.join(r['path'] for r in other)}")
    by_trial: dict[Any, dict[str, Any]] = {}
    for run in sorted(chosen, key=lambda r: r["finished"]):
        if _trial(run) in by_trial:
            warnings.append(f"{label}, {run['task']}: two runs with {_trial_text(run)}; the later one counts "
                            f"({by_trial[_trial(run)]['path']} is left out)")
        by_trial[_trial(run)] = run
    return sorted(by_trial.values(), key=lambda r: (*_trial_order(r), r["seed"] is None, r["seed"]))


def _trial_order(run: Mapping[str, Any]) -> tuple[int, ...]:
    """A repeat family's runs in the repeat's order (split 0, 1, …), others as they are."""
    return (run["repeat"]["averaged"].index(run["repeat"]["value"]),) if family(run) else ()


def _cell(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    metric = runs[0]["primary_metric"]
    metrics = [m for m in runs[0]["dev"] if all(m in r["dev"] for r in runs)]
    cell: dict[str, Any] = {
        "metric": metric, "runs": [r["id"] for r in runs], "seeds": [r["seed"] for r in runs],
        "data_version": runs[0]["data_version"],
        "dev": {m: spread([r["dev"][m] for r in runs])["mean"] for m in metrics},
    }
    cell["value"] = cell["dev"].get(metric)
    if len(runs) > 1:
        cell["seed_spread"] = {m: {**spread([r["dev"][m] for r in runs]), "values": [r["dev"][m] for r in runs]}
                               for m in metrics}
        cell["intervals"] = {}
    else:
        cell["intervals"] = {m: i for m, i in runs[0]["intervals"].items() if "low" in i}
    if runs[0].get("sweep") and all(r["sweep"]["best"] for r in runs):
        cell["sweep_best"] = True  # the configuration the sweep's summary.json chose for this task
    if family(runs[0]):
        cell["repeat"] = {"setting": runs[0]["repeat"]["setting"], "values": [r["repeat"]["value"] for r in runs]}
        digest = hashlib.sha256(" ".join(r["data_version"] for r in runs).encode()).hexdigest()[:8]
        cell["data_version"] = f"{runs[0]['data_version'].split()[0]} {digest}"
    scored = _scored(runs)
    if scored:
        cell["scored"] = {split: {m: spread(v)["mean"] for m, v in values.items()} for split, values in scored.items()}
        if len(runs) > 1:
            cell["scored_spread"] = {split: {m: {**spread(v), "values": v} for m, v in values.items()}
                                     for split, values in scored.items()}
    return cell


def _scored(runs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """Per labelled split besides dev that every run scored, each metric's values over the runs."""
    first = runs[0].get("scored") or {}
    return {split: {m: [r["scored"][split][m] for r in runs] for m in metrics
                    if all(m in (r.get("scored") or {}).get(split, {}) for r in runs)}
            for split, metrics in first.items() if all(split in (r.get("scored") or {}) for r in runs)}


def _settings(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each reported setting: one value when all tasks agree, else ``{task: value}``."""
    values: dict[str, dict[str, Any]] = {}
    for run in runs:
        for key, value in (run["report_settings"] or {}).items():
            if family(run) and key == run["repeat"]["setting"]:  # a repeat family: the values it averages
                value = family(run).removeprefix(f"{key} ")
            values.setdefault(key, {})[run["task"]] = value
    return {key: (next(iter(per_task.values())) if len({json.dumps(v) for v in per_task.values()}) == 1
                  else per_task) for key, per_task in values.items()}


def _disambiguate(rows: list[dict[str, Any]], keys: list[tuple[Any, ...]]) -> None:
    """Rows whose labels collide (an LLM asked with and without chat) get the settings that differ."""
    for row, key in zip(rows, keys):
        twins = [json.loads(k[4]) for k in keys if (*k[:4], k[5]) == (*key[:4], key[5]) and k != key]
        if twins:
            own = json.loads(key[4])
            shown = {**KEY_DEFAULTS, **own}
            differ = sorted({name for twin in twins for name in {*own, *twin}
                             if shown.get(name) != {**KEY_DEFAULTS, **twin}.get(name)})
            row["label"] += " · " + ", ".join(f"{name}={json.dumps(shown.get(name))}" for name in differ)


def build_rows(runs: Sequence[dict[str, Any]], members: Mapping[str, list[str]], warnings: list[str]
               ) -> list[dict[str, Any]]:
    """The leaderboard rows, best first (rows on full dev data before sample or partial ones)."""
    by_key: dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]] = {}
    for run in runs:
        by_key.setdefault(row_key(run), {}).setdefault(run["task"], []).append(run)
    rows = []
    for key, tasks in by_key.items():
        label = row_label(key)  # made unique by _disambiguate
        cells, used = {}, []
        for task, task_runs in tasks.items():
            picked = _pick(task_runs, warnings, label)
            used += picked
            cells[task] = _cell(picked)
        first = used[0]
        comparable = key[3] == "full"
        reason = None if comparable else (NOT_COMPARABLE_SAMPLE if key[3].startswith("sample")
                                          else f"partial run ({key[3]})")
        values = {task: cell["value"] for task, cell in cells.items() if cell["value"] is not None}
        scored = {task: {split: v[cell["metric"]] for split, v in cell.get("scored", {}).items() if cell["metric"] in v}
                  for task, cell in cells.items()}
        rows.append({
            "label": label, "model": key[0], "mode": key[1], "shots": key[2], "data": key[3],
            "comparable": comparable, "reason": reason, **first["model_facts"],
            "settings": _settings(used), "cells": cells,
            "groups": average_groups({name: tasks for name, tasks in members.items()}, values, scored),
            "mean": sum(values.values()) / len(values) if values else None, **({"repeat": key[5]} if key[5] else {}),
        })
        for run in used:
            run["in_table"] = True
    # full-dev rows first, then sample, then partial; more tasks first (a mean over fewer tasks is no rival)
    _disambiguate(rows, list(by_key))
    rows.sort(key=lambda row: (not row["comparable"], "--limit" in row["data"] or "--first" in row["data"],
                               -len(row["cells"]), -(row["mean"] if row["mean"] is not None else -1e9), row["label"]))
    for number, row in enumerate(rows, 1):
        row["id"] = f"row-{number}"
        for cell in row["cells"].values():
            for run in runs:
                if run["id"] in cell["runs"]:
                    run["row"] = row["id"]
    return rows
