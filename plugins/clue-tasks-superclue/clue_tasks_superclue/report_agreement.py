"""The report's judge-agreement part of the SuperCLUE section: judges against judges, and against people.

One table per comparison, one row per model: its panel (``models[i].judges``: the judges,
Krippendorff's α on their grades, Fleiss' κ on their bands, position consistency, each
judge's mean grade) beside the agreement with people from the judge-agreement sheet
(``judge_agreement.by_model``: the share graded 及格 or better, the share of rows whose judge
grade falls in the person's band, α on the band ranks, each as ``71.4% (95% CI 60.1–80.2)``),
and a last row for the sheet over all models. A comparison with neither (a single judge, no
sheet) shows nothing; one written before these fields shows the sheet's share as before.
Drawn through the report's ``kit`` only (used by :mod:`clue_tasks_superclue.report_section`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clue_tasks_superclue.compare.judges import ci, share

HEADERS = ("model", "judges", "α (judges)", "κ (judges)", "position consistency", "mean grade by judge",
           "graded by people", "及格 or better (people)", "judge in the person's band", "α (judge vs person)")
NOTE = ("Judges against judges: Krippendorff's α (interval, on the judges' 1–10 grades) and Fleiss' κ (on their "
        "grade bands) over the questions two or more judges graded, position consistency the share of pairwise "
        "judgments whose winner survives swapping the answers; 1 is perfect agreement, 0 chance. Judge against "
        "people (the judge-agreement sheet): the share the people graded 及格 or better, the share of rows whose "
        "judge grade falls in the person's band, and α on the band ranks, judge against person; intervals are "
        "seeded bootstrap 95% intervals over the sheet's rows.")


def _coefficient(value: Any, interval: Any = None) -> str:
    return "—" if value is None else f"{value:.3f}{ci(interval, 3)}"


def _share(figures: Mapping[str, Any] | None, key: str) -> str:
    if not figures or figures.get(key) is None:
        return "—"
    return share(figures[key], figures.get(f"{'acceptable' if key == 'acceptable_share' else key}_interval"))


def rows(comparison: Mapping[str, Any]) -> list[list[str]]:
    """The table's text cells (``mean grade by judge`` one judge a line), or none when there is nothing to show."""
    agreement = comparison.get("judge_agreement") or {}
    people = agreement.get("by_model") or {}
    found = []
    for model in comparison["models"]:
        panel, mine = model.get("judges"), people.get(model["name"])
        if not panel and not mine:
            continue
        found.append([model["name"], ", ".join(panel["panel"]) if panel else (comparison.get("judge") or "—"),
                      _coefficient((panel or {}).get("alpha")), _coefficient((panel or {}).get("kappa")),
                      "—" if not panel or panel.get("position_consistency") is None
                      else f"{panel['position_consistency']:.1f}%",
                      "\n".join(f"{judge} {grade:.2f}" for judge, grade in panel["mean_grade"].items())
                      if panel and panel["mean_grade"] else "—",
                      str(mine["graded"]) if mine else "—", _share(mine, "acceptable_share"),
                      _share(mine, "band_agreement"),
                      _coefficient((mine or {}).get("band_alpha"), (mine or {}).get("band_alpha_interval"))])
    if not found and "band_agreement" not in agreement and "acceptable_interval" not in agreement:
        return []
    if agreement:
        found.append(["all models (the sheet)", "—", "—", "—", "—", "—", str(agreement["graded"]),
                      _share(agreement, "acceptable_share"), _share(agreement, "band_agreement"),
                      _coefficient(agreement.get("band_alpha"), agreement.get("band_alpha_interval"))])
    return found


def _panel_notes(comparison: Mapping[str, Any]) -> list[str]:
    return [f"{model['name']}: {note}" for model in comparison["models"]
            for note in (model.get("judges") or {}).get("notes", [])]


def html(comparison: Mapping[str, Any], kit: Any) -> str:
    """The sheet's paragraph and grade counts, and the side-by-side table."""
    escape = kit.escape
    parts = []
    agreement = comparison.get("judge_agreement")
    if agreement:
        grades = agreement["by_grade"]
        parts.append("<h4>Judge agreement with people</h4><p>" + escape(agreement["file"])
                     + f": {agreement['graded']} judgments graded by people, {agreement['acceptable_share']:.1f}% "
                       f"graded 及格 or better{escape(ci(agreement.get('acceptable_interval')))}.</p>"
                     + kit.table(list(grades), [[f'<td class="num">{count}</td>' for count in grades.values()]]))
    table = rows(comparison)
    if table:
        body = [[escape(row[0]), escape(row[1]),
                 *(f'<td class="num">{escape(cell)}</td>' for cell in row[2:5]),
                 "<br>".join(map(escape, row[5].split("\n"))),
                 *(f'<td class="num">{escape(cell)}</td>' for cell in row[6:])] for row in table]
        notes = "".join(f"<li>{escape(note)}</li>" for note in _panel_notes(comparison))
        parts.append("<h4>Judge agreement: judges with each other, and with people</h4><p class='muted'>"
                     + escape(NOTE) + "</p>" + kit.table([escape(h) for h in HEADERS], body)
                     + (f"<ul class='muted'>{notes}</ul>" if notes else ""))
    return "".join(parts)


def markdown(comparison: Mapping[str, Any], kit: Any) -> list[str]:
    """``report.md``'s lines for the same: the sheet's share, then the side-by-side table."""
    lines: list[str] = []
    agreement = comparison.get("judge_agreement")
    if agreement:
        lines += ["", f"Judge agreement: {agreement['acceptable_share']:.1f}% of {agreement['graded']} judgments "
                      f"graded 及格 or better{ci(agreement.get('acceptable_interval'))}."]
    table = rows(comparison)
    if table:
        lines += ["", kit.md_table(HEADERS, [[*row[:5], row[5].replace("\n", "; "), *row[6:]] for row in table]),
                  "", NOTE, *(f"- {note}" for note in _panel_notes(comparison))]
    return lines
