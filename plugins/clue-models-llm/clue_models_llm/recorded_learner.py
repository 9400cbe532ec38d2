"""The learner of ``answers:<file>``: the LLM learner, with each question's recorded answer found first.

A :class:`~clue_models_llm.backend.Backend` only sees prompts, but a recorded answer
belongs to a question: to its id, or to the prompt text the task gives (an open question's
first turn, the rendered prompt of the other kinds). So this learner finds each question's
record before it asks, hands the texts to the backend
(:meth:`~clue_models_llm.backends.recorded.RecordedBackend.expect`) and reads what comes
back exactly as :class:`~clue_models_llm.learner.LLMLearner` reads a model's generations:
label words and option letters extracted, spans cut out. Everything else (prompts,
sharding, ``model_info``) is the LLM learner's.

Two things differ, on purpose:

* Open questions keep every turn's text exactly as recorded, with no stripping of a
  ``<think>`` block or of white space: the task's metric decides what counts (SuperCLUE-
  CPIF strips up to ``</think>`` itself), and the judge sees what was answered.
* The result cache is not used (``result_cache`` is off): the file is the record, and
  the cache would give two questions with the same prompt one answer even where their ids
  give them different ones.

A question with no recorded answer is a prediction of ``None`` (or the task's placeholder on
an unlabelled test example, an empty span) marked ``raw["missing"]``: scored as wrong,
counted in ``model_info["recorded"]["missing"]`` and said in a warning line naming the split
(the test split's questions are usually unanswered on purpose: a file of dev answers). Records
that answer no question are counted, by their position in the file (a one-line JSON array puts
every record on line 1), and said in one warning at the end; a file none of whose records
answers any question asked stops the run in one line. The warnings name the file as
:func:`~clue_core.plugin.printable` shows it: a path is the user's, and may hold an escape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_core.plugin import (
    CLASSIFICATION,
    MULTIPLE_CHOICE,
    SPAN,
    ClueError,
    Example,
    Prediction,
    Setting,
    TaskSpec,
    printable,
)
from clue_models_llm import answers
from clue_models_llm.backend import GenerateOptions
from clue_models_llm.backends.recorded import RecordedBackend
from clue_models_llm.extract import extract_tool_calls, split_thinking
from clue_models_llm.kinds import OPEN_QUESTION
from clue_models_llm.learner import LLMLearner
from clue_models_llm.prompts import Question
from clue_models_llm.recorded_file import Match

#: What the LLM learner's settings take for recorded answers: the text as recorded, no cache.
FIXED = {"stop": "", "result_cache": False}


class RecordedLearner(LLMLearner):
    """One task's learner answering from a :class:`RecordedBackend`'s file."""

    backend: RecordedBackend

    def __init__(self, task: TaskSpec, backend: RecordedBackend, values: Mapping[str, Any],
                 declared: Sequence[Setting], name: str) -> None:
        super().__init__(task, backend, {**values, **FIXED}, declared, name)
        self.found = {"questions": 0, "matched_by_id": 0, "matched_by_prompt": 0, "missing": 0, "empty": 0}
        self.used: set[int] = set()  # the indexes of the records that answered a question
        self.taken_by_id: set[int] = set()  # records an earlier split matched by id (ids repeat across splits)
        self._pending: list[str] = []
        self._warned = False

    # -- predicting -----------------------------------------------------------------------

    def _of_split(self) -> str:
        """`` of the dev split`` (``test 1.1``, ``test_public``): the split the kernel is predicting
        (``context.split``), since ``predict`` is not told; empty outside the kernel's calls."""
        split = self.context.split if self.context is not None else ""
        return f" of the {split} split" if split else ""

    def predict(self, examples: Sequence[Example]) -> list[Prediction]:
        """The LLM learner's predictions, counted: matched, missing, empty; nothing matched at all stops here."""
        predictions = super().predict(examples)
        missing, taken = 0, set[int]()
        for prediction in predictions:
            raw = prediction.raw if isinstance(prediction.raw, dict) else {}
            recorded = raw.get("recorded")
            self.found["questions"] += 1
            if isinstance(recorded, dict):
                self.used.add(recorded["record"])
                if recorded["match"] == "id":
                    taken.add(recorded["record"])
                self.found[f"matched_by_{recorded['match']}"] += 1
            if raw.get("missing"):
                missing += 1
            elif _empty(raw):
                self.found["empty"] += 1
        self.found["missing"] += missing
        self.taken_by_id |= taken
        book = self.backend.book
        if predictions and not self.used:
            raise ClueError(f"{book.path}: none of its {len(book.records)} records answers any of the "
                            f"{len(predictions)} questions{self._of_split()} of {self.task.name} "
                            f"(matched by {_how(book.match)}, answer field {book.answer_field!r}): is it the file "
                            "of this task?")
        if missing:
            self._echo(printable(
                f"warning: {missing} of {len(predictions)} questions{self._of_split()} have no "
                f"recorded answer in {book.path} (field {book.answer_field!r}): scored as wrong, counted in "
                "model_info.recorded.missing"))
        return predictions

    def _answer(self, examples: Sequence[Example]) -> list[Prediction]:
        if not examples:
            return []
        assert self.renderer is not None
        kind = self.task.kind
        if kind == OPEN_QUESTION:
            return [self._open(example) for example in examples]
        if kind not in (CLASSIFICATION, MULTIPLE_CHOICE, SPAN):
            raise ClueError(f"recorded answers cannot answer {kind} examples")
        questions = [self.renderer.render(example) for example in examples]
        matches = [self._find(example, question.prompt, 1) for example, question in zip(examples, questions)]
        present = [i for i, match in enumerate(matches) if match is not None and match.record.answers is not None]
        asked_examples = [examples[i] for i in present]
        asked = [questions[i] for i in present]
        self._pending = [matches[i].record.answers[0] for i in present]  # type: ignore[union-attr,index]
        generations = self._generations([question.prompt for question in asked]) if asked else []
        stops = self.settings.stop_strings
        if kind == SPAN:
            got = answers.spans(asked_examples, asked, generations, stops, self.convert)
        else:
            got = answers.chosen(kind, asked_examples, asked, generations, stops)
        results: list[Prediction | None] = [None] * len(examples)
        for index, prediction in zip(present, got):
            raw = dict(prediction.raw or {})
            raw["recorded"] = _where(matches[index])
            results[index] = Prediction(prediction.id, prediction.value, prediction.scores, raw)
        for index, (example, question, match) in enumerate(zip(examples, questions, matches)):
            if results[index] is None:
                results[index] = _missing(kind, example, question, match)
        return [prediction for prediction in results if prediction is not None]

    def _open(self, example: Example) -> Prediction:
        """An open question: every turn's recorded text, unchanged; the prompts as a model would be asked them."""
        assert self.renderer is not None
        turns = list(example.turns)  # type: ignore[attr-defined]
        match = self._find(example, turns[0], len(turns))
        if match is None or match.record.answers is None:
            raw = {"prompts": [], "generations": [], "answers": [], "missing": True, "recorded": _where(match)}
            return Prediction(example.id, None, None, raw)
        said = list(match.record.answers)
        prompts = [self.renderer.turn_prompt(example, said[:turn]) for turn in range(len(turns))]
        raw: dict[str, Any] = {"prompts": prompts, "generations": list(said), "answers": said, "extracted": True,
                               "recorded": _where(match)}
        if getattr(example, "tools", ()):
            raw["tool_calls"] = [extract_tool_calls(split_thinking(text)[1]) for text in said]
        return Prediction(example.id, said[-1], None, raw)

    def _find(self, example: Example, prompt: str, turns: int) -> Match | None:
        """The question's record, whose answers must be one per turn (a single text: one turn)."""
        match = self.backend.book.find(example.id, prompt, self.taken_by_id)
        if match is None or match.record.answers is None:
            return match
        record, field = match.record, self.backend.book.answer_field
        count = len(record.answers or ())
        if count != turns or (turns > 1 and not record.listed):
            held = f"a list of {count} answers" if record.listed else "one answer"
            raise ClueError(f"{self.backend.book.path} line {record.line}: field {field!r}: holds {held}, but "
                            f"question {example.id!r} of {self.task.name} (matched by {match.by}) has "
                            f"{turns} turn{'s' if turns != 1 else ''}: record "
                            f"{'one text' if turns == 1 else f'a list of {turns} texts, one per turn'}")
        return match

    def _generations(self, prompts: list[str]) -> list[dict[str, Any]]:
        """The recorded texts of ``prompts`` through the backend (no result cache: the file is the record)."""
        texts, self._pending = self._pending, []
        self.backend.expect(texts)
        entries: dict[int, dict[str, Any]] = {}
        settings = self.settings
        options = GenerateOptions(max_new_tokens=settings.max_new_tokens, thinking_tokens=settings.thinking_tokens,
                                  stops=settings.stop_strings, temperature=settings.temperature,
                                  seed=self.context.seed if self.context else 0)
        self.backend.generate(prompts, options, done=entries.update)
        return [entries[index] for index in range(len(prompts))]

    # -- reporting ------------------------------------------------------------------------

    def run_info(self) -> dict[str, Any]:
        """The LLM learner's ``model_info`` with ``recorded``: the file, and what was matched and missing."""
        info = super().run_info()
        info.pop("cache", None)  # never used: the file is the record
        book = self.backend.book
        unmatched = len(book.records) - len(self.used)
        info["recorded"] = {"file": str(book.path), "sha256": book.sha256, "field": book.answer_field,
                            "match": book.match, **book.stats(), **self.found,
                            "answered": self.found["questions"] - self.found["missing"],
                            "unmatched_records": unmatched}
        if unmatched and not self._warned:
            self._warned = True
            self._echo(printable(
                f"warning: {unmatched} of the {len(book.records)} records in {book.path} answer no question "
                f"asked (matched by {_how(book.match)}); counted in model_info.recorded.unmatched_records"))
        return info


def _missing(kind: str, example: Example, question: Question, match: Match | None) -> Prediction:
    """No recorded answer: ``None`` where the example has gold (scored as wrong), else the placeholder."""
    value = "" if kind == SPAN else answers.unextracted(kind, example, question)
    raw: dict[str, Any] = {"prompt": question.prompt, "generation": None, "answer": None, "missing": True,
                           "recorded": _where(match)}
    if value is not None:
        raw["placeholder"] = value
    return Prediction(example.id, value, None, raw)


def _where(match: Match | None) -> dict[str, Any] | None:
    """What a prediction records of its record: its line, its position in the file and how it was found."""
    return None if match is None else {"line": match.record.line, "record": match.record.index, "match": match.by}


def _empty(raw: Mapping[str, Any]) -> bool:
    """A recorded answer that is empty text (for a dialogue: any turn's)."""
    texts = raw.get("answers") if "answers" in raw else [raw.get("generation")]
    return any(text == "" for text in texts or ())


def _how(match: str) -> str:
    return {"auto": "id, else prompt text", "id": "id", "prompt": "prompt text"}[match]
