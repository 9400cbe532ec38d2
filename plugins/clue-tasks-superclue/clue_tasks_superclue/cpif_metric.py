"""The ``superclue_cpif`` metric: each prompt's official checker on its answer, in the sandbox.

Per prompt the verdict is the official evaluator's (``superclue-evaluation.py``): the answer
after the last ``</think>``, stripped, read as the single-quoted and then the double-quoted
literal the evaluator builds (:mod:`clue_tasks_superclue.cpif_rules`), handed to the
prompt's ``check_response`` with the evaluator's names in scope, in a fenced worker
process (:mod:`clue_tasks_superclue.sandbox`). A prompt passes when the checker returns a
dict whose ``check_code == True``; any other result fails; an exception, a timeout, a
resource limit or a refused operation fails and counts in ``checker_errors``.

``dev.accuracy`` is the percentage of the task's prompts that pass. The denominator is
every prompt of the file (with checker code): a prompt with no answer is a fail (reason
``no answer``), where the official evaluator, iterating the answers file, would leave it
out; for a complete answers file the two agree. Each prediction record's ``scoring`` keeps
``{"passed", "reason", "checker_error"}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_core.plugin import MetricResult, Prediction
from clue_tasks_superclue import cpif_rules
from clue_tasks_superclue.cpif_reader import checker_of
from clue_tasks_superclue.examples import OpenQuestionExample
from clue_tasks_superclue.sandbox import Check, Limits, Verdict, check_isolation, run_checks

COUNTS = ("prompts", "passed", "checker_errors")
#: What held where checkers ran (absent when none ran): bubblewrap (1) or plain processes (0), Landlock ABI (0: none).
FENCES = ("sandbox_bwrap", "sandbox_landlock")


def limits_of(settings: Mapping[str, Any]) -> Limits:
    """The sandbox's limits from the metric's ``sandbox_*`` settings (defaults where absent)."""
    base = Limits()
    extra = tuple(n.strip() for n in str(settings.get("sandbox_imports") or "").split(",") if n.strip())
    return Limits(timeout=float(settings.get("sandbox_timeout", base.timeout)),
                  cpu=float(settings.get("sandbox_cpu", base.cpu)),
                  memory_mb=int(settings.get("sandbox_memory_mb", base.memory_mb)),
                  workers=int(settings.get("sandbox_workers", base.workers)),
                  isolation=str(settings.get("sandbox", base.isolation)),
                  imports=tuple(dict.fromkeys((*base.imports, *extra))),
                  uid=int(settings.get("sandbox_uid", base.uid)))


def check_of(code: str, answer: str) -> tuple[Check | None, Verdict | None]:
    """The check to run for ``answer``, or the verdict when no quoting of it parses (nothing to run)."""
    single, double = cpif_rules.candidates(cpif_rules.final_answer(answer))
    if single.value is None and double.value is None:
        return None, Verdict(False, f"checker error: the answer is no string literal in either quoting "
                                    f"({double.error})", True)
    return Check(cpif_rules.checker_source(code), (single.value, double.value), (single.error, double.error)), None


def compute(examples: Sequence[OpenQuestionExample], predictions: Sequence[Prediction | None], *,
            settings: Mapping[str, Any] | None = None) -> MetricResult:
    verdicts: list[Verdict | None] = [None] * len(examples)
    checks: list[Check] = []
    where: list[int] = []
    for index, (example, prediction) in enumerate(zip(examples, predictions)):
        code = checker_of(example)
        if code is None:
            verdicts[index] = Verdict(False, "checker error: the example carries no checker code", True)
        elif prediction is None or not isinstance(prediction.value, str):
            verdicts[index] = Verdict(False, "no answer", False)
        else:
            check, verdict = check_of(code, prediction.value)
            if check is None:
                verdicts[index] = verdict
            else:
                checks.append(check)
                where.append(index)
    fences: dict[str, str] = {}
    if checks:
        found, fences = run_checks(checks, limits_of(settings or {}))
        for index, verdict in zip(where, found):
            verdicts[index] = verdict
    final = [v or Verdict(False, "checker error: not checked", True) for v in verdicts]
    passed = [100.0 if v.passed else 0.0 for v in final]
    totals = {"accuracy": sum(passed) / len(passed) if passed else 0.0, "prompts": float(len(final)),
              "passed": float(sum(v.passed for v in final)),
              "checker_errors": float(sum(v.checker_error for v in final))}
    if fences:  # what held, for metrics.json and the report: 1 bubblewrap, 0 plain processes; Landlock's ABI, 0 none
        totals["sandbox_bwrap"] = 1.0 if fences.get("isolation") == "bwrap" else 0.0
        landlock = fences.get("landlock", "")
        totals["sandbox_landlock"] = float(landlock.split()[-1]) if landlock.startswith("landlock ABI") else 0.0
    return MetricResult(totals, {"accuracy": passed}, [v.as_dict() for v in final])


def check_settings(settings: Mapping[str, Any]) -> None:
    """At planning: ``sandbox=bwrap`` without bubblewrap stops the run before any answer is generated."""
    check_isolation(str(settings.get("sandbox", Limits().isolation)))
