"""The judge-agreement sheet: a seeded sample of judgments for people to grade, and reading it back.

The sheet is CSV in UTF-8 with a byte-order mark (so Excel shows the Chinese text), one row
per judge-method question whose judgment parsed, balanced over the dimensions: each
dimension's judgments are shuffled with the seed and the rows are taken from the
dimensions in turn. A person fills the last column, ``人工评级``, with one of the report's
four grades; reading it back counts the grades and the share graded 及格 or better, and
measures the judge against the person (:func:`clue_tasks_superclue.agreement.sheet_agreement`:
the share's interval, the share of rows whose judge grade falls in the person's band, and α on
the band ranks, each with a seeded bootstrap 95 % interval), over all rows and per model.

People open the sheet in a spreadsheet, and its cells hold what models answered: an answer
beginning ``=HYPERLINK(…)`` would be a live formula there. So, as OWASP advises against CSV
injection, a cell beginning with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is
written behind a single quote (``'=HYPERLINK(…)``), shown as text; a cell already beginning
with a quote gets one more, so reading the sheet back takes exactly one leading quote off the
cells it reads (a model named ``-m`` is still found).
"""

from __future__ import annotations

import csv
import random
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from clue_core.plugin import ClueError
from clue_tasks_superclue import agreement
from clue_tasks_superclue.compare.comparison_file import GRADES
from clue_tasks_superclue.compare.runs import Question, Run
from clue_tasks_superclue.compare.tables import csv_rows, read_text

ACCEPTABLE = GRADES[:3]
HUMAN = "人工评级"
COLUMNS = ("run", "model", "id", "dimension", "question", "answer", "judge_grade", "judge_reasons", HUMAN)
REQUIRED = ("model", "id", HUMAN)
#: What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection"); a quote is the escape itself.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralised(cell: str) -> str:
    """``cell`` as a spreadsheet shows it as text: behind a ``'`` where it would start a formula."""
    return f"'{cell}" if cell.startswith((*FORMULA_STARTS, "'")) else cell


def read_back(cell: str) -> str:
    """A cell as written before :func:`neutralised`: one leading quote taken off."""
    return cell[1:] if cell.startswith("'") else cell


def sample(runs: Sequence[Run], dimensions: Sequence[str], size: int, seed: int) -> list[tuple[Run, Question]]:
    """Up to ``size`` parsed judge-method judgments, balanced over ``dimensions``, chosen with ``seed``."""
    rng = random.Random(seed)
    pools = []
    for dimension in dimensions:
        pool = [(run, q) for run in runs for q in run.questions.values()
                if q.dimension == dimension and q.judge_graded]
        rng.shuffle(pool)
        pools.append(pool)
    chosen: list[tuple[Run, Question]] = []
    depth = 0
    while len(chosen) < size and any(depth < len(pool) for pool in pools):
        for pool in pools:
            if depth < len(pool) and len(chosen) < size:
                chosen.append(pool[depth])
        depth += 1
    return chosen


#: The sheet's encoding: UTF-8 with a byte-order mark, so that Excel shows the Chinese text.
ENCODING = "utf-8-sig"


def write_sheet(handle: IO[str], rows: Sequence[tuple[Run, Question]]) -> None:
    """The sheet's rows into ``handle``, a text file opened with :data:`ENCODING` (the caller makes it
    atomic, together with comparison.json: neither is left without the other)."""
    writer = csv.writer(handle, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for run, q in rows:
        grade = "" if q.grade is None else str(q.grade)
        writer.writerow([neutralised(str(cell)) for cell in (str(run.path), run.model, q.id, q.dimension, q.question,
                                                         q.answer, grade, q.reasons, "")])


def _row(path: Path, line: int, row: list[str], column: dict[str, int],
         by_model: dict[str, Run]) -> tuple[str, str, str, Question]:
    """One data row checked: its model, id, human grade (maybe empty) and the question it grades."""

    def fail(name: str, message: str) -> ClueError:
        return ClueError(f"{path}:{line}: column {column[name] + 1} ({name}): {message}")

    model, qid, grade = (read_back(row[column[name]].strip()) for name in ("model", "id", HUMAN))
    if model not in by_model:
        raise fail("model", f"{model!r} is not one of the compared models ({', '.join(by_model)})")
    question = by_model[model].questions.get(qid)
    if question is None:
        raise fail("id", f"no question {qid!r} in the run of {model}")
    if not question.judge_graded:
        raise fail("id", f"question {qid!r} of {model} has no parsed judge grade to agree with")
    if grade and grade not in GRADES:
        raise fail(HUMAN, f"{grade!r} is not one of {', '.join(GRADES)}")
    return model, qid, grade, question


def _figures(rated: Sequence[tuple[Any, str]], seed: int) -> dict[str, Any]:
    """The share graded 及格 or better and the judge-against-person figures of some graded rows."""
    share = 100 * sum(grade in ACCEPTABLE for _, grade in rated) / len(rated)
    return {"acceptable_share": round(share, 2), **agreement.sheet_agreement(rated, seed=seed)}


def read_sheet(path: Path, runs: Sequence[Run], seed: int = 0) -> tuple[dict[str, Any], list[str]]:
    """``judge_agreement`` for comparison.json from a filled sheet, and warnings; strict about everything else.

    ``seed`` (compare's ``--seed``) seeds the bootstrap intervals: the same sheet and seed give the same file.
    """
    by_model = {run.model: run for run in runs}
    header: list[str] | None = None
    counts = dict.fromkeys(GRADES, 0)
    seen: dict[tuple[str, str], int] = {}
    warnings: list[str] = []
    ungraded = 0
    rated: list[tuple[Any, str]] = []   # (the run's judge grade, the person's band), in the sheet's order
    by_run: dict[str, list[tuple[Any, str]]] = {}
    for start, row in csv_rows(path, read_text(path, "save the sheet as 'CSV UTF-8'")):
        if header is None:
            header = [cell.strip() for cell in row]
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise ClueError(f"{path}:{start}: the header has no column {missing[0]!r} "
                                f"(expected the columns {', '.join(COLUMNS)})")
            twice = next((c for c in header if c and header.count(c) > 1), None)
            if twice:
                raise ClueError(f"{path}:{start}: the header names column {twice!r} twice")
            column = {name: header.index(name) for name in header}
            continue
        if len(row) != len(header):
            raise ClueError(f"{path}:{start}: {len(row)} columns, the header has {len(header)}")

        model, qid, grade, question = _row(path, start, row, column, by_model)
        if (model, qid) in seen:
            raise ClueError(f"{path}:{start}: column {column['id'] + 1} (id): {model} {qid} is already on line "
                            f"{seen[model, qid]}")
        seen[model, qid] = start
        sheet_grade = read_back(row[column["judge_grade"]].strip()) if "judge_grade" in column else ""
        if sheet_grade and sheet_grade != str(question.grade):
            warnings.append(f"{path}:{start}: the sheet's judge grade {sheet_grade} is not the run's "
                            f"{question.grade} (was the run judged again after the sheet was exported?)")
        if not grade:
            ungraded += 1
            continue
        counts[grade] += 1
        rated.append((question.grade, grade))
        by_run.setdefault(model, []).append(rated[-1])
    graded = sum(counts.values())
    if header is None:
        raise ClueError(f"{path}: empty (expected the header {','.join(COLUMNS)})")
    if not graded:
        raise ClueError(f"{path}: no row has a {HUMAN} ({', '.join(GRADES)})")
    if ungraded:
        warnings.append(f"{path}: {ungraded} row(s) without a {HUMAN}, left out")
    per_model = {run.model: {"graded": len(by_run[run.model]), **_figures(by_run[run.model], seed)}
                 for run in runs if run.model in by_run}
    return {"file": str(path), "graded": graded, "ungraded": ungraded, "by_grade": counts,
            **_figures(rated, seed), "by_model": per_model}, warnings
