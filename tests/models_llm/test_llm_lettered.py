"""Choices shown in a prompt are lettered A-Z; a 27th choice is one line that names its example."""

from __future__ import annotations

import pytest

from clue_core.plugin import MULTIPLE_CHOICE, ClueError, MultipleChoiceExample
from clue_models_llm.prompts import example_fields, lettered


def test_choices_are_lettered_in_order() -> None:
    assert lettered(["甲", "乙", "丙"]) == "A. 甲\nB. 乙\nC. 丙"


def test_more_choices_than_letters_names_the_example() -> None:
    example = MultipleChoiceExample(id="q-27", context="", question="?", choices=tuple(str(i) for i in range(27)),
                                    label=0)
    with pytest.raises(ClueError) as error:
        example_fields(example, MULTIPLE_CHOICE)
    message = str(error.value)
    assert "'q-27'" in message and "27 choices" in message and "\n" not in message
