"""Assemble ``comparison.json`` from checked runs: names, scores, win/tie/loss, ratings, quadrant, maturity,
and for a run judged by a panel its judges' agreement (:mod:`clue_tasks_superclue.compare.judges`).

Every model is compared over the reference's question ids; runs of different question
sets are refused (a total over other questions is not comparable), and so are runs that
file one question under different dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError
from clue_tasks_superclue import dimensions as names
from clue_tasks_superclue.compare import judges, scores
from clue_tasks_superclue.compare.comparison_file import SCHEMA
from clue_tasks_superclue.compare.runs import Run
from clue_tasks_superclue.compare.standings import RatingOptions, standings
from clue_tasks_superclue.run_folder import task_folder

#: How many differing ids an error shows.
SHOWN = 3


def check_same_questions(runs: Sequence[Run], reference: Run) -> None:
    """Refuse runs whose question ids or dimensions differ from the reference's."""
    ids = set(reference.questions)
    for run in runs:
        if run is reference:
            continue
        extra, missing = sorted(set(run.questions) - ids), sorted(ids - set(run.questions))
        if extra or missing:
            example = (extra or missing)[:SHOWN]
            raise ClueError(
                f"{run.path}: its questions differ from the reference run {reference.path}'s: "
                f"{len(extra)} id(s) only in this run, {len(missing)} only in the reference "
                f"(e.g. {', '.join(example)}); compare runs of the same question set")
        for qid, question in run.questions.items():
            theirs = reference.questions[qid]
            if (question.dimension, question.category) != (theirs.dimension, theirs.category):
                raise ClueError(
                    f"{run.path}: question {qid} is {question.dimension}/{question.category} here and "
                    f"{theirs.dimension}/{theirs.category} in the reference run; "
                    "the runs used different question files")


def layout(runs: Sequence[Run]) -> tuple[list[str], dict[str, list[str]]]:
    """The dimensions in order, and each category's dimensions (the records say which is which)."""
    questions = [q for run in runs for q in run.questions.values()]
    dimensions = names.ordered((q.dimension for q in questions), names.DIMENSION_EN)
    category_of: dict[str, str] = {}
    for run in runs:
        for q in run.questions.values():
            known = category_of.setdefault(q.dimension, q.category)
            if known != q.category:
                raise ClueError(f"{run.path}: question {q.id}: dimension {q.dimension} is in category "
                                f"{q.category} here and {known} elsewhere")
    categories: dict[str, list[str]] = {}
    for category in names.ordered((category_of[d] for d in dimensions), names.CATEGORY_EN):
        categories[category] = [d for d in dimensions if category_of[d] == category]
    return dimensions, categories


def _judge(runs: Sequence[Run], warnings: list[str]) -> str | None:
    judges = list(dict.fromkeys(str(run.settings["judge"]) for run in runs if run.settings.get("judge")))
    if len(judges) > 1:
        warnings.append(f"the runs were judged by different judges ({', '.join(judges)}): their scores are "
                        "not on one scale")
    return ", ".join(judges) or None


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in values.items()}


def build_comparison(runs: Sequence[Run], reference: Run, tie_margin: float, warnings: list[str],
                     ratings: RatingOptions | None = None, seed: int = 0) -> dict[str, Any]:
    """The comparison document (without the optional human and judge agreement parts)."""
    check_same_questions(runs, reference)
    dimensions, categories = layout(runs)
    rated, points = standings(runs, reference, tie_margin, ratings or RatingOptions(), seed, warnings)
    models = []
    per_dimension: dict[str, dict[str, float]] = {}
    for run in runs:
        result = scores.model_scores(run, categories)
        if result["total"] is None:
            raise ClueError(f"{run.path}: no question has points (none was judged); nothing to compare")
        unjudged = result["questions"] - result["judged"]  # type: ignore[operator]
        if unjudged:
            warnings.append(f"{run.model}: {unjudged} of {result['questions']} questions unjudged, "
                            "left out of its scores")
        if run.checker_errors:
            warnings.append(f"{run.model}: the checker failed on {run.checker_errors} of {result['questions']} "
                            "questions, scored as their records' 'passed' says")
        per_dimension[run.model] = result["dimensions"]  # type: ignore[assignment]
        model: dict[str, Any] = {
            "name": run.model, "kind": run.kind or "", "parameters": run.parameters, "run": str(run.path),
            "total": round(result["total"], 4), "questions": result["questions"], "judged": result["judged"],
            "dimensions": _rounded(result["dimensions"]),  # type: ignore[arg-type]
            "categories": _rounded(result["categories"])}  # type: ignore[arg-type]
        panel = judges.panel_summary(run)
        if panel is not None:
            model["judges"] = panel
        if run is not reference:
            model.update(points[run.model])
            versus = scores.versus_reference(run, reference, tie_margin, dimensions)
            if versus is not None:  # else no question judged in both: the report's check warns
                model["vs_reference"] = versus
            pairwise = scores.versus_reference_pairwise(run, dimensions)
            if pairwise is not None:
                model["vs_reference_pairwise"] = {**pairwise, **_pairwise_source(run, reference, warnings)}
        models.append(model)
    document: dict[str, Any] = {
        "schema": SCHEMA, "version": 1, "benchmark": "SuperCLUE", "title": "SuperCLUE comparison",
        "task": reference.task,
        "judge": _judge(runs, warnings), "reference": reference.model, "tie_margin": tie_margin,
        "dimensions": names.named(dimensions, names.DIMENSION_EN),
        "categories": [{**names.named([c], names.CATEGORY_EN)[0], "dimensions": members}
                       for c, members in categories.items()],
        "models": models,
        "maturity": scores.maturity(per_dimension, dimensions),
        "maturity_definition": scores.MATURITY_DEFINITION,
        **rated,
    }
    scored = {d for model in models for d in model["dimensions"]}  # a dimension nobody was judged on has no place
    axes = {key: (name, english, [d for d in members if d in scored])
            for key, (name, english, members) in (("x", names.QUADRANT_X), ("y", names.QUADRANT_Y))}
    if all(members for _, _, members in axes.values()):
        document["quadrant"] = {key: {"name": name, "name_en": english, "dimensions": members}
                                for key, (name, english, members) in axes.items()}
    return document


def _pairwise_source(run: Run, reference: Run, warnings: list[str]) -> dict[str, str]:
    """Which run the pairwise verdicts were judged against, with a warning when it is not ``reference``."""
    named = run.settings.get("reference_run")
    if not named:
        return {}
    against = task_folder(Path(str(named)), reference.path.name)
    if against.resolve() != reference.path.resolve():
        warnings.append(f"{run.model}: its pairwise verdicts are against {named}, not the reference run "
                        f"{reference.path}")
    return {"reference_run": str(named)}
