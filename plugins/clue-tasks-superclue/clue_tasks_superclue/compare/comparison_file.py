"""SuperCLUE comparisons: read and check a ``comparison.json``, and derive what the views need.

A comparison of open-ended (judged) runs is written by ``clue-core compare``;
its schema is documented in ``docs/report.md``. Scores are on a 0-100 scale, win/tie/loss
are percentages of questions against the reference model, and the maturity index of a
dimension is a number in 0-1 with a band (high ≥ 0.8, middle ≥ 0.6, low below). The
capability quadrant places each model by the mean of its scores over the dimensions the
file assigns to each axis (基础能力 on x, 应用能力 on y by default), so the axes always
say which dimensions they average. Optional parts, checked when present: win/tie/loss from
pairwise verdicts, the maturity index's definition, agreement with a human ranking, the
judge's agreement with people (the share graded 及格 or better, and the judge against the
person: band agreement and α, each with its bootstrap interval, overall and per model), a
panel's agreement between its judges (``models[i].judges``: α, κ, position consistency and
each judge's mean grade), and the ratings (``bradley_terry`` with its intervals, ``elo``,
each model's SuperCLUE ``points``; see :mod:`clue_tasks_superclue.compare.standings`), which a
comparison written before them lacks and still reads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError

#: The file ``clue-core compare`` writes into its ``-o`` folder (and ``clue-core report`` reads).
COMPARISON = "comparison.json"
SCHEMA = "clue-core/comparison"
BANDS = (("high", 0.8), ("middle", 0.6), ("low", 0.0))
#: The four grades people give a judged answer on the judge-agreement sheet, best first.
GRADES = ("优秀", "良好", "及格", "不及格")
#: Win + tie + loss may miss 100 by rounding, not by more.
PERCENT_SLACK = 0.5


def band_of(index: float) -> str:
    return next(name for name, floor in BANDS if index >= floor)


class _Checker:
    """One clear error naming the file and the field at fault."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> ClueError:
        return ClueError(f"{self.path}: field '{where}': {message}")

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {type(value).__name__}")
        return value

    def items(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, got {type(value).__name__}")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(where, "expected a non-empty string")
        return value

    def count(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(where, f"expected a count (an integer ≥ 0), got {value!r}")
        return value

    def finite(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(where, f"expected a finite number, got {value!r}")
        return float(value)

    def number(self, value: Any, where: str, low: float, high: float) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise self.fail(where, f"expected a number from {low:g} to {high:g}, got {value!r}")
        return float(value)


def _names(check: _Checker, data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    named = []
    for i, item in enumerate(check.items(data.get(key), key)):
        item = check.obj(item, f"{key}[{i}]")
        name = check.text(item.get("name"), f"{key}[{i}].name")
        english = item.get("name_en")
        if english is not None:
            check.text(english, f"{key}[{i}].name_en")
        named.append({**item, "name": name, "name_en": english or (name if name.isascii() else f"{key[:-1]} {i + 1}")})
    return named


def _scores(check: _Checker, value: Any, where: str, known: list[str]) -> dict[str, float]:
    scores = check.obj(value, where)
    for name in scores:
        if name not in known:
            raise check.fail(f"{where}.{name}", f"not one of the declared names ({', '.join(known)})")
    return {name: check.number(scores[name], f"{where}.{name}", 0, 100) for name in known if name in scores}


def _outcome(check: _Checker, value: Any, where: str) -> dict[str, float]:
    data = check.obj(value, where)
    outcome = {k: check.number(data.get(k), f"{where}.{k}", 0, 100) for k in ("win", "tie", "loss")}
    if abs(sum(outcome.values()) - 100) > PERCENT_SLACK:
        raise check.fail(where, f"win + tie + loss is {sum(outcome.values()):g}, not 100")
    if "n" in data:  # optional: how many questions the percentages are of
        outcome["n"] = check.count(data["n"], f"{where}.n")
    return outcome


def _versus(check: _Checker, value: Any, where: str, dim_names: list[str]) -> dict[str, Any]:
    """A win/tie/loss block: overall and per dimension (from grades, or from pairwise verdicts)."""
    versus = check.obj(value, where)
    result: dict[str, Any] = {
        "overall": _outcome(check, versus.get("overall"), f"{where}.overall"),
        "dimensions": {d: _outcome(check, v, f"{where}.dimensions.{d}")
                       for d, v in check.obj(versus.get("dimensions", {}), f"{where}.dimensions").items()},
    }
    for d in result["dimensions"]:
        if d not in dim_names:
            raise check.fail(f"{where}.dimensions.{d}", "not a declared dimension")
    if "undecided" in versus:  # optional: questions left out (unjudged on either side)
        result["undecided"] = check.count(versus["undecided"], f"{where}.undecided")
    if "reference_run" in versus:
        result["reference_run"] = check.text(versus["reference_run"], f"{where}.reference_run")
    return result


def _human_ranking(check: _Checker, value: Any) -> dict[str, Any]:
    data = check.obj(value, "human_ranking")
    result: dict[str, Any] = {"file": check.text(data.get("file"), "human_ranking.file"),
                              "n": check.count(data.get("n"), "human_ranking.n")}
    for key in ("pearson", "spearman"):
        result[key] = check.number(data.get(key), f"human_ranking.{key}", -1, 1)
        result[f"{key}_p"] = check.number(data.get(f"{key}_p"), f"human_ranking.{key}_p", 0, 1)
    return result


def judge_label(index: int, model: str) -> str:
    """A panel judge's name in ``models[i].judges.mean_grade``: ``judge.<i> <model>``, as its reasons name it."""
    return f"judge.{index} {model}"


def _interval(check: _Checker, value: Any, where: str, low: float, high: float) -> list[float]:
    pair = check.items(value, where)
    if len(pair) != 2:
        raise check.fail(where, f"expected [low, high], got {len(pair)} numbers")
    ends = [check.number(end, where, low, high) for end in pair]
    if ends[0] > ends[1]:
        raise check.fail(where, f"its low end {ends[0]:g} is above its high end {ends[1]:g}")
    return ends


def _people(check: _Checker, data: dict[str, Any], where: str) -> dict[str, Any]:
    """The sheet's judge-against-person figures (optional, each checked): shares 0-100, α -1..1, intervals."""
    result: dict[str, Any] = {"acceptable_share": check.number(data.get("acceptable_share"),
                                                               f"{where}.acceptable_share", 0, 100)}
    for key, low, high in (("acceptable", 0, 100), ("band_agreement", 0, 100), ("band_alpha", -1, 1)):
        if key != "acceptable" and data.get(key) is not None:
            result[key] = check.number(data[key], f"{where}.{key}", low, high)
        if data.get(f"{key}_interval") is not None:
            result[f"{key}_interval"] = _interval(check, data[f"{key}_interval"], f"{where}.{key}_interval", low, high)
    return result


def _judge_agreement(check: _Checker, value: Any, names: list[str]) -> dict[str, Any]:
    data = check.obj(value, "judge_agreement")
    by_grade = check.obj(data.get("by_grade"), "judge_agreement.by_grade")
    if list(by_grade) != list(GRADES):
        raise check.fail("judge_agreement.by_grade", f"expected the grades {', '.join(GRADES)}")
    result: dict[str, Any] = {
        "file": check.text(data.get("file"), "judge_agreement.file"),
        "graded": check.count(data.get("graded"), "judge_agreement.graded"),
        "by_grade": {g: check.count(by_grade[g], f"judge_agreement.by_grade.{g}") for g in GRADES},
        **_people(check, data, "judge_agreement"),
    }
    if sum(result["by_grade"].values()) != result["graded"]:
        raise check.fail("judge_agreement.graded", "is not the sum of by_grade")
    if data.get("by_model") is not None:  # optional: the same figures, model by model
        result["by_model"] = {}
        for name, part in check.obj(data["by_model"], "judge_agreement.by_model").items():
            where = f"judge_agreement.by_model.{name}"
            if name not in names:
                raise check.fail(where, "not one of the compared models")
            part = check.obj(part, where)
            result["by_model"][name] = {"graded": check.count(part.get("graded"), f"{where}.graded"),
                                        **_people(check, part, where)}
        if sum(p["graded"] for p in result["by_model"].values()) != result["graded"]:
            raise check.fail("judge_agreement.by_model", "its graded rows do not add up to judge_agreement.graded")
    return result


def _panel(check: _Checker, value: Any, where: str) -> dict[str, Any]:
    """``models[i].judges``: a panel's judges, their agreement (α, κ, position consistency) and mean grades."""
    data = check.obj(value, where)
    panel = [check.text(m, f"{where}.panel") for m in check.items(data.get("panel"), f"{where}.panel")]
    if len(panel) < 2:
        raise check.fail(f"{where}.panel", f"a panel has two judges or more, got {len(panel)}")
    labels = [judge_label(i, m) for i, m in enumerate(panel)]
    result: dict[str, Any] = {"panel": panel, "questions": check.count(data.get("questions"), f"{where}.questions")}
    if data.get("aggregate") is not None:
        result["aggregate"] = check.text(data["aggregate"], f"{where}.aggregate")
    for key, low, high in (("alpha", -1, 1), ("kappa", -1, 1), ("position_consistency", 0, 100)):
        if data.get(key) is not None:
            result[key] = check.number(data[key], f"{where}.{key}", low, high)
    for key in ("mean_grade", "graded"):
        found = check.obj(data.get(key, {}), f"{where}.{key}")
        for judge in found:
            if judge not in labels:
                raise check.fail(f"{where}.{key}.{judge}", f"not one of the panel's judges ({', '.join(labels)})")
        result[key] = {j: (check.number(found[j], f"{where}.{key}.{j}", 0, 10) if key == "mean_grade"
                           else check.count(found[j], f"{where}.{key}.{j}")) for j in labels if j in found}
    result["notes"] = [check.text(n, f"{where}.notes") for n in check.items(data.get("notes", []), f"{where}.notes")]
    return result


def _points(check: _Checker, raw: dict[str, Any], where: str) -> dict[str, float]:
    """A model's SuperCLUE points against the reference (3 a win, 1 a tie) and their maximum."""
    found: dict[str, float] = {}
    if raw.get("points") is not None:
        found["points"] = check.finite(raw["points"], f"{where}.points")
        if found["points"] < 0:
            raise check.fail(f"{where}.points", f"expected a number ≥ 0, got {raw['points']!r}")
    if raw.get("points_max") is not None:
        found["points_max"] = check.count(raw["points_max"], f"{where}.points_max")
        if found.get("points", 0) > found["points_max"]:
            raise check.fail(f"{where}.points", f"{found['points']:g} is more than points_max {found['points_max']}")
    return found


def _ratings(check: _Checker, data: dict[str, Any], names: list[str], warnings: list[str]) -> dict[str, Any]:
    """``bradley_terry``, ``elo`` and their parameters, each checked when present (older files have none)."""
    result: dict[str, Any] = {"bradley_terry": None, "elo": None}

    def known(name: str, where: str) -> None:
        if name not in names:
            raise check.fail(f"{where}.{name}", "not one of the compared models")

    if data.get("bradley_terry") is not None:
        fitted = {}
        for name, value in check.obj(data["bradley_terry"], "bradley_terry").items():
            known(name, "bradley_terry")
            where = f"bradley_terry.{name}"
            value = check.obj(value, where)
            fitted[name] = {key: check.finite(value.get(key), f"{where}.{key}")
                            for key in ("rating", "ci_low", "ci_high")}
            if fitted[name]["ci_low"] > fitted[name]["ci_high"]:
                raise check.fail(f"{where}.ci_low", "is above ci_high")
        result["bradley_terry"] = fitted
    if data.get("elo") is not None:
        board = check.obj(data["elo"], "elo")
        for name in board:
            known(name, "elo")
        result["elo"] = {name: check.finite(value, f"elo.{name}") for name, value in board.items()}
    for key in ("bradley_terry", "elo"):
        missing = [n for n in names if result[key] is not None and n not in result[key]]
        if missing:
            warnings.append(f"{key}: no rating for {', '.join(missing)}")
    for key in ("bradley_terry_bootstrap", "elo_orders", "ratings_games"):
        if data.get(key) is not None:
            result[key] = check.count(data[key], key)
    if data.get("elo_k") is not None:
        result["elo_k"] = check.finite(data["elo_k"], "elo_k")
        if result["elo_k"] <= 0:
            raise check.fail("elo_k", f"expected a number above 0, got {data['elo_k']!r}")
    if data.get("bradley_terry_prior") is not None:
        if not isinstance(data["bradley_terry_prior"], bool):
            raise check.fail("bradley_terry_prior", f"expected true or false, got {data['bradley_terry_prior']!r}")
        result["bradley_terry_prior"] = data["bradley_terry_prior"]
    if data.get("ratings_seed") is not None:
        if isinstance(data["ratings_seed"], bool) or not isinstance(data["ratings_seed"], int):
            raise check.fail("ratings_seed", f"expected an integer, got {data['ratings_seed']!r}")
        result["ratings_seed"] = data["ratings_seed"]
    if data.get("ratings_definition") is not None:
        result["ratings_definition"] = check.text(data["ratings_definition"], "ratings_definition")
    return result


def _axis(check: _Checker, value: Any, where: str, dimensions: list[str], default: str) -> dict[str, Any]:
    axis = check.obj(value, where)
    members = [check.text(d, f"{where}.dimensions") for d in check.items(axis.get("dimensions"), f"{where}.dimensions")]
    unknown = [d for d in members if d not in dimensions]
    if unknown or not members:
        raise check.fail(f"{where}.dimensions", f"unknown dimension {unknown[0]!r}" if unknown else "empty")
    return {"name": axis.get("name", default), "name_en": axis.get("name_en", default), "dimensions": members}


def load_comparison(path: Path) -> dict[str, Any]:
    """The comparison in ``path``, checked, with quadrant positions and bands filled in."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ClueError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
    check = _Checker(path)
    data = check.obj(data, "(document)")
    if data.get("schema") != SCHEMA:
        raise check.fail("schema", f"expected {SCHEMA!r}, got {data.get('schema')!r}")
    warnings: list[str] = []
    dimensions = _names(check, data, "dimensions")
    categories = _names(check, data, "categories") if "categories" in data else []
    dim_names, cat_names = [d["name"] for d in dimensions], [c["name"] for c in categories]
    reference = check.text(data.get("reference"), "reference")
    models = []
    for i, raw in enumerate(check.items(data.get("models"), "models")):
        where = f"models[{i}]"
        raw = check.obj(raw, where)
        name = check.text(raw.get("name"), f"{where}.name")
        english_name = raw.get("name_en")
        if english_name is not None:
            check.text(english_name, f"{where}.name_en")
        model = {"name": name, "name_en": english_name or (name if name.isascii() else f"model {i + 1}"),
                 "kind": raw.get("kind", ""),
                 "parameters": raw.get("parameters"),
                 "total": check.number(raw.get("total"), f"{where}.total", 0, 100),
                 "dimensions": _scores(check, raw.get("dimensions", {}), f"{where}.dimensions", dim_names),
                 "categories": _scores(check, raw.get("categories", {}), f"{where}.categories", cat_names)}
        versus = raw.get("vs_reference")
        if versus is not None:
            model["vs_reference"] = _versus(check, versus, f"{where}.vs_reference", dim_names)
        elif model["name"] != reference:
            warnings.append(f"{model['name']}: no win/tie/loss against the reference {reference}")
        if raw.get("vs_reference_pairwise") is not None:
            model["vs_reference_pairwise"] = _versus(check, raw["vs_reference_pairwise"],
                                                     f"{where}.vs_reference_pairwise", dim_names)
        model.update(_points(check, raw, where))
        if raw.get("judges") is not None:
            model["judges"] = _panel(check, raw["judges"], f"{where}.judges")
        models.append(model)
    if reference not in [m["name"] for m in models]:
        warnings.append(f"the reference model {reference} has no scores in this comparison")
    quadrant = check.obj(data.get("quadrant"), "quadrant") if "quadrant" in data else None
    axes = None
    if quadrant is not None:
        axes = {"x": _axis(check, quadrant.get("x"), "quadrant.x", dim_names, "基础能力"),
                "y": _axis(check, quadrant.get("y"), "quadrant.y", dim_names, "应用能力")}
        for model in models:
            position = {}
            for key, axis in axes.items():
                have = [model["dimensions"][d] for d in axis["dimensions"] if d in model["dimensions"]]
                position[key] = sum(have) / len(have) if len(have) == len(axis["dimensions"]) else None
            model["quadrant"] = position
            if None in position.values():
                warnings.append(f"{model['name']}: not placed in the quadrant (scores missing on an axis)")
        placed = [m["quadrant"] for m in models if None not in m["quadrant"].values()]
        split = check.obj(quadrant.get("split") or {}, "quadrant.split")
        axes["split"] = {key: check.number(split[key], f"quadrant.split.{key}", 0, 100) if key in split else
                         (sum(p[key] for p in placed) / len(placed) if placed else 50.0) for key in ("x", "y")}
        axes["split_source"] = "file" if split else "mean of the models"
    maturity = []
    for i, raw in enumerate(check.items(data.get("maturity", []), "maturity")):
        where = f"maturity[{i}]"
        raw = check.obj(raw, where)
        dimension = check.text(raw.get("dimension"), f"{where}.dimension")
        if dimension not in dim_names:
            raise check.fail(f"{where}.dimension", f"unknown dimension {dimension!r}")
        index = check.number(raw.get("index"), f"{where}.index", 0, 1)
        band = raw.get("band") or band_of(index)
        if band not in {name for name, _ in BANDS}:
            raise check.fail(f"{where}.band", f"expected high, middle or low, got {band!r}")
        if band != band_of(index):
            warnings.append(f"maturity of {dimension}: index {index:g} is in band {band_of(index)}, "
                            f"the file says {band}")
        maturity.append({"dimension": dimension, "index": index, "band": band})
    extra: dict[str, Any] = {}
    if data.get("maturity_definition") is not None:
        extra["maturity_definition"] = check.text(data["maturity_definition"], "maturity_definition")
    if data.get("human_ranking") is not None:
        extra["human_ranking"] = _human_ranking(check, data["human_ranking"])
    if data.get("judge_agreement") is not None:
        extra["judge_agreement"] = _judge_agreement(check, data["judge_agreement"], [m["name"] for m in models])
    extra.update(_ratings(check, data, [m["name"] for m in models], warnings))
    margin = data.get("tie_margin")  # compare's --tie-margin: a NaN here made the report's JSON unwritable
    if margin is not None and check.finite(margin, "tie_margin") < 0:
        raise check.fail("tie_margin", f"expected a number ≥ 0, got {margin!r}")
    extra["tie_margin"] = margin
    return {**extra, "path": str(path), "title": data.get("title") or data.get("benchmark") or "SuperCLUE",
            "benchmark": data.get("benchmark", "SuperCLUE"), "reference": reference, "judge": data.get("judge"),
            "dimensions": dimensions, "categories": categories,
            "models": models, "quadrant": axes, "maturity": maturity, "warnings": warnings}


def english(named: list[Mapping[str, Any]]) -> dict[str, str]:
    """Name → English name, for charts drawn without a CJK font."""
    return {item["name"]: item["name_en"] for item in named}
