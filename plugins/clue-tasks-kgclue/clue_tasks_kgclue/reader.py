"""The reader of KgCLUE's official files: ``train.json``, ``dev.json``, ``test_public.json``, ``test.json``.

JSON Lines, one question a line: ``id`` (an int, the line index in the official files), ``question``
and, except in ``test.json``, ``answer`` as ``"subject ||| predicate ||| object"``. Every official answer
splits into exactly three parts on ``' ||| '`` (a space, three pipes, a space); one that does not is
an error naming the file, line and field, since a gold answer the scorer cannot split can score
nothing. Parts are kept exactly as written, leading spaces and no-break spaces (U+00A0, test_public
ids 350 and 1068) included: the metric normalises them as the official script does, so gold and
prediction go through one normalisation. ``test.json`` (which has no trailing newline) is never
scored: an answer there is ignored.

With the task setting ``kb`` (a ``Knowledge.txt``), each example gets its question's candidate triples
(:mod:`clue_tasks_kgclue.knowledge`) and the knowledge file joins the split's ``files``, so its sha256
is in the run's manifest beside the data's and a run with another knowledge base is another run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clue_core.plugin import DataError, InputError, SplitData, TaskSpec, field, find_file, iter_jsonl
from clue_tasks_kgclue.knowledge import candidates_for
from clue_tasks_kgclue.triples import KbqaExample, Triple, split_answer, why_malformed

#: The reader setting naming the knowledge base.
KB_SETTING = "kb"


def knowledge_path(value: str, data_dir: Path) -> Path | None:
    """The knowledge file a ``kb`` value names, or None for an empty value.

    A relative path is taken from the current folder; where nothing is there, a plain file name is
    looked for in the task's data folder too (``--sample --set kb=Knowledge.txt`` uses the sample's
    own, ``--data-dir KgCLUE/ --set kb=Knowledge.txt`` finds ``knowledge/Knowledge.txt``).
    """
    if not value:
        return None
    path = Path(value).expanduser()
    if path.is_file():
        return path.resolve()
    if path.is_dir():
        raise DataError(f"{value}: a folder, not a knowledge file (setting {KB_SETTING}: a path to KgCLUE's "
                        "Knowledge.txt, or a file name found in the data folder)")
    if not path.is_absolute() and len(path.parts) == 1:
        found = find_file(Path(data_dir), path.name, required=False)
        if found is not None:
            return found.resolve()
    raise DataError(f"{value}: no such knowledge file (setting {KB_SETTING}: a path to KgCLUE's Knowledge.txt, "
                    "or a file name found in the data folder)")


def read_answer(record: dict[str, Any], path: Path, line: int) -> Triple:
    """The three parts of a line's ``answer``; one that does not split into three is one error line."""
    text = field(record, "answer", str, path=path, line=line)
    parts = split_answer(text)
    if parts is None:
        raise InputError(path, why_malformed(text), line=line, field="answer")
    return parts


def read(task: TaskSpec, data_dir: Path, split: str, settings: Mapping[str, Any] | None = None) -> SplitData:
    """Reader of the ``kgclue`` task: split ``NAME`` is the file ``NAME.json`` (see the module docstring)."""
    path = find_file(Path(data_dir), f"{split}.json")
    answered = split != "test"
    ids: list[int | str] = []
    questions: list[str] = []
    answers: list[Triple | None] = []
    where: list[str] = []
    for line, record in iter_jsonl(path):
        ids.append(field(record, "id", (int, str), path=path, line=line))
        questions.append(field(record, "question", str, path=path, line=line))
        answers.append(read_answer(record, path, line) if answered else None)
        where.append(f"{path}:{line}")
    files = [str(path)]
    kb = knowledge_path(str((settings or {}).get(KB_SETTING) or ""), Path(data_dir))
    if kb is None:
        candidates: list[tuple[Triple, ...]] = [()] * len(questions)
    else:
        candidates = candidates_for(kb, questions)
        files.append(str(kb))
    examples = tuple(KbqaExample(id=i, question=q, answer=a, candidates=c)
                     for i, q, a, c in zip(ids, questions, answers, candidates))
    notes: tuple[str, ...] = ()
    if kb is not None:
        found = sum(bool(c) for c in candidates)
        notes = (f"{path.name}: {found} of {len(examples)} question(s) with candidate triples from {kb.name}",)
    return SplitData(examples=examples, files=tuple(files), notes=notes, where=tuple(where))
