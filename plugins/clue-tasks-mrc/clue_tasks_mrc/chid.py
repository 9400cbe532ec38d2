"""CHID: idiom cloze. Reader (one multiple-choice example per blank) and joint decoding.

A line of ``{split}.json`` is ``{"candidates": [10 idioms], "content": [passages]}``;
each passage holds one or more blanks ``#idiomNNNNNN#``. Gold answers live in
``{split}_answer.json`` (``{"#idiom577157#": 5}``); test files have none.

Per blank we build one example: the id is the blank tag (what the submission file is
keyed by), the context is a window of :data:`WINDOW` characters each side of the blank
with the blank written as :data:`BLANK` and the passage's other blanks as
:data:`OTHER_BLANK`, the question is empty, the choices are the line's candidates, and
``group`` names the line (``"dev-17"``, 0-based line index) so that the decode step can
assign candidates to the blanks of a line jointly: within a line every blank takes a
different candidate.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    ClueError,
    InputError,
    MultipleChoiceExample,
    Prediction,
    SplitData,
    TaskSpec,
    field,
    find_file,
    iter_jsonl,
    read_json,
)

TAG = re.compile(r"#idiom\d{6}#")
#: How the blank being asked about is written in its context (an idiom has 4 characters).
BLANK = "____"
#: How the passage's other blanks are written: one mark per idiom character, so a window
#: that cuts it still leaves only marks (a tokenizer-specific "[MASK]" would leave "[MA").
OTHER_BLANK = "□□□□"
#: Characters of context kept on each side of the blank: with the 4-character blank and a
#: 4-character candidate this fits the recommended 64-token length.
WINDOW = 24


def blank_window(passage: str, start: int, end: int, window: int = WINDOW) -> str:
    """The text around ``passage[start:end]`` with that blank as BLANK, other blanks masked."""
    left = TAG.sub(OTHER_BLANK, passage[:start])
    right = TAG.sub(OTHER_BLANK, passage[end:])
    return left[-window:] + BLANK + right[:window] if window else left + BLANK + right


def read(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """Reader of the chid task: ``{split}.json``, with ``{split}_answer.json`` for train and dev.

    Answer indices are checked against the candidates by clue-core (multiple-choice labels
    in range); this reader finds each blank's answer and keeps the line's structure.
    """
    path = find_file(Path(data_dir), f"{split}.json")
    files = [str(path)]
    answers: dict[str, int] | None = None
    answer_path: Path | None = None
    if split in task.splits:
        answer_path = find_file(Path(data_dir), f"{split}_answer.json")
        answers = _read_answers(answer_path)
        files.append(str(answer_path))
    examples: list[MultipleChoiceExample] = []
    where: list[str] = []
    seen: set[str] = set()
    for line_number, record in iter_jsonl(path):
        candidates = field(record, "candidates", list, path=path, line=line_number)
        if not candidates or not all(isinstance(c, str) for c in candidates):
            raise InputError(path, "expected a non-empty list of strings", line=line_number, field="candidates")
        content = field(record, "content", list, path=path, line=line_number)
        group = f"{split}-{line_number - 1}"
        blanks = 0
        for passage in content:
            if not isinstance(passage, str):
                raise InputError(
                    path, f"expected strings, got {type(passage).__name__}", line=line_number, field="content"
                )
            for match in TAG.finditer(passage):
                tag = match.group()
                blanks += 1
                label = None
                if answers is not None:
                    # answers are keyed by tag: a tag twice in one file has no answer of its own
                    # (test files: clue-core refuses duplicate ids itself)
                    if tag in seen:
                        raise InputError(path, f"blank {tag} occurs twice", line=line_number, field="content")
                    seen.add(tag)
                    if tag not in answers:
                        raise InputError(
                            answer_path or path,
                            f"no answer for blank {tag} (line {line_number} of {path.name})",
                            record=tag,
                        )
                    label = answers[tag]
                context = blank_window(passage, match.start(), match.end())
                examples.append(
                    MultipleChoiceExample(
                        id=tag, context=context, question="", choices=tuple(candidates), label=label, group=group
                    )
                )
                where.append(f"{path}:{line_number}")
        if blanks > len(candidates):
            raise InputError(
                path, f"{blanks} blanks but only {len(candidates)} candidates", line=line_number, field="content"
            )
    return SplitData(examples=tuple(examples), files=tuple(files), where=tuple(where))


def _read_answers(path: Path) -> dict[str, int]:
    document = read_json(path)
    if not isinstance(document, dict):
        raise InputError(path, f"expected one JSON object {{tag: index}}, got {type(document).__name__}")
    for tag, index in document.items():
        if isinstance(index, bool) or not isinstance(index, int):
            raise InputError(path, f"expected an integer index, got {type(index).__name__}", record=tag)
    return document


# --- decoding ---------------------------------------------------------------------------------


def _log_softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    total = math.log(sum(math.exp(s - top) for s in scores)) + top
    return [s - total for s in scores]


def _groups(examples: Sequence[MultipleChoiceExample]) -> dict[Any, list[int]]:
    groups: dict[Any, list[int]] = {}
    for index, example in enumerate(examples):
        key = example.group if example.group is not None else ("__alone__", index)
        groups.setdefault(key, []).append(index)
    return groups


def _decode(
    examples: Sequence[MultipleChoiceExample], predictions: Sequence[Prediction | None], assign: Any
) -> list[Prediction]:
    by_id = {p.id: p for p in predictions if p is not None}
    aligned: list[Prediction | None] = [by_id.get(example.id) for example in examples]
    result = list(aligned)
    for members in _groups(examples).values():
        found = [aligned[i] for i in members]
        if any(p is None or not p.scores for p in found):
            continue  # without a score for every choice of every blank there is nothing to weigh
        n_choices = len(examples[members[0]].choices)
        if any(len(examples[i].choices) != n_choices or len(aligned[i].scores) < n_choices for i in members):
            continue
        table = [_log_softmax(list(aligned[i].scores)[:n_choices]) for i in members]
        if len(members) > n_choices:
            continue
        for i, choice in zip(members, assign(table)):
            result[i] = dataclasses.replace(aligned[i], value=choice)  # keeps scores and what the model said
    return [prediction for prediction in result if prediction is not None]


def assign_exact(table: Sequence[Sequence[float]]) -> list[int]:
    """Distinct choices for the blanks maximising the summed log-probabilities.

    Dynamic programme over (blank, set of used choices), at most 10 * 2**10 states for
    CHID's 10 candidates; ties go to the lexicographically smallest choice list so the
    result is deterministic. NaN scores count as ``-inf``.

    Computed backwards without recursion: ``rest[b][used]`` is the best total of blanks
    ``b..`` given the choices in ``used``, kept as a flat list indexed by the bit mask;
    the answer is then read forwards, taking at every blank the smallest choice whose
    score plus the best rest equals the optimum. This is the same arithmetic as the
    memoised recursion, so the same answer, without a call and a tuple per transition
    (about ten times faster on CHID-sized lines).
    """
    n_blanks = len(table)
    if n_blanks == 0:
        return []
    n_choices = len(table[0])
    rows = [[NEG_INF if value != value else value for value in row] for row in table]
    free = _free_choices(n_choices)
    by_count = _masks_by_count(n_choices)
    rest: list[list[float]] = [[]] * n_blanks + [[0.0] * (1 << n_choices)]
    for blank in range(n_blanks - 1, -1, -1):
        row, later = rows[blank], rest[blank + 1]
        here = [NEG_INF] * (1 << n_choices)
        for used in by_count[blank]:
            top = NEG_INF
            for choice, after in free[used]:
                total = row[choice] + later[after]
                if total > top:
                    top = total
            here[used] = top
        rest[blank] = here
    chosen: list[int] = []
    used = 0
    for blank in range(n_blanks):
        row, later, target = rows[blank], rest[blank + 1], rest[blank][used]
        for choice, after in free[used]:
            if row[choice] + later[after] == target:
                chosen.append(choice)
                used = after
                break
    return chosen


NEG_INF = float("-inf")


@functools.cache
def _free_choices(n_choices: int) -> list[list[tuple[int, int]]]:
    """For every set of used choices (bit mask): each free choice with the set it leaves, ascending."""
    return [[(c, used | 1 << c) for c in range(n_choices) if not used >> c & 1] for used in range(1 << n_choices)]


@functools.cache
def _masks_by_count(n_choices: int) -> list[list[int]]:
    """Bit masks over ``n_choices`` grouped by how many bits they set."""
    groups: list[list[int]] = [[] for _ in range(n_choices + 1)]
    for used in range(1 << n_choices):
        groups[used.bit_count()].append(used)
    return groups


def assign_greedy(table: Sequence[Sequence[float]]) -> list[int]:
    """The CLUE baselines' assignment: repeatedly fix the most probable (blank, choice) pair."""
    pairs = sorted(
        ((score, blank, choice) for blank, row in enumerate(table) for choice, score in enumerate(row)),
        key=lambda item: (-item[0], item[1], item[2]),
    )
    chosen: dict[int, int] = {}
    used: set[int] = set()
    for _score, blank, choice in pairs:
        if blank in chosen or choice in used:
            continue
        chosen[blank] = choice
        used.add(choice)
    return [chosen[blank] for blank in range(len(table))]


def decode_exact(
    examples: Sequence[MultipleChoiceExample], predictions: Sequence[Prediction | None]
) -> list[Prediction]:
    """Joint exact assignment of candidates to the blanks of each line (the default)."""
    return _decode(examples, predictions, assign_exact)


def decode_greedy(
    examples: Sequence[MultipleChoiceExample], predictions: Sequence[Prediction | None]
) -> list[Prediction]:
    """Joint greedy highest-first assignment, as the CLUE baselines decode."""
    return _decode(examples, predictions, assign_greedy)


DECODERS = {"exact": decode_exact, "greedy": decode_greedy}


def decode(
    examples: Sequence[MultipleChoiceExample],
    predictions: Sequence[Prediction | None],
    settings: Mapping[str, Any] | None = None,
) -> list[Prediction]:
    """The task's decode step: ``settings["chid_decode"]`` picks "exact" (default) or "greedy".

    clue-core passes the declared decode setting (already checked against its choices).
    Predictions come back in example order, matched by id (a blank without a prediction
    gets none). A line is left as predicted when a blank lacks per-choice ``scores``.
    """
    method = (settings or {}).get("chid_decode", "exact")
    if method not in DECODERS:
        raise ClueError(f"setting 'chid_decode': expected one of {', '.join(map(repr, DECODERS))}, got {method!r}")
    return DECODERS[method](examples, predictions)
