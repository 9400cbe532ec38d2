"""Published scores set beside runs, only where the two numbers measure the same thing.

A run is placed beside a published score when the task, the split, the metric and the
way the model was used match: ``mode`` (``fine-tuned`` for encoders; for large language
models ``loglikelihood`` or ``generate``, with the usual other names of the two mapped onto
them), ``shots`` and, when the published score
names one, the prompt. Runs are scored on dev, so a published *test* score is never
compared with them. For dev the data version need not match (both CLUE editions ship
the same dev files; see :class:`clue_core.specs.PublishedScore`); a test comparison would
need it. Runs on the bundled sample or a ``--limit`` subset are shown, but marked as
not comparable and left unranked.

A task that scores a labelled split besides dev (``TaskSpec.scored_splits``: FewCLUE's
``test_public``) has its published scores on that split set beside the runs' scores on it
(:func:`scored_boards`), and there the version must match: FewCLUE's ``version`` names the
train/dev pair a baseline trained on, as the run's reader setting ``split`` does. PET
(``mode="pet"``) is cloze training with answer words, not plain fine-tuning: a run is used that
way when its ``method`` setting says ``pet`` (clue-models-hf's ``--set method=pet``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FINE_TUNED = "fine-tuned"
#: The mode of pattern-exploiting training (FewCLUE's PET baselines; clue-models-hf's ``method=pet``).
PET = "pet"
#: Names sources use for the two ways of asking an LLM, as clue-models-llm's ``mode`` setting names them
#: (OpenCompass says "ppl"/"gen", papers "likelihood"/"generation").
MODE_ALIASES = {"likelihood": "loglikelihood", "log-likelihood": "loglikelihood", "ppl": "loglikelihood",
                "generation": "generate", "gen": "generate", "generative": "generate"}


def canonical_mode(mode: Any) -> Any:
    return MODE_ALIASES.get(mode, mode) if isinstance(mode, str) else mode


def _prompt_id(settings: Mapping[str, Any], info: Mapping[str, Any]) -> Any:
    """What identifies the prompt a run used: a ``prompt`` setting, or the learner's prompt digest."""
    prompt = settings.get("prompt") or info.get("prompt") or info.get("prompt_hash")
    if isinstance(prompt, Mapping):  # clue-models-llm's run_info: {"template_sha256": …, "prompts_sha256": …}
        return prompt.get("template_sha256") or prompt.get("prompts_sha256")
    return prompt


def used_settings(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The settings shown beside the scores, as the run used them: a preset (``protocol=opencompass:…``)
    fixes the mode and score rule it asks by, and ``model_info.decoding`` says which (the manifest keeps
    the values given: ``score=sum`` where the preset scored by ``mean_all``)."""
    shown = dict(metrics.get("report_settings") or {})
    decoding = (metrics.get("model_info") or {}).get("decoding")
    if isinstance(decoding, dict):
        shown.update({key: value for key, value in decoding.items() if key in shown})
    return shown


def run_usage(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """How a run used its model: mode, shots and prompt, from ``metrics.json``."""
    settings = used_settings(metrics)
    info = metrics.get("model_info") or {}
    llm = metrics.get("model_category") == "llm"
    mode = canonical_mode(settings.get("mode")) or (None if llm else FINE_TUNED)
    if not llm and settings.get("method") == PET:  # clue-models-hf's method=pet: cloze training, not a task head
        mode = PET
    return {"mode": mode, "shots": settings.get("shots"), "prompt": _prompt_id(settings, info), "llm": llm}


def published_dict(score: Any) -> dict[str, Any]:
    """A :class:`~clue_core.specs.PublishedScore` as plain data (``prompt`` when a source names one)."""
    data = {key: getattr(score, key) for key in ("model", "split", "version", "metric", "value", "source",
                                                 "mode", "shots")}
    data["prompt"] = getattr(score, "prompt", None)
    return data


def mismatch(score: Mapping[str, Any], usage: Mapping[str, Any], dev_metrics: Mapping[str, Any],
             split: str = "dev", version: str | None = None) -> str | None:
    """Why ``score`` cannot stand beside a run (None when it can), ignoring sample/limit."""
    if score["split"] != split:
        return f"published on {score['split']}, the run is scored on {split}"
    if split != "dev" and score["version"] != version:
        return f"data version {score['version']}, the run's is {version}"
    if score["metric"] not in dev_metrics:
        return f"metric {score['metric']} not among the run's"
    if canonical_mode(score["mode"]) != usage["mode"]:
        return f"mode {score['mode']}, the run's is {usage['mode'] or 'not recorded'}"
    if (usage["llm"] or score["shots"] is not None) and score["shots"] != usage["shots"]:
        return f"{score['shots']} shots, the run used {usage['shots']}"
    if score["prompt"] is not None and score["prompt"] != usage["prompt"]:
        return "a different prompt"
    return None


def boards(published: Sequence[Mapping[str, Any]], entries: Sequence[Mapping[str, Any]],
           primary_metric: str) -> list[dict[str, Any]]:
    """One ranked table per (metric, mode, shots) that has published dev scores.

    ``entries`` are the rows of the leaderboard for this task, each with ``row``,
    ``usage``, ``dev`` (metric means), ``interval`` per metric, ``comparable`` and
    ``reason``. Comparable rows are ranked among the published numbers; the others are
    listed after them, unranked, with the reason.
    """
    keys = list(dict.fromkeys((s["metric"], canonical_mode(s["mode"]), s["shots"]) for s in published
                              if s["split"] == "dev"))
    keys.sort(key=lambda key: (key[0] != primary_metric, key[0]))
    result = []
    for metric, mode, shots in keys:
        scores = [dict(s, index=i) for i, s in enumerate(published)
                  if (s["split"], s["metric"], canonical_mode(s["mode"]), s["shots"]) == ("dev", metric, mode, shots)]
        ranked: list[dict[str, Any]] = [{"kind": "published", **s} for s in scores]
        unranked: list[dict[str, Any]] = []
        for entry in entries:
            if metric not in entry["dev"]:
                continue
            if any(mismatch(s, entry["usage"], entry["dev"]) for s in scores):
                continue  # another mode, shots or prompt: a different board
            item = {"kind": "run", "row": entry["row"], "model": entry["model"], "value": entry["dev"][metric],
                    "interval": entry["intervals"].get(metric), "comparable": entry["comparable"],
                    "reason": entry["reason"]}
            (ranked if entry["comparable"] else unranked).append(item)
        ranked.sort(key=lambda item: -item["value"])
        for rank, item in enumerate(ranked, 1):
            item["rank"] = rank
        result.append({"metric": metric, "mode": mode, "shots": shots, "entries": ranked + unranked})
    return result


def scored_boards(published: Sequence[Mapping[str, Any]], entries: Sequence[Mapping[str, Any]],
                  primary_metric: str) -> list[dict[str, Any]]:
    """One table per (split, metric, mode, shots) of the published scores on a scored split.

    ``entries`` are the leaderboard rows of this task that scored such a split: ``row``,
    ``model``, ``usage``, ``scored`` (``{split: {metric: value}}``), ``version`` (the run's
    reader-setting value, None for a repeat family's mean) and the row's ``comparable`` and
    ``reason``. Each run stands beside the published score of its own version; it is ranked
    with it only when mode, shots and prompt match and the row is comparable, and otherwise
    listed unranked with the reason, so a published baseline is never passed off as a rival
    of a run trained another way. Published scores of versions no run used are listed too, unranked:
    a rank is only given within a version that has a comparable run.
    """
    keys = list(dict.fromkeys((s["split"], s["metric"], canonical_mode(s["mode"]), s["shots"]) for s in published
                              if any(s["split"] in e["scored"] for e in entries)))
    keys.sort(key=lambda key: (key[0], key[1] != primary_metric, key[1]))
    result = []
    for split, metric, mode, shots in keys:
        scores = [dict(s, index=i) for i, s in enumerate(published)
                  if (s["split"], s["metric"], canonical_mode(s["mode"]), s["shots"]) == (split, metric, mode, shots)]
        by_version: dict[Any, list[dict[str, Any]]] = {}
        for score in scores:
            by_version.setdefault(score["version"], []).append({"kind": "published", **score})
        stray: list[dict[str, Any]] = []
        for entry in entries:
            values = entry["scored"].get(split) or {}
            if metric not in values:
                continue
            beside = next((s for s in scores if s["version"] == entry["version"]), None)
            why = (mismatch(beside, entry["usage"], values, split, entry["version"]) if beside is not None
                   else f"no published {split} score for {entry['version'] or 'a mean over several trainings'}")
            item = {"kind": "run", "row": entry["row"], "model": entry["model"], "version": entry["version"],
                    "value": values[metric], "comparable": entry["comparable"] and why is None,
                    "reason": why or entry["reason"]}
            (by_version[entry["version"]] if beside is not None else stray).append(item)
        ordered: list[dict[str, Any]] = []
        for group in by_version.values():  # ranked only where a comparable run stands beside the published score
            ranked = sorted((e for e in group if e["kind"] == "published" or e["comparable"]),
                            key=lambda e: -e["value"])
            if any(e["kind"] == "run" for e in ranked):
                for rank, item in enumerate(ranked, 1):
                    item["rank"] = rank
            ordered += ranked + [e for e in group if e not in ranked]
        result.append({"split": split, "metric": metric, "mode": mode, "shots": shots, "entries": ordered + stray})
    return result
