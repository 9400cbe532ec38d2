"""KgCLUE's knowledge base (``Knowledge.txt``) and each question's candidate triples.

The file is distributed apart from the data (Baidu pan / Google Drive; 20,559,652 triples, 3,121,457
entities per KgCLUE's README): one triple a line, ``head \\t relation \\t tail``, the head possibly
ending in a disambiguation in full-width parentheses (``春秋战国（中国历史时期）``). It is read as the
only reader in the KgCLUE repositories reads it (``baselines/other_implement/RoBERTa-wwm-ext/kg/es.py``):
fields split on tabs, the entity name is the head before ``（`` when the head is ``name（disambiguation）``
(exactly one ``（`` and a final ``）``), else the whole head; relation the second field, value the third
stripped. A line with fewer than three fields is an error naming its line (es.py crashes there too);
blank lines are skipped.

Which entity a question is about: **the longest entity name that occurs in the question** (plain
substring, case-sensitive), the earliest occurrence breaking a tie between names of one length. Its
candidates are all triples whose head has that name (every disambiguation of it), in file order. This
is a string lookup, not the baseline's NER model: a question naming a longer entity than the one asked
about gets that entity's triples (the official questions contain the gold entity's name in 17,977 of
18,000 train, 1,998 of 2,000 dev and all 2,000 test_public lines).

Only the triples of names that occur in the split's questions are kept, so the real file is streamed
once per split read, never held whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from clue_core.plugin import DataError, InputError
from clue_tasks_kgclue.triples import Triple


def entity_name(head: str) -> str:
    """The entity a KB head names: ``刘晓华（广东工业大学教授）`` → ``刘晓华`` (es.py's rule)."""
    pieces = head.split("（")
    return pieces[0] if len(pieces) == 2 and head.endswith("）") else head


def _substrings(text: str) -> set[str]:
    return {text[i:j] for i in range(len(text)) for j in range(i + 1, len(text) + 1)}


def read_knowledge(path: Path, wanted: set[str]) -> dict[str, list[Triple]]:
    """``{entity name: [triples]}`` of the file's triples whose entity name is in ``wanted``."""
    found: dict[str, list[Triple]] = {}
    line = 0
    try:
        with Path(path).open(encoding="utf-8-sig") as handle:
            for line, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                fields = text.rstrip("\r\n").split("\t")
                if len(fields) < 3:
                    raise InputError(path, f"expected 'head<TAB>relation<TAB>tail', got {len(fields)} field(s)",
                                     line=line)
                name = entity_name(fields[0])
                if name in wanted:
                    found.setdefault(name, []).append((fields[0], fields[1], fields[2].strip()))
    except FileNotFoundError:
        raise DataError(f"{path}: no such knowledge file (setting kb)") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason})", line=_undecodable_line(path)) from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read the knowledge file ({exc.strerror})") from None
    return found


def _undecodable_line(path: Path) -> int:
    """The first line (from 1) of ``path`` that is not UTF-8. The text reader decodes chunks ahead of the
    lines it yields, so where its error came tells nothing of the line; decoding every line as bytes
    finds it, and costs a second pass only for a file that is refused anyway (the 20-million-line file
    stays read at the text reader's speed)."""
    line = 0
    with Path(path).open("rb") as handle:
        for line, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8-sig" if line == 1 else "utf-8")
            except UnicodeDecodeError:
                return line
    return line


def question_entity(question: str, names: Iterable[str]) -> str | None:
    """The longest of ``names`` occurring in ``question`` (earliest first among equals), or None."""
    best: tuple[int, int, str] | None = None
    for name in names:
        at = question.find(name) if name else -1
        if at >= 0 and (best is None or (-len(name), at) < best[:2]):
            best = (-len(name), at, name)
    return None if best is None else best[2]


def candidates_for(path: Path, questions: Sequence[str]) -> list[tuple[Triple, ...]]:
    """Each question's candidate triples from the knowledge file at ``path`` (see the module docstring)."""
    wanted: set[str] = set()
    per_question = [_substrings(question) for question in questions]
    for names in per_question:
        wanted |= names
    known = read_knowledge(path, wanted)
    result = []
    for question, names in zip(questions, per_question):
        entity = question_entity(question, [name for name in names if name in known])
        result.append(tuple(known[entity]) if entity is not None else ())
    return result
