"""How a language model's answer becomes CLUENER2020 entity spans (the task's ``Prompt.parse`` and ``answer``).

The prompt (``hooks.PROMPT``) asks for one JSON object: each entity type's English name → the list
of that type's entities, written exactly as they appear in the sentence (``{}`` when there are
none). A model plugin knows nothing of this shape: it hands the answer text to :func:`parse`
(``"clue_tasks_ner.prompting:parse"``) and records the value.

Reading the answer:

* the JSON object is the text from the first ``{`` to the last ``}`` (words around it, a
  ``答案：`` the model repeats, are ignored); no object there, JSON that does not parse, or JSON
  that is no object is **malformed**: predicted as no entities and counted by the model (its
  ``malformed`` total);
* a key is a type's English name, the misspelling ``goverment`` or the type's Chinese name
  (``姓名``); any other key is ignored, as is a value that is neither a string nor a list
  (a string is one entity; a list's non-strings are ignored);
* each entity is **located at every occurrence** in the text, left to right and not
  overlapping itself. The official files mostly list every position of an entity string under
  its type (``{"爱情公寓": [[16, 19], [38, 41]]}``), though not always (``雪山`` twice in a dev line,
  labelled once). Measured on the bundled sample with the gold strings as the answers, every
  occurrence scores an offset-exact micro F1 of 97.06 on dev (33 spans right, 2 extra, 0 missed)
  and 97.26 on train, the first occurrence only 95.38 and 97.14 (it misses the repeated ones); the
  official ``score.py`` compares strings, so its ``macro_f1`` is the same either way. An entity
  that is not in the text cannot be a span and is left out; a string given twice counts once.

The spans come back as ``(type, start, end)`` with ``end`` exclusive, sorted by ``(start, end,
type)``, the kind's contract (:mod:`clue_tasks_ner.examples`).
"""

from __future__ import annotations

import json
from typing import Any

from clue_tasks_ner.examples import EntitySpansExample, Span
from clue_tasks_ner.labels import ALIASES, TYPES

#: The types' Chinese names, as the prompt names them (hooks.TYPE_NAMES), read back as their type.
_CHINESE = {"地址": "address", "书名": "book", "公司": "company", "游戏": "game", "政府": "government",
            "电影": "movie", "姓名": "name", "组织机构": "organization", "职位": "position", "景点": "scene"}


def _type(key: Any) -> str | None:
    if not isinstance(key, str):
        return None
    key = key.strip()
    if key in TYPES:
        return key
    return ALIASES.get(key.lower(), _CHINESE.get(key, key.lower() if key.lower() in TYPES else None))


def _entities(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str) and item.strip()]


def occurrences(text: str, entity: str) -> list[tuple[int, int]]:
    """Every ``[start, end)`` of ``entity`` in ``text``, left to right, not overlapping each other."""
    found, start = [], text.find(entity)
    while start != -1:
        found.append((start, start + len(entity)))
        start = text.find(entity, start + len(entity))
    return found


def parse(answer: str, example: EntitySpansExample) -> tuple[tuple[Span, ...], str | None]:
    """``(spans, problem)``: the answer's entities at every occurrence in the text; ``problem`` for malformed."""
    first, last = answer.find("{"), answer.rfind("}")
    if first == -1 or last < first:
        return (), f"no JSON object in the answer {answer[:80]!r}"
    try:
        data = json.loads(answer[first:last + 1])
    except ValueError as exc:
        return (), f"the answer's JSON does not parse ({exc})"
    if not isinstance(data, dict):
        return (), f"the answer's JSON is a {type(data).__name__}, not an object of type -> entities"
    spans: set[Span] = set()
    for key, value in data.items():
        kind = _type(key)
        if kind is None:
            continue
        for entity in _entities(value):
            spans.update((kind, start, end) for start, end in occurrences(example.text, entity))
    return tuple(sorted(spans, key=lambda span: (span[1], span[2], span[0]))), None


def answer(example: EntitySpansExample) -> str:
    """The gold as the prompt asks a model to write it (few-shot demos): types in order, each text once."""
    by_type: dict[str, list[str]] = {}
    for kind, start, end in example.entities or ():
        texts = by_type.setdefault(kind, [])
        if example.text[start:end] not in texts:
            texts.append(example.text[start:end])
    return json.dumps({kind: by_type[kind] for kind in TYPES if kind in by_type}, ensure_ascii=False)
