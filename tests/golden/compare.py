"""How the golden test compares a fresh run's view with the recorded one.

Without a trained network (the baseline) everything is compared exactly. With one, floats
differ across CPUs and math kernels, so a view matches when:

* every per-label score is within the task's tolerance of the recorded one. The tolerance is
  :data:`SAFETY` times the spread measured at recording (``data/<model>.spread.json``: the
  largest difference between runs under different kernel settings), and at least
  :data:`FLOOR`;
* every prediction equals the recorded one where the recorded margin between the two top
  scores exceeds twice the tolerance (each score may move by the tolerance, so the gap by
  twice that). Below it the prediction is *uncertain* and may flip;
* predictions without scores (extracted spans) are exact: their decoding margins (at least
  4.7e-4 between the best and runner-up span on the samples) move by at most 3.6e-7 across
  the kernel settings, three orders of magnitude apart;
* dev metrics are exact unless an uncertain dev prediction flipped; then they must be what
  the flipped predictions give (:func:`reference_metrics`, itself checked to reproduce the
  recording from the recorded predictions);
* submission files are byte for byte the recorded ones, except entries whose uncertain
  prediction flipped, which must carry the new prediction.

Each function returns a list of problems (empty when it matches), so the test can show them
all and unit tests can feed it mutated views.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

#: A tolerance this many times the spread measured on one machine covers other CPUs: the
#: largest cross-CPU difference reported (4.7e-5, Zen 4 with AVX-512) is 6x below the measured
#: 2.9e-4 already.
SAFETY = 10.0
#: The smallest tolerance: tasks whose models barely move from their initialisation show
#: differences at the recording's rounding (1e-6) here; the floor is the largest cross-CPU
#: difference reported for any task (4.7e-5, rounded up).
FLOOR = 5e-5
#: Metrics :func:`reference_metrics` can recompute from (gold, prediction) pairs.
REFERENCE = ("accuracy", "macro_f1")

Changed = dict[str, dict[Any, Any]]  # split -> {example id: the new prediction} of flipped uncertain records


def tolerances(spread: Mapping[str, Any]) -> dict[str, float]:
    """Per task, the score tolerance derived from a ``<model>.spread.json`` measurement."""
    return {task: max(SAFETY * value, FLOOR) for task, value in spread["spread"].items()}


def margin(scores: Sequence[float] | None) -> float:
    """The gap between the two highest scores (infinite when there is no runner-up)."""
    if not scores or len(scores) < 2:
        return math.inf
    top, second = sorted(scores, reverse=True)[:2]
    return top - second


def compare_view(got: Mapping[str, Any], want: Mapping[str, Any],
                 tolerance: Mapping[str, float] | None = None) -> list[str]:
    """Every problem of ``got`` against ``want``; ``tolerance`` (per task) ``None`` means exact."""
    if sorted(got) != sorted(want):
        return [f"tasks {sorted(got)} != recorded {sorted(want)}"]
    problems: list[str] = []
    for task in want:
        tol = None if tolerance is None else tolerance[task]
        problems += compare_task(task, got[task], want[task], tol)
    if tolerance is None and not problems and got != want:
        problems.append("the view differs from the recording (a field the records do not compare)")
    return problems


def compare_task(task: str, got: Mapping[str, Any], want: Mapping[str, Any], tol: float | None) -> list[str]:
    """Predictions, then metrics and submission files after what the predictions allow."""
    if sorted(got["predictions"]) != sorted(want["predictions"]):
        return [f"{task}: prediction files {sorted(got['predictions'])} != {sorted(want['predictions'])}"]
    problems: list[str] = []
    changed: Changed = {}
    for split, records in want["predictions"].items():
        found, changed[split] = compare_records(f"{task}/{split}", got["predictions"][split], records, tol)
        problems += found
    problems += compare_metrics(task, got, want, bool(changed.get("dev.jsonl")))
    problems += compare_submissions(task, got["submission"], want["submission"], changed)
    return problems


def compare_records(where: str, got: Sequence[dict], want: Sequence[dict],
                    tol: float | None) -> tuple[list[str], dict[Any, Any]]:
    """Problems of one prediction file, and ``{id: new prediction}`` of its flipped uncertain records."""
    if len(got) != len(want):
        return [f"{where}: {len(got)} records, recorded {len(want)}"], {}
    problems: list[str] = []
    flipped: dict[Any, Any] = {}
    for have, record in zip(got, want):
        problem = _record_problem(have, record, tol)
        if problem == "uncertain":
            flipped[record["id"]] = have["prediction"]
        elif problem:
            problems.append(f"{where} id {record.get('id')!r}: {problem}")
    return problems, flipped


def _record_problem(got: Mapping[str, Any], want: Mapping[str, Any], tol: float | None) -> str | None:
    """What is wrong with one record (``"uncertain"``: only its prediction flipped, within its margin)."""
    exact = tol is None
    tol = tol or 0.0
    for key, value in want.items():
        if key not in got:
            return f"no {key!r}"
        if key == "scores" and value is not None and got[key] is not None:
            if len(got[key]) != len(value) or any(abs(a - b) > tol for a, b in zip(got[key], value)):
                return f"scores {got[key]} not within {tol:g} of the recorded {value}"
        elif key != "prediction" and got[key] != value:
            return f"{key} {got[key]!r} != recorded {value!r}"
    if got.get("prediction") == want.get("prediction"):
        return None
    if not exact and margin(want.get("scores")) <= 2 * tol:
        return "uncertain"
    return (f"prediction {got.get('prediction')!r} != recorded {want.get('prediction')!r}, whose margin "
            f"{margin(want.get('scores')):g} is clear of 2 x {tol:g}")


def reference_metrics(records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Accuracy and macro-F1 (×100) of single-value dev records, as the built-in metrics define them."""
    pairs = [(r["gold"], r.get("prediction")) for r in records if r.get("gold") is not None]
    if not pairs or any(isinstance(gold, (list, dict)) for gold, _ in pairs):
        return {}  # no records, or span answers (their metrics are not recomputed)
    classes = {gold for gold, _ in pairs} | {p for _, p in pairs if p is not None}
    f1 = []
    for cls in classes:
        tp = sum(1 for g, p in pairs if g == cls and p == cls)
        wrong = sum(1 for g, p in pairs if (g == cls) != (p == cls))
        f1.append(0.0 if tp == 0 else 2 * tp / (2 * tp + wrong))
    correct = sum(1 for g, p in pairs if p is not None and p == g)
    return {"accuracy": 100.0 * correct / len(pairs), "macro_f1": 100.0 * math.fsum(f1) / len(classes)}


def compare_metrics(task: str, got: Mapping[str, Any], want: Mapping[str, Any], dev_flipped: bool) -> list[str]:
    """Dev metrics and the primary score: exact, or what flipped uncertain dev predictions give."""
    if not dev_flipped:
        if (got["dev"], got["primary"]) != (want["dev"], want["primary"]):
            return [f"{task}: metrics {got['dev']} primary {got['primary']} != recorded {want['dev']} "
                    f"primary {want['primary']}"]
        return []
    dev_want = want["predictions"]["dev.jsonl"]
    recomputed, reference = reference_metrics(got["predictions"]["dev.jsonl"]), reference_metrics(dev_want)
    problems = []
    for name, value in want["dev"].items():
        if name in REFERENCE and not math.isclose(reference[name], value, rel_tol=1e-12):
            problems.append(f"{task}: the reference {name} {reference[name]} does not reproduce the recorded {value}")
        expected = recomputed[name] if name in REFERENCE else value
        if not math.isclose(got["dev"].get(name, math.nan), expected, rel_tol=1e-12):
            problems.append(f"{task}: {name} {got['dev'].get(name)} != {expected}, what the predictions give")
    primary = [name for name, value in want["dev"].items() if value == want["primary"]][:1]
    if got["primary"] != (got["dev"].get(primary[0]) if primary else want["primary"]):
        problems.append(f"{task}: primary {got['primary']} is not the recorded primary metric's {primary}")
    return problems


def submission_entries(text: str) -> list[tuple[Any, Any]]:
    """A submission file as ``(id, value)`` pairs: JSON lines with an ``id``, or one JSON object."""
    objects = [json.loads(line) for line in text.splitlines() if line.strip()]
    if len(objects) == 1 and "id" not in objects[0]:
        return list(objects[0].items())
    return [(o["id"], o["label"] if set(o) == {"id", "label"} else {k: v for k, v in o.items() if k != "id"})
            for o in objects]


def compare_submissions(task: str, got: Mapping[str, str], want: Mapping[str, str], changed: Changed) -> list[str]:
    """Byte for byte, except entries of flipped uncertain test predictions, which carry the new one."""
    if sorted(got) != sorted(want):
        return [f"{task}: submission files {sorted(got)} != recorded {sorted(want)}"]
    flipped = [split for split, ids in changed.items() if ids and split != "dev.jsonl"]
    problems = []
    for name, text in want.items():
        if got[name] == text:
            continue
        if not flipped:
            problems.append(f"{task}: {name} differs from the recording and no uncertain prediction flipped")
            continue
        problems += _entry_problems(f"{task}/{name}", submission_entries(got[name]), submission_entries(text),
                                    [changed[split] for split in flipped])
    return problems


def _entry_problems(where: str, got: list[tuple[Any, Any]], want: list[tuple[Any, Any]],
                    flips: list[dict[Any, Any]]) -> list[str]:
    """Entries that differ must be flipped uncertain predictions of one of the task's test files."""
    if [i for i, _ in got] != [i for i, _ in want]:
        return [f"{where}: ids or their order differ from the recording"]
    return [f"{where} id {i!r}: {value!r} != recorded {old!r} and not a flipped uncertain prediction"
            for (i, value), (_, old) in zip(got, want)
            if value != old and not any(i in flip and flip[i] == value for flip in flips)]
