"""The explorer's markup: the filters, the confusion tables whose cells filter, the first rows and the data.

The page stays one file that opens from disk: the data is embedded once as JSON in a
``<script type="application/json">`` (every ``<`` written as ``\\u003c``, so no text of an example,
``</script>`` or ``<!--`` included, can end the element or start markup), the style sheet and the
script (``explorer.css``, ``explorer.js``, package data of clue-report, written for this page) are
inline. The script renders every row with ``textContent``; the first :data:`~clue_report.explorer.STATIC_ROWS`
rows are also written here as escaped HTML, so a browser without JavaScript shows them. Both
write the same markup: one ``<tr data-example-id=…>`` per row (no other element carries the
attribute), cells ``ex-where``, ``ex-id``, ``ex-input``, ``ex-gold``, ``ex-pred``, ``ex-mark``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any
from urllib.parse import quote

from clue_report.kit import escape, table

#: Confusion tables are drawn up to this many labels (IFLYTEK's 119 get their most confused cells only).
MAX_TABLE_LABELS = 20
TOP_CELLS = 10
#: Per-label bars drawn per answer; beyond it (IFLYTEK's 119 labels) the highest scores, gold's and the
#: prediction's are drawn and the rest counted, so a row stays a row.
MAX_BARS = 10
NONE = "(none)"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def asset(name: str) -> str:
    """``explorer.css`` or ``explorer.js``, shipped with clue-report."""
    return resources.files("clue_report").joinpath(name).read_text(encoding="utf-8")


def embedded_json(data: Any) -> str:
    """``data`` as JSON safe inside a ``<script>`` element: every ``<`` escaped (JSON's ``\\u003c``)."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c")


def fragment(**values: str) -> str:
    """``#task=afqmc&model=…``: the explorer's filter state as a link (values percent-encoded)."""
    return "#" + "&".join(f"{key}={quote(str(value), safe='')}" for key, value in values.items())


def shares(scores: Sequence[float]) -> list[float]:
    """Each score's share for its bar: probabilities as they are, anything else (log-probabilities,
    logits) through a softmax. The page's script computes the same."""
    if all(0.0 <= s <= 1.0 for s in scores) and abs(sum(scores) - 1.0) < 1e-3:
        return [float(s) for s in scores]
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def _context(text: str) -> str:
    return escape(text).replace("____", "<mark>____</mark>")


def _input(example: Mapping[str, Any]) -> str:
    if example.get("unread"):
        return "<small class='muted'>text not available: the run's dev data could not be read again</small>"
    parts = []
    if "text" in example:
        parts.append(f"<div>{escape(example['text'])}</div>")
    if "text_pair" in example:
        parts.append(f"<div class='ex-pair'>{escape(example['text_pair'])}</div>")
    if example.get("title"):
        parts.append(f"<div class='ex-title'>{escape(example['title'])}</div>")
    if example.get("question"):
        parts.append(f"<div class='ex-q'>{escape(example['question'])}</div>")
    if example.get("context"):
        parts.append(f"<div class='ex-ctx'>{_context(example['context'])}</div>")
    if example.get("choices"):
        parts.append("<ol class='ex-choices'>" + "".join(f"<li>{escape(c)}</li>" for c in example["choices"])
                     + "</ol>")
    if example.get("turns"):
        parts.append("<ol class='ex-turns'>" + "".join(f"<li>{escape(t)}</li>" for t in example["turns"]) + "</ol>")
    if example.get("fields"):  # a plugin's kind's other fields, by name (clue_report.shown)
        parts.append("<dl class='ex-fields'>" + "".join(f"<dt>{escape(name)}</dt><dd>{escape(text)}</dd>"
                                                        for name, text in example["fields"]) + "</dl>")
    return "".join(parts)


def _score_names(source: Mapping[str, Any], example: Mapping[str, Any] | None, count: int) -> list[str]:
    if example and example.get("choices"):
        return [LETTERS[i] if i < len(LETTERS) else str(i) for i in range(count)]
    labels = source.get("labels") or []
    return [str(labels[i]) if i < len(labels) else str(i) for i in range(count)]


def bar_indices(scores: Sequence[float], marked: Sequence[int]) -> list[int]:
    """The scores drawn as bars: all of them up to :data:`MAX_BARS`; beyond, the highest ones and the
    ``marked`` (gold's, the prediction's), highest first. The page's script picks the same."""
    if len(scores) <= MAX_BARS:
        return list(range(len(scores)))
    top = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    chosen = set(top[:MAX_BARS - 2]) | {i for i in marked if 0 <= i < len(scores)}
    for index in top:
        if len(chosen) >= MAX_BARS:
            break
        chosen.add(index)
    return [i for i in top if i in chosen]


def _marked(names: Sequence[str], example: Mapping[str, Any] | None, item: Mapping[str, Any]) -> list[int]:
    """The bars of gold and of the prediction: a label's position, or a choice's index."""
    choices = bool(example and example.get("choices"))
    found = []
    for value in ((example or {}).get("g"), item.get("p")):
        if value is None:
            continue
        if choices:
            found += [int(value)] if value.isdigit() else []
        elif value in names:
            found.append(names.index(value))
    return found


def _bars(source: Mapping[str, Any], example: Mapping[str, Any] | None, item: Mapping[str, Any]) -> str:
    scores = item["scores"]
    names = _score_names(source, example, len(scores))
    share = shares(scores)
    chosen = bar_indices(scores, _marked(names, example, item))
    rows = [f"<div class='ex-bar-row'><span class='ex-bar-name'>{escape(names[i])}</span><span class='ex-bar'>"
            f"<span style='width:{100 * share[i]:.1f}%'></span></span><span class='ex-bar-num'>{scores[i]:.3f}"
            "</span></div>" for i in chosen]
    more = len(scores) - len(chosen)
    if more:
        kind = "choices" if example and example.get("choices") else "labels"
        rows.append(f"<div class='ex-bar-more'>{more} more {kind}</div>")
    return "<div class='ex-scores'>" + "".join(rows) + "</div>"


def answer(source: Mapping[str, Any], example: Mapping[str, Any] | None, item: Mapping[str, Any]) -> str:
    """The prediction cell: the answer, its per-choice bars, the generation, the judge or the checker."""
    shown = item.get("pred", item["p"] if item["p"] is not None else "—")
    parts = [f"<div class='ex-p'>{escape(shown)}</div>"]
    if item.get("scores"):
        parts.append(_bars(source, example, item))
    if "said" in item:
        parts.append(f"<div class='ex-said'><small>generated:</small> {escape(item['said'])}</div>")
    if item.get("extracted") is False:
        parts.append("<div class='ex-said'><small>no answer could be extracted from it</small></div>")
    if "grade" in item or "reasons" in item:
        grade = f"grade {item['grade']:g}" if "grade" in item else "no grade"
        band = f" · {escape(item['band'])}" if "band" in item else ""
        parts.append(f"<div class='ex-grade'>{grade}{band}<small>{escape(item.get('reasons', ''))}</small></div>")
    if "checker" in item:
        parts.append(f"<div class='ex-check'>checker: {escape(item['checker'])}</div>")
    return "".join(parts)


def mark(ok: Any) -> tuple[str, str]:
    """The row's class and the mark of its last cell."""
    return {True: ("ex-ok", "✓"), False: ("ex-wrong", "✗")}.get(ok, ("ex-unscored", "·"))


def static_rows(data: Mapping[str, Any]) -> tuple[str, int]:
    """The first rows of the unfiltered view as HTML, and how many rows there are in all."""
    sources = {source["key"]: source for source in data["sources"]}
    by_id = {key: {e["id"]: e for e in source["examples"]} for key, source in sources.items()}
    rows, total = [], sum(len(run["items"]) for run in data["runs"])
    for run in data["runs"]:
        source = sources[run["source"]]
        for item in run["items"]:
            if len(rows) >= data["static_rows"]:
                return "".join(rows), total
            example = by_id[run["source"]].get(item["id"])
            css, sign = mark(item["ok"])
            rows.append(f"<tr data-example-id='{escape(item['id'])}' class='{css}'>"
                        f"<td class='ex-where'>{escape(run['task'])}<br><small>{escape(run['label'])}</small></td>"
                        f"<td class='ex-id'>{escape(item['id'])}</td>"
                        f"<td class='ex-input'>{_input(example or {})}</td>"
                        f"<td class='ex-gold'>{escape((example or {}).get('gold', '—'))}</td>"
                        f"<td class='ex-pred'>{answer(source, example, item)}</td>"
                        f"<td class='ex-mark'>{sign}</td></tr>")
    return "".join(rows), total


def _cell(run: Mapping[str, Any], gold: str, predicted: str, count: int) -> str:
    """A confusion count linking to its examples (``#task=…&model=…&gold=…&pred=…``)."""
    link = fragment(task=run["task"], model=run["label"], gold=gold, pred=predicted)
    css = "ex-cell ex-diag" if gold == predicted else "ex-cell"
    return f'<td class="num {css}"><a href="{escape(link)}">{count}</a></td>'


def confusion_tables(data: Mapping[str, Any]) -> str:
    """Per classification run, its confusion matrix as a table whose cells link to the filtered view."""
    parts = []
    for run in data["runs"]:
        confusion = run.get("confusion")
        if not confusion:
            continue
        labels, columns, matrix = confusion["labels"], confusion["columns"], confusion["matrix"]

        title = f"<h4>{escape(run['task'])} · {escape(run['label'])}</h4>"
        if len(labels) <= MAX_TABLE_LABELS:
            rows = [[f"<td><b>{escape(gold)}</b></td>", *(_cell(run, gold, predicted, matrix[i][j])
                                                  for j, predicted in enumerate(columns))]
                    for i, gold in enumerate(labels)]
            parts.append(title + table(["gold \\ predicted", *map(escape, columns)], rows))
        else:
            cells = sorted(((matrix[i][j], gold, predicted) for i, gold in enumerate(labels)
                            for j, predicted in enumerate(columns) if gold != predicted and matrix[i][j]),
                           key=lambda c: -c[0])[:TOP_CELLS]
            rows = [[escape(gold), escape(predicted), _cell(run, gold, predicted, count)]
                    for count, gold, predicted in cells]
            parts.append(title + f"<p class='muted'>{len(labels)} labels: the most confused cells.</p>"
                         + table(["gold", "predicted", "count"], rows))
    if not parts:
        return ""
    return ("<details open><summary>Confusion tables: a cell shows its examples</summary>"
            "<p class='muted'>Counts over all of a run's dev examples; a cell links to the explorer filtered to "
            f"them (a run capped by --examples shows those among its first {data['limit']}).</p>"
            "<div class='analysis'>" + "".join(f"<div>{p}</div>" for p in parts) + "</div></details>")


def _options(values: Sequence[str], everything: str) -> str:
    return f"<option value=''>{escape(everything)}</option>" + "".join(
        f"<option value='{escape(v)}'>{escape(v)}</option>" for v in values)


def _filters(data: Mapping[str, Any]) -> str:
    """The filter form (shown by the script: without JavaScript it could do nothing)."""
    tasks = list(dict.fromkeys(run["task"] for run in data["runs"]))
    models = list(dict.fromkeys(run["label"] for run in data["runs"]))
    return ("<form id='explorer-filters' class='ex-filters' hidden>"
            f"<label>task <select name='task'>{_options(tasks, 'all')}</select></label>"
            f"<label>model <select name='model'>{_options(models, 'all')}</select></label>"
            "<label>answers <select name='wrong'><option value=''>all</option><option value='1'>wrong</option>"
            "<option value='0'>right</option></select></label>"
            "<label>gold <select name='gold'><option value=''>any</option></select></label>"
            "<label>predicted <select name='pred'><option value=''>any</option></select></label>"
            "<label>search inputs <input name='q' type='search' size='18'></label>"
            f"<label>where <select name='a'>{_options(models, 'model A')}</select></label>"
            f"<label>disagrees with <select name='b'>{_options(models, 'model B')}</select></label>"
            "<a href='#page=1'>reset</a></form>")


def html(data: Mapping[str, Any], kit: Any) -> str:
    """The explorer section's body."""
    rows = [[escape(run["run"]), escape(run["task"]), escape(run["label"]), kit.num(run["shown"]),
             kit.num(run["total"]), kit.num(run["left_out"])] for run in data["runs"]]
    runs = kit.table(["run", "task", "model", "shown", "dev examples", "left out"], rows)
    first, total = static_rows(data)
    shown = min(total, data["static_rows"])
    return (
        "<p class='muted'>Every dev example each run answered (up to "
        f"{data['limit']} per run: <code>clue-core report --examples N</code>), with its gold answer and the "
        "run's. Filters live in the link (<code>#task=afqmc&amp;model=…&amp;wrong=1&amp;q=…&amp;gold=…&amp;"
        "pred=…</code>, <code>#disagree=A,B</code> for the examples two models answer differently), so a "
        "filtered view can be shared and bookmarked.</p>"
        f"<details><summary>Runs in the explorer ({len(data['runs'])})</summary>{runs}</details>"
        + confusion_tables(data) + _filters(data)
        + f"<noscript><p>Filters and pages need JavaScript: the first {shown} of {total} rows are shown.</p>"
          "</noscript>"
        + f"<p id='explorer-count' class='muted' data-count='{total}' data-static='{shown}'>first {shown} of "
          f"{total} rows</p>"
        + "<div class='scroll'><table id='explorer-table' class='ex-table'><thead><tr><th>task · model</th>"
          "<th>id</th><th>input</th><th>gold</th><th>prediction</th><th></th></tr></thead>"
          f"<tbody>{first}</tbody></table></div><nav id='explorer-pages' class='ex-pages'></nav>"
        + f"<script type='application/json' id='explorer-data'>{embedded_json(data)}</script>"
        + f"<style>{asset('explorer.css')}</style><script>{asset('explorer.js')}</script>")


def markdown(data: Mapping[str, Any], kit: Any) -> list[str]:
    """report.md: what the explorer holds (the examples themselves are in index.html)."""
    rows = [[run["task"], run["label"], kit.number(run["shown"], 0), kit.number(run["left_out"], 0)]
            for run in data["runs"]]
    return [f"The examples are in index.html's explorer (up to {data['limit']} per run).", "",
            kit.md_table(["task", "model", "examples shown", "left out"], rows)]
