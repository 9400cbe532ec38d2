"""What ties the questions of this plugin's tasks together: the passage they are asked of.

C3 asks 1 to 5 questions of one dialogue or text, CMRC2018 and DRCD several of one Wikipedia
paragraph, CHID one blank per idiom of a passage: the questions of one passage stand or fall
together, so their intervals resample passages (the kernel's ``TaskSpec.cluster``; each prediction
record names its passage as ``group``). A passage is named by a digest of its text, which every
question of it carries whole (C3's joined dialogue, the paragraph's context): short in the
records, equal for equal texts, and the same whichever split or file order it was read in. CHID's
examples carry their passage already (``group``, its line: the reader ties the blanks of a line for
the joint decoding).
"""

from __future__ import annotations

import hashlib

from clue_core.plugin import MultipleChoiceExample, SpanExample


def passage(example: MultipleChoiceExample | SpanExample) -> str:
    """The passage a C3, CMRC2018 or DRCD question is asked of: 16 hex digits of its text's BLAKE2b."""
    return hashlib.blake2b(example.context.encode("utf-8"), digest_size=8).hexdigest()


def chid_passage(example: MultipleChoiceExample) -> str | None:
    """The line a CHID blank is in (``dev-0``: its reader's group), None for a blank read alone."""
    return example.group
