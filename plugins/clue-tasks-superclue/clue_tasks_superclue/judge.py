"""Ask the judge model, parse strictly, repair once, and never score what does not parse.

The judge is any model the run can load (``--set judge=NAME``, its settings under
``judge.``; each judge of a panel under ``judge.<i>.``, :mod:`clue_tasks_superclue.panel`):
``context.load_model(name, "judge")`` builds its learner for the superclue
task, whose prompt has no instruction or template, so every judge prompt is asked exactly as
written. Each request is an :class:`OpenQuestionExample` whose turns are
``[judge prompt]``, or ``[judge prompt, repair prompt]`` for the second round: the repair is
a second turn after the judge's own unparseable output, so it is a new request (never the
cached bad answer again), while everything already asked comes from the judge's cache
(a killed or repeated run asks nothing twice).

The learner is fitted once, before the first round, on every text it will be asked (the
first-round prompts and both repair prompts): a model built from its texts (``llm-tiny``)
then stays the same model, with the same cache identity, for both rounds.

Each round shows its progress (``superclue: judge NAME: 40/100 judgments, 1.3/s, ~46 s left``;
``judge.<i>`` in a panel, ``(repairs)`` for the second round): a bar on a terminal, a line
every ~15 s in a log. It gathers the progress the judge's learner shows of its own (an LLM
judge's answers, each counted as it is committed to its cache); a learner that shows none
moves it when the round ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from clue_core.plugin import ClueError, Progress, RunContext
from clue_tasks_superclue.examples import OpenQuestionExample
from clue_tasks_superclue.judge_prompts import GRADE_REPAIR, PAIRWISE_REPAIR, Parsed, parse_grade, parse_verdict

Parser = Callable[[str], Parsed | None]


@dataclass(frozen=True, slots=True)
class Request:
    """One judgment to ask: ``key`` is unique in the run, ``repair`` the second-turn prompt."""

    key: str
    prompt: str
    parse: Parser
    repair: str
    dimension: str = "评审"
    category: str = "评审"


@dataclass(frozen=True, slots=True)
class Judgment:
    """What came back: the parsed value (None when unparseable even after the repair)."""

    prompt: str
    output: str
    parsed: Parsed | None
    repaired: bool  # the repair prompt was asked
    first_output: str | None = None  # the unparseable first output, when repaired

    def as_dict(self, value_name: str) -> dict[str, Any]:
        record: dict[str, Any] = {
            value_name: self.parsed.value if self.parsed else None,
            "reasons": self.parsed.reasons if self.parsed else None,
            "output": self.output, "parsed": self.parsed is not None, "repaired": self.repaired,
            "prompt": self.prompt,
        }
        if self.first_output is not None:
            record["first_output"] = self.first_output
        return record


class Judge:
    """A loaded judge learner and what it has been asked."""

    def __init__(self, learner: Any, name: str, context: RunContext, namespace: str = "judge") -> None:
        self.learner = learner
        self.name = name
        self.context = context
        self.namespace = namespace
        self.fitted = False

    @classmethod
    def load(cls, name: str, context: RunContext, namespace: str = "judge") -> Judge:
        """The judge ``name`` with the settings under ``namespace`` (``judge``, or ``judge.<i>`` in a panel)."""
        if context.load_model is None:
            raise ClueError("the superclue judge needs a run (clue-core run), which loads the judge model")
        return cls(context.load_model(name, namespace), name, context, namespace)

    def ask(self, requests: Sequence[Request]) -> dict[str, Judgment]:
        """Every request judged: first round, then one repair round for what did not parse.

        Requests with the same prompt (the two orders of a pairwise judgment when both answers
        are the same text) are asked once and share the judgment.
        """
        if not requests:
            return {}
        unique = list({(r.prompt, r.repair): r for r in requests}.values())
        first = [_example(r.key, (r.prompt,), r) for r in unique]
        if not self.fitted:
            vocabulary = _example("__repair_prompts__", (GRADE_REPAIR, PAIRWISE_REPAIR), unique[0])
            self.learner.fit([], [*first, vocabulary], self.context)
            self.fitted = True
        outputs = self._last_answers(first, "")
        judged: dict[tuple[str, str], Judgment] = {}
        broken = []
        for request, output in zip(unique, outputs):
            parsed = request.parse(output)
            if parsed is None:
                broken.append((request, output))
            else:
                judged[(request.prompt, request.repair)] = Judgment(request.prompt, output, parsed, False)
        if broken:
            second = [_example(r.key, (r.prompt, r.repair), r) for r, _ in broken]
            for (request, said_first), output in zip(broken, self._last_answers(second, " (repairs)")):
                judged[(request.prompt, request.repair)] = Judgment(request.prompt, output, request.parse(output),
                                                                    True, said_first)
        return {r.key: judged[(r.prompt, r.repair)] for r in requests}

    def _last_answers(self, examples: Sequence[OpenQuestionExample], doing: str) -> list[str]:
        """The judge's answers to one round, its progress shown meanwhile (see the module docstring)."""
        with Progress(len(examples), f"superclue: {self.namespace} {self.name}{doing}", "judgments",
                      shown=self.context.is_main, gathers=True) as progress:
            predictions = self.learner.predict(examples)
            if progress.done < len(examples):  # what the learner's own progress did not count
                progress.update(len(examples) - progress.done)
        return outputs_of(predictions)

    def info(self) -> dict[str, Any]:
        describe = getattr(self.learner, "run_info", None)
        return {"name": self.name, **(dict(describe()) if callable(describe) else {})}


def outputs_of(predictions: Sequence[Any]) -> list[str]:
    """The judge's last answer of each prediction."""
    return ["" if p is None or p.value is None else str(p.value) for p in predictions]


def _example(key: str, turns: tuple[str, ...], request: Request) -> OpenQuestionExample:
    return OpenQuestionExample(id=key, dimension=request.dimension, category=request.category, turns=turns)


def grade_request(key: str, prompt: str, dimension: str, category: str) -> Request:
    return Request(key, prompt, parse_grade, GRADE_REPAIR, dimension, category)


def pairwise_request(key: str, prompt: str, dimension: str, category: str) -> Request:
    return Request(key, prompt, parse_verdict, PAIRWISE_REPAIR, dimension, category)
