"""CLUENER2020's ten entity types, in the order of the official ``score.py`` (and of its mean).

The data and the scorer spell ``government``; the archive's example submission and README spell
``goverment``, which the submission reader accepts as an alias (with a warning).
"""

from __future__ import annotations

#: The kind's name (here, with the plain data, so the hook module need not create the example dataclass).
ENTITY_SPANS = "entity_spans"

TYPES = ("address", "book", "company", "game", "government", "movie", "name", "organization", "position", "scene")

#: Misspellings seen in official material -> the type they mean.
ALIASES = {"goverment": "government"}

#: Every total of the ``cluener2020`` metric, in order: the official mean, the exact micro scores, each type's P/R/F1.
METRIC_TOTALS = ("macro_f1", "micro_precision_exact", "micro_recall_exact", "micro_f1_exact",
                 *(f"{m}_{kind}" for kind in TYPES for m in ("precision", "recall", "f1")))
