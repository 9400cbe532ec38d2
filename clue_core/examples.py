"""The example kinds and :class:`Prediction`: the contract between task and model plugins.

A task turns its official files into examples of exactly one kind; a model declares the
kinds it can learn. Everything task-specific (CLUEWSC span marking, CSL keyword joining,
CHID per-blank windows) happens in the task, so a model never needs to know which task
it is looking at. All kinds are frozen so that a reader's output cannot be mutated by a
model by accident.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from clue_core.kinds import CLASSIFICATION, KINDS, MULTIPLE_CHOICE, SPAN

__all__ = ["CLASSIFICATION", "KINDS", "MULTIPLE_CHOICE", "SPAN"]  # re-exported for plugins

#: An id as the official file has it (``int`` for CLUEWSC test, ``str`` for CMRC), or the
#: 0-based line index where the file has none (AFQMC train/dev). Submissions echo it as is.
ExampleId = str | int


@dataclass(frozen=True)
class ClassificationExample:
    """A single text or a text pair with a label *string* from the task's label list."""

    id: ExampleId
    text: str
    text_pair: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class SpanExample:
    """A SQuAD-style question; ``answers`` holds ``(text, start)`` pairs, None on test."""

    id: ExampleId
    context: str
    question: str
    answers: tuple[tuple[str, int], ...] | None = None
    title: str = ""


@dataclass(frozen=True)
class MultipleChoiceExample:
    """A question with a variable number of choices; ``label`` is the answer's index.

    ``group`` ties examples that must be decoded together (the blanks of one CHID line).
    """

    id: ExampleId
    context: str
    question: str
    choices: tuple[str, ...]
    label: int | None = None
    group: str | None = None


Example = ClassificationExample | SpanExample | MultipleChoiceExample

KIND_OF = {
    ClassificationExample: CLASSIFICATION,
    SpanExample: SPAN,
    MultipleChoiceExample: MULTIPLE_CHOICE,
}


def kind_of(example: Example) -> str:
    """The kind name of an example instance."""
    return KIND_OF[type(example)]


def gold_of(example: Example) -> object | None:
    """The gold value of an example: label string, choice index or the answers tuple."""
    if isinstance(example, SpanExample):
        return example.answers
    return example.label


@dataclass(frozen=True)
class Prediction:
    """A model's answer for one example.

    ``value`` is a label string (classification), an answer text (span) or a choice
    index (multiple choice). ``scores`` are optional per-label / per-choice scores that a
    task's decode step may use (CHID's joint assignment).
    """

    id: ExampleId
    value: str | int
    scores: tuple[float, ...] | None = None


@dataclass(frozen=True)
class SplitData:
    """What a task reader returns for one split.

    ``notes`` are human-readable remarks the runner prints and records in the manifest,
    e.g. how many OCNLI lines with the no-majority label ``"-"`` were dropped.
    ``files`` lists the data files the reader opened, for the manifest's checksums.
    """

    examples: tuple[Example, ...]
    notes: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    label_descriptions: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.examples)


def as_split_data(result: SplitData | Sequence[Example]) -> SplitData:
    """Accept a plain sequence of examples from simple readers."""
    if isinstance(result, SplitData):
        return result
    return SplitData(examples=tuple(result))
