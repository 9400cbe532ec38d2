"""Frozen spec records that plugins return from their hooks, and lazy resolution.

Specs are plain data. Anything heavy (a reader, a model factory, a metric) is named as a
``"module:attr"`` string and imported only by :func:`resolve` when a run needs it, which
keeps ``clue-core list`` fast and free of torch.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

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


class FrozenRecordError(AttributeError):
    """Specs are values: they cannot be changed after construction (use ``replace``)."""


class Factory:
    """A default made afresh for every instance (``labels: dict = Factory(dict)``)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class Record:
    """Frozen value objects built from their class annotations, without code generation.

    A frozen dataclass compiles five or six methods per class when it is defined: about
    2 ms a class here, paid by every ``clue-core list``, which imports the specs. One
    generic ``__init__`` costs nothing at import. Records compare and hash by value,
    construct by position or keyword, and offer ``replace`` and ``as_dict``.
    """

    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        annotations = inspect.get_annotations(cls)  # this class's own, unevaluated
        names = [name for name, hint in annotations.items() if not str(hint).startswith("ClassVar")]
        cls._fields = tuple(names)
        cls._defaults = {name: cls.__dict__[name] for name in names if name in cls.__dict__}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        if len(args) > len(cls._fields):
            raise TypeError(f"{cls.__name__}() takes {len(cls._fields)} arguments, got {len(args)}")
        values = dict(zip(cls._fields, args))
        for name, value in kwargs.items():
            if name not in cls._fields:
                raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {name!r}")
            if name in values:
                raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
            values[name] = value
        for name in cls._fields:
            if name not in values:
                if name not in cls._defaults:
                    raise TypeError(f"{cls.__name__}() missing required argument {name!r}")
                default = cls._defaults[name]
                values[name] = default.make() if isinstance(default, Factory) else default
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenRecordError(f"cannot assign to field {name!r} of a {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise FrozenRecordError(f"cannot delete field {name!r} of a {type(self).__name__}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.__class__.__name__, self._values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({inner})"

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (as ``dataclasses.replace`` does)."""
        return type(self)(**{**{name: getattr(self, name) for name in self._fields}, **changes})

    def as_dict(self) -> dict[str, Any]:
        """Fields as plain data, nested records and tuples included (for ``--json``)."""
        return {name: _plain(getattr(self, name)) for name in self._fields}


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return value.as_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return value


Ref = str  # "module:attr"


class DataSource(Record):
    """An official archive: where it lives and how to verify it."""

    url: str
    filename: str
    size: int | None = None
    sha256: str | None = None
    md5: str | None = None
    mirrors: tuple[str, ...] = ()


class TestVersion(Record):
    """One test file of a task and the leaderboard file its predictions go to.

    ``split`` is the name passed to the task reader (``"test"``, ``"test1.0"``);
    ``version`` is what users see (``"1.1"``).
    """

    version: str
    split: str
    submission_file: str


class TaskSpec(Record):
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
    label_descriptions: Mapping[str, str] = Factory(dict)
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
    hyperparameters: Mapping[str, Any] = Factory(dict)
    notes: str = ""

    def test_version(self, version: str) -> TestVersion:
        for test in self.test_versions:
            if test.version == version or test.split == version:
                return test
        known = ", ".join(t.version for t in self.test_versions) or "none"
        raise KeyError(f"task {self.name} has no test version {version!r} (has: {known})")


class ModelSpec(Record):
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
    hyperparameters: Mapping[str, Any] = Factory(dict)


class MetricSpec(Record):
    """``compute(examples, predictions) -> {name: value}``; predictions align with
    examples and are ``None`` where missing (a missing prediction scores 0). Values are
    on the leaderboard's 0-100 scale."""

    name: str
    compute: Ref
    description: str
    kinds: tuple[str, ...] = ()


class SubmissionWriterSpec(Record):
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
