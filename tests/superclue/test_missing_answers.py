"""A question a model has no answer for (``Prediction(id, None)``: recorded answers that lack it) is
scored as wrong and marked missing, never checked or judged as if the model had answered ``""`` (it
was: its constraints were checked on "", and a judge was asked to grade "（空回答）")."""

from __future__ import annotations

from clue_core.plugin import Prediction
from clue_tasks_superclue.examples import OpenQuestionExample
from clue_tasks_superclue.metric import compute

LIMITED = OpenQuestionExample("short", "精确指令遵循", "Hard", ("用不超过10个字介绍你自己。",),
                              constraints=({"type": "max_chars", "value": 10},))


def test_a_missing_answer_to_a_checked_question_scores_zero_and_is_marked():
    result = compute([LIMITED, LIMITED], [Prediction("short", None), Prediction("short", "")], settings={"judge": ""})
    missing, empty = result.details
    assert missing["missing"] is True and missing["points"] == 0.0 and "constraints" not in missing
    assert empty.get("missing") is None and "constraints" in empty  # an empty answer is an answer: checked
