"""Frozen spec dataclasses that plugins return from their hooks, and lazy resolution.

Specs are plain data. Anything heavy (a reader, a model factory, a metric) is named as a
``"module:attr"`` string and imported only by :func:`resolve` when a run needs it, which
keeps ``clue-core list`` fast and free of torch.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # hook modules import specs; the example classes are not needed for that
    from clue_core.examples import Example, Prediction


def resolve(ref: str | Callable[..., Any]) -> Any:
    """Import ``"package.module:attr.sub"`` lazily; callables pass through unchanged."""
    if not isinstance(ref, str):
        return ref
    module_name, sep, attr_path = ref.partition(":")
    if not sep or not module_name or not attr_path:
        raise ValueError(f"expected 'module:attr', got {ref!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attr_path.split("."):
        obj = getattr(obj, part)
    return obj


Ref = str  # "module:attr"


@dataclass(frozen=True)
class DataSource:
    """An official archive: where it lives and how to verify it."""

    url: str
    filename: str
    size: int | None = None
    sha256: str | None = None
    md5: str | None = None
    mirrors: tuple[str, ...] = ()


@dataclass(frozen=True)
class TestVersion:
    """One test file of a task and the leaderboard file its predictions go to.

    ``split`` is the name passed to the task reader (``"test"``, ``"test1.0"``);
    ``version`` is what users see (``"1.1"``).
    """

    version: str
    split: str
    submission_file: str


@dataclass(frozen=True)
class TaskSpec:
    """Everything the kernel needs to know about a task, without importing its code.

    ``reader(data_dir, split) -> SplitData``; ``decode(examples, predictions[, config])``
    rewrites the predictions of a whole split (CHID's joint assignment) and receives the
    run's hyperparameters when it accepts ``config``.
    """

    name: str
    kind: str
    description: str
    reader: Ref
    labels: tuple[str, ...] = ()
    label_descriptions: Mapping[str, str] = field(default_factory=dict)
    metrics: tuple[str, ...] = ("accuracy",)
    primary_metric: str = "accuracy"
    group: str | None = None
    splits: tuple[str, ...] = ("train", "dev")
    test_versions: tuple[TestVersion, ...] = ()
    writer: str = "jsonl_labels"
    source: DataSource | None = None
    data_files: tuple[str, ...] = ()
    sample: str | None = None
    decode: Ref | None = None
    hyperparameters: Mapping[str, Any] = field(default_factory=dict)
    notes: str = ""

    def test_version(self, version: str) -> TestVersion:
        for test in self.test_versions:
            if test.version == version or test.split == version:
                return test
        known = ", ".join(t.version for t in self.test_versions) or "none"
        raise KeyError(f"task {self.name} has no test version {version!r} (has: {known})")


@dataclass(frozen=True)
class ModelSpec:
    """A model (or, with ``family=True``, a family matched as ``name:<argument>``).

    ``factory(argument, task, options) -> Learner`` builds a learner for one task;
    ``argument`` is the text after ``name:`` for families (a hub id or a directory).
    """

    name: str
    factory: Ref
    kinds: tuple[str, ...]
    description: str
    family: bool = False
    size_class: str = ""
    parameters: int | None = None
    hyperparameters: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricSpec:
    """``compute(examples, predictions) -> {name: value}``; predictions align with
    examples and are ``None`` where missing (a missing prediction scores 0). Values are
    on the leaderboard's 0-100 scale."""

    name: str
    compute: Ref
    description: str
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class SubmissionWriterSpec:
    """A leaderboard file format.

    ``write(path, examples, predictions)`` writes one test version's file;
    ``read(path) -> list[(id, value)]`` parses such a file back, in file order, raising
    :class:`clue_core.errors.InputError` on malformed content. ``ordered`` says whether
    the leaderboard scores the file by position (JSON Lines) or by key (one object).
    """

    name: str
    write: Ref
    read: Ref
    description: str
    ordered: bool = True


@runtime_checkable
class Learner(Protocol):
    """What a model factory returns for one task.

    ``fit`` receives ``score``, which decodes and scores dev predictions with the task's
    metrics, so a model can keep its best checkpoint without knowing the task.
    """

    def fit(
        self,
        train: Sequence[Example],
        dev: Sequence[Example],
        config: Mapping[str, Any],
        output_dir: Path,
        score: Callable[[Sequence[Prediction]], dict[str, float]],
    ) -> None: ...

    def predict(self, examples: Sequence[Example]) -> list[Prediction]: ...

    def save(self, directory: Path) -> None: ...


Spec = TaskSpec | ModelSpec | MetricSpec | SubmissionWriterSpec
