"""The shared example types, :class:`Prediction` and :class:`SplitData`: the contract between
task and model plugins.

A task turns its official files into examples of exactly one kind; a model declares the
kinds it can learn. Kinds are declared by plugins (:class:`~clue_core.kinds.KindSpec`); the
three dataclasses here are those of the built-in plugin's kinds, kept in the kernel as shared
vocabulary because several task plugins read into them and several model plugins answer them.
Everything task-specific (marking a span in a text, joining keywords, a window per blank)
happens in the task, so a model never needs to know which task it is looking at. All kinds are
frozen so that a reader's output cannot be mutated by a model by accident.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from clue_core.errors import PluginError
from clue_core.kinds import spec_for

#: An id as the official file has it (an ``int`` in one test file, a ``str`` in another), or the
#: 0-based line index where the file has none. Submissions echo it as is.
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
    (official dev sets have such answers): scored by text, never trained on.
    """

    id: ExampleId
    context: str
    question: str
    answers: tuple[tuple[str, int | None], ...] | None = None
    title: str = ""


@dataclass(frozen=True, slots=True)
class MultipleChoiceExample:
    """A question with a variable number of choices; ``label`` is the answer's index.

    ``group`` ties examples that must be decoded together (the blanks of one passage of an idiom cloze).
    """

    id: ExampleId
    context: str
    question: str
    choices: tuple[str, ...]
    label: int | None = None
    group: str | None = None


class Example(Protocol):
    """What the kernel asks of every example, whatever its kind: an ``id``.

    Everything else is the kind's (:class:`~clue_core.kinds.KindSpec`): its fields, its checks,
    where its gold is. The three dataclasses above are the built-in plugin's kinds; another
    plugin's kind brings its own type, and the kernel reads it through the kind's spec only.
    """

    @property
    def id(self) -> ExampleId: ...


def gold_of(example: Example) -> object | None:
    """The example's gold value, where its kind's spec says it is (None without gold).

    A label string, a choice index, a span question's answers tuple, an open question's
    reference answer: whatever the kind keeps there. An object of no declared kind has none.
    """
    found = spec_for(example)
    if found is None:
        return None
    try:
        return found[1](example)
    except Exception as exc:  # a kind's gold function failing is its plugin's bug: one line naming it, no traceback
        raise PluginError(f"kind {found[0].name!r}: gold {found[0].gold} raised {type(exc).__name__}: {exc}"
                          ) from exc


@dataclass(frozen=True, slots=True)
class Prediction:
    """A model's answer for one example.

    ``value`` is a label string (classification), an answer text (span and open
    questions) or a choice index (multiple choice). ``scores`` are optional per-label /
    per-choice scores that a decode step may use (a joint assignment per passage); ``raw`` is
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

    ``notes`` are remarks the runner prints and records in the manifest (how many
    lines with a no-majority label were dropped). ``files`` lists the data files
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
    grade, reasons and raw output; which checks failed); the runner writes each into
    the example's prediction record under ``scoring``, merged over the task's metrics.
    """

    totals: Mapping[str, float]
    per_example: Mapping[str, Sequence[float | None]] = field(default_factory=dict)
    details: Sequence[Mapping[str, Any] | None] = ()
