"""What ``clue-core list`` and ``clue-core info`` show: the registry as tables and a task as lines.

Presentation only: the built-in plugin's commands (:mod:`clue_builtin.commands`) print what these
functions return, so the command wiring and the wording of the tables live apart. They read the
kernel through :class:`~clue_core.plugin.Registry` alone, as a third party's listing would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clue_core.plugin import Registry, TaskSpec


def registry_json(kernel: Registry, what: str) -> list[dict[str, Any]]:
    """``list WHAT --json``: every spec of one registry, with the plugin that registered it."""
    registry = getattr(kernel, what)
    return [{**spec_dict(spec), "plugin": kernel.owner.get((what, name), "?")} for name, spec in registry.items()]


def registry_table(kernel: Registry, what: str) -> list[list[str]]:
    """``list WHAT``: one row per spec, the columns a reader of that registry needs."""
    registry = getattr(kernel, what)
    owner = {name: kernel.owner.get((what, name), "?") for name in registry}
    if what == "tasks":
        table = [["task", "kind", "leaderboards", "metrics", "test versions", "plugin", "description"]]
        for name, t in registry.items():
            versions = ", ".join(v.version for v in t.test_versions) or "-"
            boards = ", ".join(f"{lb.benchmark} {lb.group}" for lb in t.leaderboards) or "-"
            table.append([name, t.kind, boards, ", ".join(t.metrics), versions, owner[name], t.description])
    elif what == "models":
        table = [["model", "kinds", "size", "parameters", "trains", "plugin", "description"]]
        for name, m in registry.items():
            shown = f"{name}:<checkpoint or path>" if m.family else name
            params = _human_count(m.parameters)
            table.append([shown, ", ".join(m.kinds), m.size_class or "-", params, "yes" if m.trains else "no",
                          owner[name], m.description])
    elif what == "metrics":
        table = [["metric", "kinds", "plugin", "description"]]
        for name, m in registry.items():
            table.append([name, ", ".join(m.kinds) or "any", owner[name], m.description])
    elif what == "kinds":
        table = [["kind", "prediction", "gold", "prompt fields", "plugin", "description"]] + [
            [n, k.prediction, f"{k.gold} (optional)" if k.open else k.gold, ", ".join(k.prompt_fields) or "-", owner[n],
             k.description] for n, k in registry.items()]
    elif what == "commands":
        table = [["command", "plugin", "help"]] + [[n, owner[n], c.help] for n, c in registry.items()]
    elif what == "fetchers":
        table = [["fetcher", "plugin", "help"]] + [[n, owner[n], f.help] for n, f in registry.items()]
    elif what == "report_sections":
        table = [["section", "title", "reads", "plugin", "description"]] + [
            [n, r.title, ", ".join(map(str, r.inputs)) or "-", owner[n], r.description] for n, r in registry.items()]
    else:
        table = [["writer", "scored by", "plugin", "description"]]
        for name, w in registry.items():
            table.append([name, "position" if w.ordered else "key", owner[name], w.description])
    return table


def _human_count(count: int | None) -> str:
    if count is None:
        return "-"
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1_000:
        return f"{count / 1_000:.0f}k"
    return str(count)


def spec_dict(spec: Any) -> dict[str, Any]:
    """A spec as plain JSON data (types by name, tuples as lists)."""
    return json.loads(json.dumps(spec.as_dict(), default=str))


def task_lines(kernel: Registry, task: TaskSpec, cached: Path | None) -> list[str]:
    """``info TASK``: the task's kind, labels, metrics, test files, data and settings, one per line."""
    from clue_core.plugin import is_junk

    lines = [
        f"{task.name} — {task.description}",
        f"  plugin:           {kernel.owner.get(('tasks', task.name))}",
        f"  kind:             {task.kind}",
        f"  leaderboards:     {', '.join(f'{lb.benchmark} {lb.group}' for lb in task.leaderboards) or '-'}",
        f"  metrics:          {', '.join(task.metrics)} (primary: {task.primary_metric})",
        f"  splits:           {', '.join(task.splits) or '-'}"
        + (f"; scored beside dev: {', '.join(task.scored_splits)}" if task.scored_splits else ""),
    ]
    if task.labels:
        described = [f"{lab} ({task.label_descriptions[lab]})" if lab in task.label_descriptions else lab
                     for lab in task.labels]
        lines.append(f"  labels ({len(task.labels)}):      {', '.join(described)}")
    lines.append("  test versions:")
    for v in task.test_versions:
        lines.append(f"    {v.version:<5} split {v.split:<10} → {v.submission_file}")
    if not task.test_versions:
        lines.append("    (none)")
    if task.source:
        size = f"{task.source.size:,} bytes" if task.source.size else "size unknown"
        checksum = f"sha256 {task.source.sha256}" if task.source.sha256 else (
            f"md5 {task.source.md5}" if task.source.md5 else "no checksum")
        lines.append(f"  data:             {task.source.url} ({size}, {checksum})")
    if task.data_files:
        lines.append(f"  data files:       {', '.join(task.data_files)}")
    if cached is not None and cached.is_dir():
        lines.append(f"  cached:           {cached}")
        for path in sorted(p for p in cached.rglob("*") if p.is_file() and not is_junk(p.relative_to(cached))):
            lines.append(f"    {path.relative_to(cached)}  {path.stat().st_size:,} bytes")
    elif task.source and not kernel.fetchers:
        lines.append("  cached:           no (to fetch it: pip install ./plugins/clue-data)")
    elif task.source:
        lines.append(f"  cached:           no (clue-core download {task.name})" if "download" in kernel.commands
                     else "  cached:           no (fetched on first run)")
    else:
        lines.append("  cached:           no official archive: use --data-dir or --sample")
    lines.append(f"  bundled sample:   {'yes (--sample)' if task.sample else 'no'}")
    if task.recommendations:
        lines.append("  recommended:      " + ", ".join(f"{k}={v}" for k, v in task.recommendations.items()))
    if task.repeat is not None:  # what its plan expansion does (FewCLUE's split=all), in its plugin's words
        lines.append(f"  {'repeat:':<18}{task.repeat.describe()}")
    for setting in (*task.settings, *task.decode_settings, *task.reader_settings):
        lines.append(f"  setting:          {setting.name} ({setting.type.__name__}, default {setting.default!r}): "
                     f"{setting.help}")
    if task.prompt:
        lines.append(f"  LLM prompt:       {task.prompt.instruction}")
    if task.published:
        lines.append(f"  published scores: {len(task.published)} (see --json)")
    if task.notes:
        lines.append(f"  notes:            {task.notes}")
    return lines
