"""A task's place on the leaderboards, as its plugin declares it in its :class:`~clue_core.specs.TaskSpec`.

Its test files and the file each one's predictions go to on the leaderboard (:class:`TestVersion`:
the kernel predicts them and the submission writer names them), the groups whose score averages it
(:class:`Leaderboard`, recorded in a run's ``metrics.json``) and the scores published for it
(:class:`PublishedScore`, which the report sets runs beside). Frozen dataclasses of plain data; a leaf
(it imports nothing of clue-core), so the task spec that holds them imports it without a circle.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


class _Plain:
    """``as_dict``, as every spec has (``--json`` output; a run's ``metrics.json`` records leaderboards)."""

    __slots__ = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[arg-type]  # each subclass is a dataclass of plain fields


@dataclass(frozen=True, slots=True)
class TestVersion(_Plain):
    """One test file of a task and the leaderboard file its predictions go to.

    ``split`` is the name passed to the task reader (``"test"``, ``"test1.0"``);
    ``version`` is what users see (``"1.1"``).
    """

    __test__ = False  # not a pytest class, despite the name

    version: str
    split: str
    submission_file: str


@dataclass(frozen=True, slots=True)
class Leaderboard(_Plain):
    """Membership of a leaderboard group: the group score averages its tasks' primary metric.

    One version of a benchmark may average a task that another version replaces by a different
    one, so membership is per benchmark version, not one group string.
    """

    benchmark: str
    group: str


@dataclass(frozen=True, slots=True)
class PublishedScore(_Plain):
    """A score someone published for a task, so reports can set runs beside it.

    ``version`` is the test version for test scores (``"1.0"``, ``"1.1"``) and, for dev
    scores, the CLUE edition the numbers were produced on. A run is compared with it only
    when split, metric and, for large language models, ``mode`` and ``shots`` match, and
    for test scores the version too (dev files are shared by both editions). ``prompt`` names
    the prompt an LLM score was produced with (e.g. an OpenCompass config), when known.
    """

    model: str
    split: str
    version: str
    metric: str
    value: float
    source: str
    mode: str = "fine-tuned"
    shots: int | None = None
    prompt: str | None = None
