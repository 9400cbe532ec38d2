"""``answers:<file>``: a backend that answers from recorded answers instead of calling a model.

Answers collected elsewhere (a closed API, another team's run, SuperCLUE's published
answers) go through the same prompts, answer extraction, predictions, metrics, report and
``compare`` as a model run, because they arrive where a model's generations would: the
learner asks :meth:`RecordedBackend.generate` as it asks any backend, and each prompt (an
:class:`~clue_models_llm.prompting.Asked`) names its question. A recorded answer belongs to
a question: to its id, or to the prompt text the task gives (an open question's first turn,
the rendered prompt of the other kinds), so the backend finds each question's record, and
says it is ``missing`` where there is none. The backend describes itself as not
``computed``: the learner then answers every prompt for its own question, uncached (the
file is the record, and a cache would give two questions with the same prompt one answer
even where their ids give them different ones), with no progress line, and keeps an open
question's texts exactly as recorded (the task's metric decides what counts: SuperCLUE-CPIF
strips up to ``</think>`` itself, and the judge sees what was answered).

A question with no recorded answer is a prediction of ``None`` (or the task's placeholder on
an unlabelled test example, an empty span) marked ``raw["missing"]``: scored as wrong,
counted in ``model_info["recorded"]["missing"]`` and said in a warning line naming the split
(the test split's questions are usually unanswered on purpose: a file of dev answers). Records
that answer no question are counted, by their position in the file (a one-line JSON array puts
every record on line 1), and said in one warning at the end; a file none of whose records
answers any question asked stops the run in one line. The warnings name the file as
:func:`~clue_core.plugin.printable` shows it: a path is the user's, and may hold an escape.

Generation only: a recorded text has no likelihoods, so ``likelihood_support`` says so and
``mode=loglikelihood`` is refused in one line. The identity is the file's path, the SHA-256
of its content, the answer field and the matching, so a changed file is a different model
in every manifest (and never meets answers recorded under the old one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core.plugin import ClueError, Setting
from clue_models_llm.backend import Backend, BackendInfo, Done, Memo
from clue_models_llm.settings import COMMON, MATCHES, SERVER_MODES

if TYPE_CHECKING:  # for type checkers only: listing models imports neither clue_core.context nor table
    from clue_core.plugin import RunContext
    from clue_models_llm.exchange import Description, GenerateOptions, ScoreRequest
    from clue_models_llm.recorded_file import Match

#: Why recorded answers cannot be scored by likelihood (``model_info.mode_note`` under ``mode=auto``).
NO_LIKELIHOOD = "recorded answers are texts, with no log-probabilities: the answers are read as generated"


class RecordedBackend(Backend):
    """The records of one file, answering each question asked with its record's texts."""

    def __init__(self, argument: str | None, values: Mapping[str, Any], name: str) -> None:
        if not argument:
            raise ClueError("model 'answers' needs the file of recorded answers: answers:<file> (JSON Lines or a "
                            "JSON array of objects)")
        from clue_models_llm.recorded_file import RecordedAnswers

        self.name = name
        path = Path(argument).expanduser().resolve()
        # read and checked now: a malformed file stops the run before any task starts
        self.book = RecordedAnswers.read(path, str(values["answer_field"]), str(values["answer_match"]))
        self.context: RunContext | None = None
        self.found = {"questions": 0, "matched_by_id": 0, "matched_by_prompt": 0, "missing": 0, "empty": 0}
        self.used: set[int] = set()  # the indexes of the records that answered a question
        self.taken_by_id: set[int] = set()  # records an earlier split matched by id (ids repeat across splits)
        self.matches: dict[Any, Match | None] = {}  # this split's questions (by id): their records, for later turns
        self._warned = False

    def load(self, context: RunContext, texts: Callable[[], Sequence[str]]) -> None:
        """Nothing to load (the file was read when the model was built): the task and split warnings name."""
        self.context = context

    def describe(self) -> Description:
        """The file's identity (path, SHA-256, field, matching), nothing on a device; at the end, what was matched
        and missing (and, once, a warning for the records that answered nothing asked)."""
        book = self.book
        unmatched = len(book.records) - len(self.used)
        info = {"recorded": {"file": str(book.path), "sha256": book.sha256, "field": book.answer_field,
                             "match": book.match, **book.stats(), **self.found,
                             "answered": self.found["questions"] - self.found["missing"],
                             "unmatched_records": unmatched}}
        if unmatched and self.found["questions"] and not self._warned:
            self._warned = True
            from clue_core.plugin import printable

            self._echo(printable(
                f"warning: {unmatched} of the {len(book.records)} records in {book.path} answer no question "
                f"asked (matched by {_how(book.match)}); counted in model_info.recorded.unmatched_records"))
        from clue_models_llm.exchange import Description

        return Description(identity=book.identity(), device="none", dtype="none", info=info, computed=False)

    def likelihood_support(self, *, chat: bool, required: bool, memo: Memo) -> tuple[bool, str]:
        if required:
            raise ClueError(f"{self.name}: {NO_LIKELIHOOD}; leave mode at generate (--set mode=generate)")
        return False, NO_LIKELIHOOD

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        raise ClueError(f"{self.name}: {NO_LIKELIHOOD}")

    def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
        """Each question's recorded text for its turn, unchanged (``finish`` ``recorded``, no tokens counted), or
        ``missing``; the first turn of a split's questions finds their records and counts them."""
        first = iter(self._find_all([prompt for prompt in prompts if getattr(prompt, "turn", 0) == 0]))
        entries = {}
        for index, prompt in enumerate(prompts):
            match = next(first) if getattr(prompt, "turn", 0) == 0 else self.matches.get(getattr(prompt, "id", None))
            where = _where(match)
            if match is None or match.record.answers is None:
                entries[index] = {"text": "", "tokens": 0, "finish": "missing", "thinking_tokens": 0, "truncated": 0,
                                  "missing": True, "recorded": where}
            else:
                entries[index] = {"text": match.record.answers[getattr(prompt, "turn", 0)], "tokens": 0,
                                  "finish": "recorded", "thinking_tokens": 0, "truncated": 0, "recorded": where}
        done(entries)

    def _find_all(self, asked: Sequence[Any]) -> list[Match | None]:
        """The records of one split's questions, counted: matched, missing, empty; nothing matched stops here."""
        if not asked:
            return []
        matches = [self._find(prompt) for prompt in asked]
        self.matches = {prompt.id: match for prompt, match in zip(asked, matches)}
        missing, taken = 0, set[int]()
        for match in matches:
            self.found["questions"] += 1
            if match is not None:
                self.used.add(match.record.index)
                if match.by == "id":
                    taken.add(match.record.index)
                self.found[f"matched_by_{match.by}"] += 1
            if match is None or match.record.answers is None:
                missing += 1
            elif any(text == "" for text in match.record.answers):
                self.found["empty"] += 1
        self.found["missing"] += missing
        self.taken_by_id |= taken
        book = self.book
        if not self.used:
            raise ClueError(f"{book.path}: none of its {len(book.records)} records answers any of the "
                            f"{len(asked)} questions{self._of_split()} of {self._task()} "
                            f"(matched by {_how(book.match)}, answer field {book.answer_field!r}): is it the file "
                            "of this task?")
        if missing:
            from clue_core.plugin import printable

            self._echo(printable(
                f"warning: {missing} of {len(asked)} questions{self._of_split()} have no "
                f"recorded answer in {book.path} (field {book.answer_field!r}): scored as wrong, counted in "
                "model_info.recorded.missing"))
        return matches

    def _find(self, asked: Any) -> Match | None:
        """The question's record, whose answers must be one per turn (a single text: one turn)."""
        match = self.book.find(asked.id, asked.text, self.taken_by_id)
        if match is None or match.record.answers is None:
            return match
        record, field, turns = match.record, self.book.answer_field, asked.turns
        count = len(record.answers or ())
        if count != turns or (turns > 1 and not record.listed):
            held = f"a list of {count} answers" if record.listed else "one answer"
            raise ClueError(f"{self.book.path} line {record.line}: field {field!r}: holds {held}, but "
                            f"question {asked.id!r} of {self._task()} (matched by {match.by}) has "
                            f"{turns} turn{'s' if turns != 1 else ''}: record "
                            f"{'one text' if turns == 1 else f'a list of {turns} texts, one per turn'}")
        return match

    def _task(self) -> str:
        return self.context.task.name if self.context is not None else ""

    def _of_split(self) -> str:
        """`` of the dev split`` (``test 1.1``, ``test_public``): the split the kernel is predicting
        (``context.split``); empty outside the kernel's calls."""
        split = getattr(self.context, "split", "") if self.context is not None else ""
        return f" of the {split} split" if split else ""

    def _echo(self, text: str) -> None:
        if self.context is not None and self.context.is_main:
            self.context.echo(f"[{self._task()}] {text}")


def _where(match: Match | None) -> dict[str, Any] | None:
    """What a prediction records of its record: its line, its position in the file and how it was found."""
    return None if match is None else {"line": match.record.line, "record": match.record.index, "match": match.by}


def _how(match: str) -> str:
    return {"auto": "id, else prompt text", "id": "id", "prompt": "prompt text"}[match]


#: Where the answer is when the file does not say otherwise (``--set answer_field=<field>``).
DEFAULT_FIELD = "answer"

#: Recorded answers are not computed, so nothing of a model's loading or decoding applies: only which field
#: holds the answer, how records find their questions, and the mode (choices are read from the answers' text).
RECORDED: tuple[Setting, ...] = (
    Setting("answer_field", str, DEFAULT_FIELD, "answers:<file>: the field of each record that holds the answer "
            "(a text, or a list of texts, one per turn), e.g. response or a model's name", report=True),
    Setting("answer_match", str, "auto", "answers:<file>: how records find their questions: auto (by id where "
            "the record has one, else by the prompt text), id, or prompt", choices=MATCHES, report=True),
    Setting("mode", str, "generate", "answers:<file>: recorded answers are text, so choices are read from them "
            "as generated answers (generate, or auto: the same); loglikelihood is refused", choices=SERVER_MODES,
            report=True),
    *(s for s in COMMON if s.name == "traditional"),
)

BACKEND = BackendInfo(
    "answers", "answers recorded elsewhere, answers:<JSON Lines or JSON array file> --set answer_field=<field>: "
    "matched by id or prompt text, read as generated answers, missing ones counted and scored as wrong", RECORDED,
    RecordedBackend, argument="the file of recorded answers: answers:<file> (JSON Lines or a JSON array of "
    "objects; --set answer_field=<field>)", fixed={"stop": "", "result_cache": False})
