"""The example kinds, :class:`Prediction` and :class:`SplitData`: the contract between
task and model plugins.

A task turns its official files into examples of exactly one kind; a model declares the
kinds it can learn. Everything task-specific (CLUEWSC span marking, CSL keyword joining,
CHID per-blank windows) happens in the task, so a model never needs to know which task
it is looking at. All kinds are frozen so that a reader's output cannot be mutated by a
model by accident.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clue_core.kinds import CLASSIFICATION, MULTIPLE_CHOICE, OPEN_QUESTION, SPAN

#: An id as the official file has it (``int`` for CLUEWSC test, ``str`` for CMRC), or the
#: 0-based line index where the file has none (AFQMC train/dev). Submissions echo it as is.
ExampleId = str | int


@dataclass(frozen=True, slots=True)
class ClassificationExample:
    """A single text or a text pair with a label *string* from the task's label list."""

    id: ExampleId
    text: str
    text_pair: str | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class SpanExample:
    """A SQuAD-style question; ``answers`` holds ``(text, start)`` pairs, None on test.

    ``start`` is None for a gold answer that is not a verbatim substring of the context
    (the official CMRC2018 dev set has such answers): scored by text, never trained on.
    """

    id: ExampleId
    context: str
    question: str
    answers: tuple[tuple[str, int | None], ...] | None = None
    title: str = ""


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class OpenQuestionExample:
    """An open question, answered in free text and scored by a judge or by code.

    This is the open-question kind's contract for any task, not only SuperCLUE's:

    - ``dimension`` is the ability a question tests and ``category`` the broader group that
      dimension belongs to: the task's two levels of grouping, fine then coarse. SuperCLUE
      fills them with its own dimension and category names (its plugin holds that table);
      another task may use any labels, or ``""`` where it has no grouping. The kernel does nothing with
      them beyond letting a prompt template name them (``{dimension}``, ``{category}``):
      grouping scores by them is the business of the task's metric and report.
    - ``turns`` are the user's messages of a dialogue, answered one by one; the kernel checks
      that there is at least one and that none is blank.
    - ``reference`` is an optional reference answer (the example's gold, :func:`gold_of`),
      ``rubric`` what a judge looks for; ``constraints`` are verifiable instructions checked
      by code (``{"type": "max_chars", "value": 50}``); ``tools`` are chat tool definitions
      offered to the model, with the call it should make in ``expected_call``. The kernel
      passes these through untouched: their meaning is between the task's metric and the model.

    The field names are fixed (run records, golden outputs and plugins read them); a task with
    other grouping needs puts them in these two fields rather than renaming them.
    """

    id: ExampleId
    dimension: str
    category: str
    turns: tuple[str, ...]
    reference: str | None = None
    rubric: str | None = None
    constraints: tuple[Mapping[str, Any], ...] = ()
    tools: tuple[Mapping[str, Any], ...] = ()
    expected_call: Mapping[str, Any] | None = None


Example = ClassificationExample | SpanExample | MultipleChoiceExample | OpenQuestionExample

KIND_OF: dict[type, str] = {
    ClassificationExample: CLASSIFICATION,
    SpanExample: SPAN,
    MultipleChoiceExample: MULTIPLE_CHOICE,
    OpenQuestionExample: OPEN_QUESTION,
}


def kind_of(example: Example) -> str:
    """The kind name of an example instance."""
    return KIND_OF[type(example)]


def gold_of(example: Example) -> object | None:
    """The gold value: label string, choice index, the answers tuple, or the reference answer."""
    if isinstance(example, SpanExample):
        return example.answers
    if isinstance(example, OpenQuestionExample):
        return example.reference
    return example.label


@dataclass(frozen=True, slots=True)
class Prediction:
    """A model's answer for one example.

    ``value`` is a label string (classification), an answer text (span and open
    questions) or a choice index (multiple choice). ``scores`` are optional per-label /
    per-choice scores that a decode step may use (CHID's joint assignment); ``raw`` is
    what the model said before its answer was extracted (kept in the run's predictions,
    so anyone can rescore a run).
    """

    id: ExampleId
    value: str | int | None
    scores: tuple[float, ...] | None = None
    raw: Any = None


@dataclass(frozen=True, slots=True)
class SplitData:
    """What a task reader returns for one split.

    ``notes`` are remarks the runner prints and records in the manifest (how many OCNLI
    lines with the no-majority label ``"-"`` were dropped). ``files`` lists the data files
    the reader opened, for the manifest's checksums. ``where``, when given, says where each
    example came from (``"dev.json:12"``), so the kernel's checks can name the line.
    """

    examples: tuple[Example, ...]
    notes: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    where: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.examples)

    def origin(self, index: int) -> str:
        """Where example ``index`` came from, as precisely as the reader said."""
        if index < len(self.where):
            return self.where[index]
        return f"{self.files[0]} (record {index + 1})" if self.files else f"record {index + 1}"


@dataclass(frozen=True, slots=True)
class MetricResult:
    """A metric's totals and, optionally, its per-example values (reports bootstrap them).

    ``per_example[name]`` aligns with the scored examples (None where an example does not
    count, e.g. one without gold). ``details`` also aligns with the examples: what the
    metric found per example that a reader of the run needs to trust its total (a judge's
    grade, reasons and raw output; which constraints failed); the runner writes each into
    the example's prediction record under ``scoring``, merged over the task's metrics.
    """

    totals: Mapping[str, float]
    per_example: Mapping[str, Sequence[float | None]] = field(default_factory=dict)
    details: Sequence[Mapping[str, Any] | None] = ()
