"""``answers:<file>``: a backend that answers from recorded answers instead of calling a model.

Answers collected elsewhere (a closed API, another team's run, SuperCLUE's published
answers) go through the same prompts, answer extraction, predictions, metrics, report and
``compare`` as a model run, because they arrive where a model's generations would: the
learner (:class:`~clue_models_llm.recorded_learner.RecordedLearner`) finds each question's
record and hands its texts to :meth:`RecordedBackend.expect` just before it asks
:meth:`RecordedBackend.generate` for those prompts.

Generation only: a recorded text has no likelihoods, so ``likelihood_support`` says so and
``mode=loglikelihood`` is refused in one line. The identity is the file's path, the SHA-256
of its content, the answer field and the matching, so a changed file is a different model
in every manifest (and never meets answers recorded under the old one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, RunContext
from clue_models_llm.backend import Backend, Done, GenerateOptions, Memo, ScoreRequest
from clue_models_llm.recorded_file import RecordedAnswers

#: Why recorded answers cannot be scored by likelihood (``model_info.mode_note`` under ``mode=auto``).
NO_LIKELIHOOD = "recorded answers are texts, with no log-probabilities: the answers are read as generated"


class RecordedBackend(Backend):
    """The records of one file, answering the prompts the learner says they answer."""

    def __init__(self, argument: str | None, values: Mapping[str, Any], name: str) -> None:
        if not argument:
            raise ClueError("model 'answers' needs the file of recorded answers: answers:<file> (JSON Lines or a "
                            "JSON array of objects)")
        self.name = name
        path = Path(argument).expanduser().resolve()
        # read and checked now: a malformed file stops the run before any task starts
        self.book = RecordedAnswers.read(path, str(values["answer_field"]), str(values["answer_match"]))
        self._expected: list[str] = []

    def load(self, context: RunContext, texts: Callable[[], Sequence[str]]) -> None:
        """Nothing to load: the file was read when the model was built."""

    def identity(self) -> dict[str, Any]:
        return self.book.identity()

    def likelihood_support(self, *, chat: bool, required: bool, memo: Memo) -> tuple[bool, str]:
        if required:
            raise ClueError(f"{self.name}: {NO_LIKELIHOOD}; leave mode at generate (--set mode=generate)")
        return False, NO_LIKELIHOOD

    def expect(self, texts: Sequence[str]) -> None:
        """The recorded texts of the prompts the next :meth:`generate` call asks, in its order."""
        self._expected = list(texts)

    def score_choices(self, requests: Sequence[ScoreRequest], *, ppl: bool, done: Done) -> None:
        raise ClueError(f"{self.name}: {NO_LIKELIHOOD}")

    def generate(self, prompts: Sequence[str], options: GenerateOptions, *, done: Done) -> None:
        """Each prompt's recorded text, unchanged (``finish`` ``recorded``, no tokens counted)."""
        expected, self._expected = self._expected, []
        if len(expected) != len(prompts):
            raise RuntimeError(f"{self.name}: asked {len(prompts)} prompts, but {len(expected)} recorded answers "
                               f"were expected (call expect(texts) first)")
        done({index: {"text": text, "tokens": 0, "finish": "recorded", "thinking_tokens": 0, "truncated": 0}
              for index, text in enumerate(expected)})

    def info(self) -> dict[str, Any]:
        return {"device": "none", "dtype": "none"}
