"""How far a run's judges agree with each other: ``models[i].judges`` in ``comparison.json``.

For a run judged by a panel (its records carry ``scoring.judges`` with more than one judge),
the figures are the run's own agreement totals, recomputed from its records by the one
function the metric uses (:func:`clue_tasks_superclue.aggregate.agreement`): Krippendorff's α
(interval metric, the judges' 1–10 grades), Fleiss' κ (their grade bands) and, with pairwise
verdicts, position consistency (0–100); beside them each judge's mean grade over the
judge-method questions it graded. An undefined coefficient is left out, and ``notes`` says why.
A single judge (no ``scoring.judges``) has no such block.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any

from clue_tasks_superclue import aggregate
from clue_tasks_superclue.compare.comparison_file import judge_label as label
from clue_tasks_superclue.compare.runs import Run

#: How many decimals the coefficients and mean grades keep in the file.
DIGITS = 4


def panel_summary(run: Run) -> dict[str, Any] | None:
    """``{panel, aggregate, questions, alpha, kappa, position_consistency, mean_grade, graded, notes}``, or None
    for a run without a panel of two or more judges."""
    if len(run.panel) < 2:
        return None
    judged = [q for q in run.questions.values() if q.judges]
    details = [{"judges": list(q.judges), **({"pairwise": {"orders": list(q.orders)}} if q.orders else {})}
               for q in judged]
    found, notes = aggregate.agreement(details)
    summary: dict[str, Any] = {"panel": list(run.panel)}
    rules = {q.judge_aggregate for q in judged if q.judge_aggregate}
    if len(rules) == 1:
        summary["aggregate"] = rules.pop()
    summary["questions"] = sum(1 for q in judged if sum(j["score"] is not None for j in q.judges) >= 2)
    for key, name in (("judge_alpha", "alpha"), ("judge_kappa", "kappa"), ("position_consistency",
                                                                            "position_consistency")):
        if key in found:
            summary[name] = round(found[key], DIGITS)
    means, graded = {}, {}
    for index, model in enumerate(run.panel):
        grades = [float(q.judges[index]["score"]) for q in judged if q.judges[index]["score"] is not None]
        graded[label(index, model)] = len(grades)
        if grades:
            means[label(index, model)] = round(fmean(grades), DIGITS)
    summary["mean_grade"] = means
    summary["graded"] = graded
    if notes:
        summary["notes"] = notes
    return summary


def screen_lines(models: list[dict[str, Any]]) -> list[str]:
    """One line per model judged by a panel: α, κ, position consistency and each judge's mean grade."""
    lines = []
    for model in models:
        panel = model.get("judges")
        if not panel:
            continue
        figures = [f"{name} {panel[key]:.3f}" for key, name in (("alpha", "α"), ("kappa", "κ")) if key in panel]
        if "position_consistency" in panel:
            figures.append(f"position consistency {panel['position_consistency']:.1f}%")
        means = ", ".join(f"{judge} {grade:.2f}" for judge, grade in panel["mean_grade"].items())
        lines.append(f"judges of {model['name']} ({len(panel['panel'])}, {panel['questions']} questions graded by "
                     f"two or more): {', '.join(figures) or 'agreement undefined'}; mean grade {means or '-'}")
    return lines


def ci(interval: Any, digits: int = 1) -> str:
    """`` (95% CI 60.1–80.2)`` for an interval ``[low, high]``, ``""`` for none."""
    if not interval:
        return ""
    return f" (95% CI {interval[0]:.{digits}f}–{interval[1]:.{digits}f})"


def share(value: float, interval: Any) -> str:
    """A percentage with its interval: ``71.4% (95% CI 60.1–80.2)``."""
    return f"{value:.1f}%{ci(interval)}"


def people_figures(figures: dict[str, Any]) -> list[str]:
    """The judge-against-person figures of ``judge_agreement`` (or one model's part of it), as phrases."""
    found = []
    if "band_agreement" in figures:
        band = share(figures["band_agreement"], figures.get("band_agreement_interval"))
        found.append(f"judge grade in the person's band {band}")
    if "band_alpha" in figures:
        found.append(f"band α {figures['band_alpha']:.3f}{ci(figures.get('band_alpha_interval'), 3)}")
    return found
