"""Error-analysis details: what an LLM said, and context-length bins on degenerate data."""

from __future__ import annotations

from clue_core.examples import MultipleChoiceExample, Prediction
from clue_report.error_analysis import _said, context_length
from clue_report.scored import Scored


def test_what_the_model_said() -> None:
    assert _said("答案：相同") == "答案：相同"
    assert _said({"prompt": "…", "generation": "相同。"}) == "相同。"  # clue-models-llm, generate
    assert _said({"prompts": ["…"], "generations": ["a", "b"]}) == "b"
    assert _said({"prompt": "…", "continuations": ["a"], "logprobs": [-1.0]}) is None  # loglikelihood: no text
    assert _said(None) is None


def test_equal_context_lengths_make_one_bin() -> None:
    examples = [MultipleChoiceExample(id=i, context="x" * 52, question="", choices=("a", "b"), label=0)
                for i in range(4)]
    scored = Scored(examples, [Prediction(i, 0) for i in range(4)], {}, {"accuracy": [100.0, 0.0, 100.0, None]},
                    [None] * 4, True)
    assert context_length(scored, "accuracy") == [{"low": 52, "high": 52, "n": 3, "value": 200 / 3,
                                                   "metric": "accuracy"}]
