"""``index.html``: one self-contained page, readable straight from disk.

Charts are PNGs embedded as ``data:`` URIs, the style sheet and the one script are
inline, and nothing is fetched: no CDN, no web font, no link to a file beside it. The
script only counts the images the browser decoded and writes the count into the page
(``#image-check``), which the tests read back from headless Chromium.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_report import format as fmt
from clue_report.kit import Chart, escape, figure, num, table
from clue_report.prompt_spread import html_section as prompt_spread
from clue_report.stats import clustered_line

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","WenQuanYi Micro Hei","PingFang SC",
"Microsoft YaHei",sans-serif;margin:0 auto;max-width:1280px;padding:0 24px 48px;color:#202124;line-height:1.45;
overflow-wrap:anywhere}
h1{margin:24px 0 4px}h2{border-bottom:2px solid #dadce0;padding-bottom:4px;margin-top:40px}
h3{margin-top:28px}small,.muted{color:#5f6368}nav a{margin-right:14px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:14px}
th,td{border:1px solid #dadce0;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f1f3f4}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.num small{display:block}tr.nc td{color:#5f6368;background:#fafafa}tr.pub td{background:#f8f9fa}
.badge{display:inline-block;font-size:11px;padding:0 6px;border-radius:8px;background:#fce8e6;color:#a50e0e;
margin-left:6px}.badge.ok{background:#e6f4ea;color:#137333}
.warnings{background:#fef7e0;border:1px solid #f9ab00;border-radius:6px;padding:8px 16px}
.partial{color:#b06000}figure{margin:12px 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:13px;color:#5f6368}details{margin:8px 0}summary{cursor:pointer;font-weight:600}
td.text{max-width:520px;font-size:13px}td.model{min-width:190px}.scroll{overflow-x:auto}
.board table{font-size:13px;margin:0;overflow-wrap:normal}.board th,.board td{padding:3px 4px}.board th{font-size:12px}
.board td.num{white-space:normal}
.board td.num small{font-size:11px}.board th small{font-weight:400}
.board td.model{min-width:180px;max-width:260px;overflow-wrap:anywhere}
.board td.model small{display:block;color:#5f6368}.board td.model .badge{margin-left:0}
.board th:nth-child(-n+2),.board td:nth-child(-n+2){position:sticky;z-index:1;background:#fff}
.board th:nth-child(-n+2){background:#f1f3f4}.board tr.nc td:nth-child(-n+2){background:#fafafa}
.board th:first-child,.board td:first-child{left:0;width:26px;min-width:26px;max-width:26px;box-sizing:border-box}
.board th:nth-child(2),.board td:nth-child(2){left:26px}
.analysis{display:flex;flex-wrap:wrap;gap:8px 32px;align-items:flex-start}
"""

SCRIPT = """
window.addEventListener('load', function () {
  var images = Array.prototype.slice.call(document.images);
  var decoded = images.filter(function (image) { return image.complete && image.naturalWidth > 0; }).length;
  var check = document.getElementById('image-check');
  check.setAttribute('data-decoded', String(decoded));
  check.textContent = 'images decoded: ' + decoded + ' of ' + images.length;
});
"""


def _badge(row: Mapping[str, Any]) -> str:
    return "" if row["comparable"] else f'<span class="badge" title="{escape(row["reason"])}">not comparable</span>'


def _on_split(report: Mapping[str, Any], group: str) -> str:
    """The split a group is scored on when not dev (FewCLUE overall: test_public), else ``""``."""
    return next((row["groups"][group]["split"] for row in report["rows"]
                 if row["groups"].get(group, {}).get("split")), "")


def _scored_splits(report: Mapping[str, Any], task: str) -> list[str]:
    """The labelled splits besides dev that some row's cell of ``task`` carries (FewCLUE's test_public)."""
    return list(dict.fromkeys(split for row in report["rows"]
                              for split in (row["cells"].get(task) or {}).get("scored", {})))


def _task_cell(cell: Mapping[str, Any]) -> str:
    """A leaderboard cell: the primary dev metric, its uncertainty, and its scores on the scored splits."""
    extra = [*fmt.scored_details(cell), *fmt.cell_marks(cell)]
    if not extra:
        return num(cell["value"], fmt.cell_detail(cell), cell["data_version"])
    lines = [fmt.cell_detail(cell), *extra]
    return (f'<td class="num" title="{escape(cell["data_version"])}">{fmt.number(cell["value"])}'
            + "".join(f"<small>{escape(line)}</small>" for line in lines if line) + "</td>")


def _model_cell(row: Mapping[str, Any]) -> str:
    """The row's label with kind · size · use and its settings below it, in one cell: as columns of their
    own they made a report of every CLUE task wider than a 1400 px window."""
    facts = " · ".join(str(x) for x in (row["kind"], row["size"], fmt.usage(row)) if x and x != "—")
    settings = fmt.settings(row["settings"])
    full = escape(fmt.settings(row["settings"], full=True))
    return (f'<td class="model">{escape(row["label"])}{_badge(row)}<small>{escape(facts)}</small>'
            + (f'<small class="settings" title="{full}">{escape(settings)}</small>' if settings else "") + "</td>")


def leaderboard(report: Mapping[str, Any]) -> str:
    """The models × groups and tasks table, made to fit a 1400 px window with every CLUE task (its
    cells wrap, the model's facts share its cell); wider still, it scrolls in its box, the model
    column kept in view, and the page itself never gets wider than the window."""
    tasks = report["tasks"]
    groups = [name for name in report["groups"] if any(name in row["groups"] for row in report["rows"])]
    group_heads = [escape(name) + (f"<br><small>{escape(split)}</small>" if (split := _on_split(report, name))
                                   else "") for name in groups]
    task_heads = [f"{escape(t['name'])}<br><small>{escape(t['primary_metric'])}"
                  + (f" · dev / {escape(', '.join(splits))}" if (splits := _scored_splits(report, t["name"])) else "")
                  + "</small>" for t in tasks]
    headers = ["#", "model", *group_heads, *task_heads]
    rows, classes = [], []
    for rank, row in enumerate(report["rows"], 1):
        cells = [str(rank), _model_cell(row)]
        for name in groups:
            group = row["groups"].get(name)
            missing = f"missing: {', '.join(group['missing'])}" if group and group["missing"] else ""
            css = ' class="num partial"' if group and not group["complete"] else ' class="num"'
            cells.append(f'<td{css} title="{escape(missing)}">{escape(fmt.group_text(group))}</td>')
        for task in tasks:
            cell = row["cells"].get(task["name"])
            cells.append(_task_cell(cell) if cell else "—")
        rows.append(cells)
        classes.append("" if row["comparable"] else "nc")
    members = "; ".join(f"<b>{escape(name)}</b>: {escape(', '.join(tasks))}" for name, tasks in
                        report["groups"].items())
    on_split = [f"{escape(name)} averages {escape(split)}" for name in groups if (split := _on_split(report, name))]
    scored = (f" Where a task scores a labelled split besides dev, its score there is below the cell; "
              f"{'; '.join(on_split)}, the split its benchmark reports, when every member present has it."
              if on_split else "")
    family = (" A row ending in a repeat (<i>split 0–4</i>) holds the mean ± std over those trainings."
              if any(row.get("repeat") for row in report["rows"]) else "")
    return ("<div class='scroll board'>" + table(headers, rows, classes) + "</div>"
            + f"<p class='muted'>Under each model: its kind, size and how it was used, then its reported settings "
              f"(the full values in the tooltip). Cells: primary dev metric; below it the 95% bootstrap interval (one "
              f"run) or ± std "
              f"over seeds. Group scores average the members' primary metric as the CLUE leaderboard does; "
              f"an average over only some members is shown as <span class='partial'>k/n</span> and is not a "
              f"leaderboard score.{scored}{family}{escape(fmt.sweep_legend(report))} Members: {members}.</p>")


def _metrics_table(task: Mapping[str, Any], report: Mapping[str, Any]) -> str:
    rows = [(row, row["cells"][task["name"]]) for row in report["rows"] if task["name"] in row["cells"]]
    metrics = list(dict.fromkeys(m for _, cell in rows for m in cell["dev"]))
    scored = [(split, m) for split in _scored_splits(report, task["name"])
              for m in dict.fromkeys(m for _, cell in rows for m in cell.get("scored", {}).get(split, {}))]
    body = []
    for row, cell in rows:
        over = fmt.spread_over(cell)
        cells = [escape(row["label"]) + _badge(row)]
        for metric in metrics:
            spread = (cell.get("seed_spread") or {}).get(metric)
            detail = fmt.spread(spread, over) or fmt.interval(cell["intervals"].get(metric))
            cells.append(num(cell["dev"].get(metric), detail))
        for split, metric in scored:
            spread = ((cell.get("scored_spread") or {}).get(split) or {}).get(metric)
            cells.append(num((cell.get("scored") or {}).get(split, {}).get(metric), fmt.spread(spread, over)))
        seeds = ", ".join(str(s) for s in cell["seeds"])
        if cell.get("repeat"):
            seeds = f"{cell['repeat']['setting']} {', '.join(cell['repeat']['values'])}; seeds {seeds}"
        cells.append(escape(f"{seeds} ({cell['data_version']})"))
        body.append(cells)
    return table(["row", *map(escape, metrics), *(escape(f"{split} {m}") for split, m in scored),
                  "seeds (dev data)"], body)


def _scored_boards(task: Mapping[str, Any]) -> str:
    """The published scores on a scored split (FewCLUE's test_public), each run beside its version's."""
    parts = []
    for board in task.get("scored_boards") or ():
        shots = "" if board["shots"] is None else f", {board['shots']}-shot"
        rows, classes = [], []
        for entry in board["entries"]:
            rank = str(entry["rank"]) if "rank" in entry else "—"
            if entry["kind"] == "published":
                rows.append([rank, escape(entry["model"]), num(entry["value"]),
                             escape(f"published, {entry['split']} ({entry['version']})"),
                             f'<td class="text">{escape(entry["source"])}</td>'])
                classes.append("pub")
            else:
                version = f" ({entry['version']})" if entry["version"] else ""
                status = (f"this report{version}" if entry["comparable"]
                          else f"not comparable{version}: {entry['reason']}")
                rows.append([rank, f"<b>{escape(entry['model'])}</b>", num(entry["value"]), escape(status), "—"])
                classes.append("" if entry["comparable"] else "nc")
        parts.append(f"<h4>{escape(board['split'])} {escape(board['metric'])} ({escape(str(board['mode']))}"
                     f"{escape(shots)})</h4><p class='muted'>Each run stands beside the published score of the "
                     f"data it trained on, ranked with it only when it was used the same way.</p>"
                     + table(["rank", "model", "value", "what", "source"], rows, classes))
    return "".join(parts)


def _boards(task: Mapping[str, Any]) -> str:
    parts = []
    for board in task["boards"]:
        shots = "" if board["shots"] is None else f", {board['shots']}-shot"
        rows, classes = [], []
        for entry in board["entries"]:
            if entry["kind"] == "published":
                rows.append([str(entry["rank"]), escape(entry["model"]), num(entry["value"]),
                             escape(f"published, {entry['split']} (CLUE {entry['version']} data)"),
                             f'<td class="text">{escape(entry["source"])}</td>'])
                classes.append("pub")
            else:
                rank = str(entry["rank"]) if "rank" in entry else "—"
                status = "this report" if entry["comparable"] else f"not comparable: {entry['reason']}"
                rows.append([rank, f"<b>{escape(entry['model'])}</b>", num(entry["value"],
                                                                           fmt.interval(entry.get("interval"))),
                             escape(status), "—"])
                classes.append("" if entry["comparable"] else "nc")
        parts.append(f"<h4>dev {escape(board['metric'])} ({escape(str(board['mode']))}{escape(shots)})</h4>"
                     + table(["rank", "model", "value", "what", "source"], rows, classes))
        if not any(entry["kind"] == "run" for entry in board["entries"]):
            parts.append(f"<p class='muted'>No run in this report was used this way ({escape(str(board['mode']))}"
                         f"{escape(shots)}), so none is set beside these scores.</p>")
    shown = {board["split"] for board in task.get("scored_boards") or ()}
    other = [p for p in task["published"] if p["split"] != "dev" and p["split"] not in shown]
    if other:
        rows = [[escape(p["model"]), escape(p["split"]), escape(p["version"]), escape(p["metric"]), num(p["value"]),
                 f'<td class="text">{escape(p["source"])}</td>'] for p in other]
        parts.append(f"<details><summary>Published test scores ({len(other)}): not compared, runs are scored on "
                     f"dev</summary>" + table(["model", "split", "version", "metric", "value", "source"], rows)
                     + "</details>")
    if not task["published"]:
        parts.append("<p class='muted'>The task declares no published scores.</p>")
    return "".join(parts) + _scored_boards(task)


def _confusion(run: Mapping[str, Any], charts: Mapping[str, Chart]) -> str:
    data = run["analysis"]["confusion"]
    describe = data["descriptions"]

    def name(label: str) -> str:
        return escape(f"{label} ({describe[label]})" if label in describe else label)

    parts = []
    chart = charts.get(f"chart-confusion-{run['id']}")
    if chart:
        parts.append(figure(chart))
    pairs = [[name(p["gold"]), name(p["predicted"]), str(p["count"])] for p in data["confused_pairs"]]
    parts.append("<div><h5>Most confused pairs</h5>" + (table(["gold", "predicted as", "count"], pairs) if pairs
                                                        else "<p class='muted'>none</p>") + "</div>")
    per_label = sorted(data["per_label"], key=lambda r: -r["support"])
    rows = [[name(r["label"]), num(r["precision"]), num(r["recall"]), num(r["f1"]), str(r["support"]),
             str(r["predicted"])] for r in per_label]
    rendered = table(["label", "precision", "recall", "F1", "gold", "predicted"], rows)
    parts.append(f"<div><details{' open' if len(rows) <= 20 else ''}><summary>Per-label F1 ({len(rows)} labels)"
                 f"</summary>{rendered}</details></div>")
    return "".join(parts)


def _wrong(run: Mapping[str, Any]) -> str:
    examples = run["analysis"].get("wrong_examples") or []
    if not examples:
        return "<p class='muted'>No wrong examples.</p>"
    rows = []
    for item in examples:
        text = escape(item.get("text") or item.get("question") or "")
        if item.get("text_pair"):
            text += " ‖ " + escape(item["text_pair"])
        if item.get("context"):
            text += f"<br><small>{escape(item['context'])}</small>"
        text += "".join(f"<br><small>{escape(name)}: {escape(value)}</small>" for name, value in item.get("fields", ()))
        answer = escape(item["prediction"]) + (f"<br><small>said: {escape(item['raw'])}</small>"
                                               if item.get("raw") else "")
        rows.append([escape(str(item["id"])), f'<td class="text">{text}</td>', escape(item["gold"]), answer])
    return table(["id", "example", "gold", "model's answer"], rows)


def _length_rows(task: Mapping[str, Any], report: Mapping[str, Any]) -> str:
    body = []
    for row in report["rows"]:
        cell = row["cells"].get(task["name"])
        run = _run(report, cell["runs"][0]) if cell else None
        for b in (run["analysis"].get("context_length") or []) if run else []:
            body.append([escape(row["label"]), f"{b['low']}–{b['high']}", str(b["n"]), num(b["value"])])
    if not body:
        return ""
    return "<h4>By context length</h4>" + table(["row", "characters", "examples", "score"], body)


def _run(report: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    return next(r for r in report["runs"] if r["id"] == run_id)


def task_section(task: Mapping[str, Any], report: Mapping[str, Any], charts: Mapping[str, Chart]) -> str:
    name = task["name"]
    parts = [f'<section id="task-{escape(name)}"><h3>{escape(name)} <small>{escape(task["description"])}</small>'
             f"</h3>", "<h4>Dev metrics, 95% bootstrap intervals</h4>" if not _scored_splits(report, name) else
             f"<h4>Dev metrics, 95% bootstrap intervals; {escape(', '.join(_scored_splits(report, name)))}</h4>",
             _metrics_table(task, report),
             "<h4>Beside published scores</h4>", _boards(task)]
    if f"chart-published-{name}" in charts:
        parts.append(figure(charts[f"chart-published-{name}"]))
    if f"chart-length-{name}" in charts:
        parts.append(figure(charts[f"chart-length-{name}"]))
    parts.append(_length_rows(task, report))
    for row in report["rows"]:
        cell = row["cells"].get(name)
        if not cell:
            continue
        run = _run(report, cell["runs"][0])
        inner = []
        if "confusion" in run["analysis"]:
            inner.append(_confusion(run, charts))
        inner.append("<div><h5>Wrong examples</h5>" + _wrong(run) + "</div>")
        parts.append(f"<details open><summary>Error analysis: {escape(row['label'])} "
                     f"<small>({escape(run['path'])})</small></summary><div class='analysis'>{''.join(inner)}</div>"
                     f"</details>")
    return "".join(parts) + "</section>"


def page(report: Mapping[str, Any], charts: Sequence[Chart], sections: Sequence[tuple[str, str, str]]) -> str:
    """The whole page; ``sections`` are the plugins' views as ``(name, title, body HTML)``, in page order."""
    by_id = {chart.id: chart for chart in charts}
    runs, tasks = report["runs"], report["tasks"]
    font = (report.get("charts") or {}).get("font") or {}
    boot = report["bootstrap"]
    meta = (f"{len(runs)} run(s) · {len({r['model'] for r in runs})} model(s) · {len(tasks)} task(s) · clue-core "
            f"{report['clue_core']} · bootstrap: {boot['resamples']} resamples, {boot['confidence']:.0%}, seed "
            f"{boot['seed']} · chart labels: {font.get('family') or 'English (no CJK font)'}")
    warnings = "".join(f"<li>{escape(w)}</li>" for w in report["warnings"])
    parts = [
        "<!DOCTYPE html><html lang='zh-CN'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'><title>CLUE report</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>CLUE report</h1><p class='muted'>{escape(meta)}</p>",
        f"<p class='muted'>{escape(clustered)}</p>" if (clustered := clustered_line(report)) else "",
        "<nav>" + ("<a href='#leaderboard'>Leaderboard</a><a href='#tasks'>Tasks</a>" if report["rows"] else "")
        + "".join(f"<a href='#{escape(name)}'>{escape(title)}</a>" for name, title, _ in sections)
        + "<a href='#runs'>Runs</a></nav>",
    ]
    if warnings:
        parts.append(f"<div class='warnings' id='warnings'><b>Read this first</b><ul>{warnings}</ul></div>")
    if report["rows"]:
        parts.append("<section id='leaderboard'><h2>Leaderboard</h2>" + leaderboard(report))
        if "chart-overview" in by_id:
            parts.append(figure(by_id["chart-overview"]))
        parts.append("</section><section id='tasks'><h2>Tasks</h2>")
        parts += [task_section(task, report, by_id) for task in tasks]
        parts.append("</section>")
        parts.append(prompt_spread(report))  # mean ± std over the task's prompt variants (prompt_variants=all)
    parts += [f"<section id='{escape(name)}'><h2>{escape(title)}</h2>{body}</section>"
              for name, title, body in sections]
    parts.append(runs_section(report))
    parts.append("<p id='image-check' class='muted' data-images='" + str(len(charts))
                 + "' data-decoded='unknown'>images: not checked (scripts off)</p>")
    parts.append(f"<script>{SCRIPT}</script></body></html>\n")
    return "".join(parts)


def runs_section(report: Mapping[str, Any]) -> str:
    rows, classes = [], []
    for run in report["runs"]:
        primary = run["dev"].get(run["primary_metric"])
        detail = run["primary_metric"] + "".join(f" · {split} {fmt.number(values.get(run['primary_metric']))}"
                                                 for split, values in (run.get("scored") or {}).items())
        rows.append([escape(run["id"]), escape(run["task"]), escape(run["model"]), escape(str(run["seed"])),
                     escape(run["data_version"]), num(primary, detail),
                     "yes" if run["in_table"] else "no", f'<td class="text">{escape(run["path"])}'
                     + "".join(f"<br><small class='run-note'><b>run note:</b> {escape(n)}</small>"
                               for n in run.get("run_notes") or ())
                     + "".join(f"<br><small>{escape(n)}</small>" for n in run["notes"]) + "</td>"])
        classes.append("" if run["in_table"] else "nc")
    parts = ["<section id='runs'><h2>Runs</h2>",
             table(["run", "task", "model", "seed", "dev data", "primary", "in table", "run dir"], rows, classes)]
    if report["unfinished"]:
        parts.append("<h3>Unfinished (left out)</h3>" + table(
            ["task", "run dir", "why"], [[escape(u["task"]), escape(u["path"]), escape(u["reason"])]
                                         for u in report["unfinished"]]))
    return "".join(parts) + "</section>"


def render_html(report: Mapping[str, Any], charts: Sequence[Chart], sections: Sequence[tuple[str, str, str]] = ()
                ) -> str:
    """``index.html``: ``charts`` are every image on the page (the sections' included), for the image check."""
    return page(report, charts, sections)
