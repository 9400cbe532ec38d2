"""Entity spans ↔ token labels, for the two NER heads; pure Python, cheap to import.

The kind ``entity_spans`` is declared by a task plugin (CLUENER2020's); this plugin knows it by
name only and reads the example's ``text`` and ``entities`` fields: ``(type, start, end)`` with
``end`` exclusive, ``text[start:end]`` the entity.

Tokens are tied to characters by the tokenizer's offsets (``offset_mapping`` of a fast tokenizer:
``(start, end)`` character range of each token, in the Python string's code points, so an emoji
is one character as it is in the gold). A character the tokenizer drops (spaces, zero-width and
control characters) belongs to no token; a word piece over several characters (``york``) covers
them all. Decoding therefore turns a run of tokens back into the characters from the first
token's start to the last token's end: an entity ``New York`` over the tokens ``new`` (0, 3) and
``york`` (4, 8) comes back as (0, 8), the dropped space inside it included. A gold span whose
boundary falls *inside* a token (an entity starting in the middle of a word piece) cannot be said
in token labels: it is trained on the tokens it overlaps and counted (``Encoded.unaligned``).

Two heads, chosen by the model setting ``ner_head``:

* ``bio``: one label per token, ``O``, ``B-<type>`` or ``I-<type>`` (types in the task's order).
  **An I- tag that does not continue an entity of its type** (after ``O``, at the start of a
  text or window, or after an entity of another type) **starts a new entity**, as conlleval and
  seqeval's default mode read it: the model said "inside an entity of this type", which is
  closer to its meaning than dropping the token.
* ``span``: CLUENER2020's BERT+Span baseline: per token a start label and an end label, each ``O``
  (0) or a type (1 … T); an entity is a start of type t and the first end of type t at or after
  it (the baseline's ``bert_extract_item``), so spans may overlap; identical ones are kept once.
"""

from __future__ import annotations

from collections.abc import Sequence

#: The kind's name, as the task plugin that declares it spells it (the contract; never imported).
ENTITY_SPANS = "entity_spans"
BIO, SPAN_HEAD = "bio", "span"
HEADS = (BIO, SPAN_HEAD)
#: Label of a position no loss is computed on (special tokens): PyTorch's cross-entropy default.
IGNORE = -100

Span = tuple[str, int, int]
#: One token's character range, or None for a token that is no part of the text ([CLS], [SEP]).
Offset = tuple[int, int] | None


def bio_labels(types: Sequence[str]) -> list[str]:
    """``O``, then ``B-t``, ``I-t`` for each type in order: the BIO head's label names."""
    return ["O", *(f"{prefix}-{t}" for t in types for prefix in ("B", "I"))]


def span_labels(types: Sequence[str]) -> list[str]:
    """The span head's outputs: start ``O``/types, then end ``O``/types (one linear layer, split in two)."""
    return [f"{side}-{t}" for side in ("start", "end") for t in ("O", *types)]


def head_labels(head: str, types: Sequence[str]) -> list[str]:
    return bio_labels(types) if head == BIO else span_labels(types)


class Encoded:
    """Token labels of one window and what could not be said in them."""

    __slots__ = ("ends", "overlapping", "placed", "starts", "tags", "unaligned")

    def __init__(self, size: int) -> None:
        self.tags: list[int] = [IGNORE] * size
        self.starts: list[int] = [IGNORE] * size
        self.ends: list[int] = [IGNORE] * size
        #: gold spans with a token in this window
        self.placed: set[Span] = set()
        #: gold spans whose start or end falls inside a token (trained on the tokens they overlap)
        self.unaligned: set[Span] = set()
        #: gold spans overlapping an earlier one (BIO cannot say both: the first is kept; the span
        #: head says both where they share no start token and no end token)
        self.overlapping: set[Span] = set()


def _covered(offsets: Sequence[Offset], start: int, end: int) -> list[int]:
    return [t for t, o in enumerate(offsets) if o is not None and o[0] < end and o[1] > start and o[1] > o[0]]


def encode(offsets: Sequence[Offset], spans: Sequence[Span], types: Sequence[str]) -> Encoded:
    """BIO tags and span-head start/end labels of one window's tokens for the gold ``spans``.

    Text tokens get ``O`` (0) unless a span covers them; special tokens (offset None) get
    :data:`IGNORE`. A span only partly inside the window (cut at its edge) labels the tokens
    it has there: ``I-`` where its first token lies before the window, no start label then, no
    end label where its last token lies after it. Of overlapping spans (CLUENER2020 has a few
    nested ones) the BIO tags say the first in (start, end, type) order; the span head's labels
    say each one whose start and end tokens no earlier span has taken.
    """
    index = {t: i for i, t in enumerate(types)}
    out = Encoded(len(offsets))
    for t, o in enumerate(offsets):
        if o is not None:
            out.tags[t] = out.starts[t] = out.ends[t] = 0
    texts = [o for o in offsets if o is not None and o[1] > o[0]]
    first_char = texts[0][0] if texts else 0
    last_char = texts[-1][1] if texts else 0
    taken: set[int] = set()
    for span in sorted(spans, key=lambda s: (s[1], s[2], s[0])):
        kind, start, end = span
        tokens = _covered(offsets, start, end)
        if not tokens:
            continue
        out.placed.add(span)
        head, tail = offsets[tokens[0]], offsets[tokens[-1]]
        assert head is not None and tail is not None
        if (head[0] != start and start >= first_char) or (tail[1] != end and end <= last_char):
            out.unaligned.add(span)
        label = index[kind]
        begins_here, ends_here = start >= first_char, end <= last_char
        # the span head says an overlapping span too, where its start and end tokens are free
        if (not begins_here or out.starts[tokens[0]] == 0) and (not ends_here or out.ends[tokens[-1]] == 0):
            if begins_here:
                out.starts[tokens[0]] = label + 1
            if ends_here:
                out.ends[tokens[-1]] = label + 1
        if taken.intersection(tokens):
            out.overlapping.add(span)
            continue
        taken.update(tokens)
        for position, token in enumerate(tokens):
            out.tags[token] = 1 + 2 * label + (0 if position == 0 and begins_here else 1)
    return out


def _chars(offsets: Sequence[Offset], first: int, last: int) -> tuple[int, int]:
    return offsets[first][0], offsets[last][1]  # type: ignore[index]


def decode_bio(tags: Sequence[int], offsets: Sequence[Offset], types: Sequence[str]) -> list[Span]:
    """Entity spans (characters, end exclusive) of one window's BIO tag ids; see the module doc for I-."""
    spans: list[Span] = []
    current: tuple[int, int, int] | None = None  # (type index, first token, last token)
    for token, (tag, offset) in enumerate(zip(tags, offsets)):
        if offset is None or offset[1] <= offset[0]:
            continue
        tag = int(tag)
        kind, inside = (tag - 1) // 2, (tag - 1) % 2 == 1
        if tag <= 0 or tag > 2 * len(types):
            kind = -1
        if current is not None and (kind != current[0] or not inside):
            spans.append((types[current[0]], *_chars(offsets, current[1], current[2])))
            current = None
        if kind < 0:
            continue
        current = (kind, token, token) if current is None else (kind, current[1], token)
    if current is not None:
        spans.append((types[current[0]], *_chars(offsets, current[1], current[2])))
    return spans


def decode_span_head(starts: Sequence[int], ends: Sequence[int], offsets: Sequence[Offset],
                     types: Sequence[str]) -> list[Span]:
    """Entity spans of one window's start/end label ids: each start with the first end of its type."""
    text = [t for t, o in enumerate(offsets) if o is not None and o[1] > o[0]]
    found: list[Span] = []
    for position, token in enumerate(text):
        kind = int(starts[token])
        if not 0 < kind <= len(types):
            continue
        last = next((t for t in text[position:] if int(ends[t]) == kind), None)
        if last is not None:
            span = (types[kind - 1], *_chars(offsets, token, last))
            if span not in found:
                found.append(span)
    return found


def merge_windows(windows: Sequence[tuple[Sequence[Offset], Sequence[Sequence[int]]]]
                  ) -> tuple[list[Offset], list[list[int]]]:
    """One text's token labels from its overlapping windows, to be decoded once.

    ``windows``: per window, its offsets and its label rows (BIO: ``(tags,)``; span head:
    ``(starts, ends)``). A token in two windows (the ``ner_stride`` overlap: the tokenizer cuts the
    text into the same tokens in both, with the same offsets) takes its labels from the window
    where it has the most context on its nearer side (BERT's "max context" rule; ties: the earlier
    window): a window sees a token at its cut edge without what follows it. An entity in the
    overlap is thus found once, and one longer than the overlap, which neither window holds whole,
    is decoded across the cut. Returns the text tokens' offsets in text order and the merged rows.
    """
    best: dict[tuple[int, int], tuple[int, list[int]]] = {}
    for offsets, rows in windows:
        text = [t for t, o in enumerate(offsets) if o is not None and o[1] > o[0]]
        for position, token in enumerate(text):
            context = min(position, len(text) - 1 - position)
            key = offsets[token]
            assert key is not None
            if key not in best or context > best[key][0]:
                best[key] = (context, [int(row[token]) for row in rows])
    order = sorted(best)
    size = len(windows[0][1]) if windows else 0
    return list(order), [[best[key][1][r] for key in order] for r in range(size)]
