"""The settings of ``answers:<file>`` (specs only: ``hooks.py`` imports this, so it must stay cheap).

Recorded answers are not computed, so nothing of a model's loading or decoding applies:
only which field holds the answer, how records find their questions, and the mode (the
answers are text: classification and multiple choice are read as generated answers).
"""

from __future__ import annotations

from clue_core.plugin import Setting
from clue_models_llm.settings import COMMON, SERVER_MODES

#: How records find their questions: by id where the record has one, else by prompt text; or only one way.
MATCHES = ("auto", "id", "prompt")

#: Where the answer is when the file does not say otherwise (``--set answer_field=<field>``).
DEFAULT_FIELD = "answer"

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
