"""The specs plugins return from their hooks: frozen, slotted dataclasses of plain data.

Specs describe; they do not run. Anything heavy (a reader, a model factory, a metric) is
named as a ``"module:attr"`` string and imported only by :func:`resolve` when a run needs
it, which keeps ``clue-core list`` fast and free of torch. The kernel checks every spec
once all plugins are loaded (:mod:`clue_core.checks`), so a wrong name fails on the
plugin's row in ``clue-core list``, not after an hour of training.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from clue_core.leaderboards import Leaderboard, PublishedScore, TestVersion
from clue_core.prompt_variants import Prompt

Ref = str
"""``"package.module:attr"``: resolved lazily with :func:`resolve`."""


def resolve(ref: Ref | Callable[..., Any]) -> Any:
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


class SpecMixin:
    """``as_dict`` for ``--json`` output and manifests, shared by every spec."""

    __slots__ = ()

    def as_dict(self) -> dict[str, Any]:
        return _plain(self)  # type: ignore[no-any-return]


def _plain(value: Any) -> Any:
    """JSON-able data: a spec, or a part of one declared elsewhere (a Prompt), field by field."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return value


@dataclass(frozen=True, slots=True)
class Setting(SpecMixin):
    """One setting a spec reads, declared so the kernel can check, convert and explain it.

    ``type`` is ``bool``, ``int``, ``float`` or ``str``; ``also`` lists string values
    accepted besides that type (``eval_every`` takes ``"epoch"`` or a step count).
    ``minimum``/``maximum`` bound numbers inclusively, ``above`` exclusively.
    The three flags say where the value matters beyond the step that reads it:
    ``schedule`` (it changes what a run computes, so ``--resume`` insists it is unchanged),
    ``cache_key`` (cached results are only reused under the same value) and ``report``
    (shown beside the scores in reports). ``names_model`` marks a setting whose value is
    a model name (a judge); that model's own settings live under ``<name>.<setting>``.
    ``secret`` values (an API key) never reach a manifest, a log, ``--dry-run`` or an error.
    ``env`` names the environment variable the step falls back to where the value is empty; with
    ``secret``, that variable's value is a secret too. ``secret_env`` marks a setting whose value
    *names* an environment variable holding a secret (``api_key_env``). Either way the kernel
    redacts the variable's value (8 characters or longer) from everything it writes or prints
    (:mod:`clue_core.redaction`). ``model_reads`` marks a task's setting that only a model reads (a
    prompt's ``protocol``): with a model that declares no setting of that name, a value given for it
    is refused, not silently ignored.
    """

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    also: tuple[str, ...] = ()
    schedule: bool = False
    cache_key: bool = False
    report: bool = False
    names_model: bool = False
    secret: bool = False
    env: str = ""
    secret_env: bool = False
    model_reads: bool = False


OFFICIAL_DATA_URL = "https://storage.googleapis.com/cluebenchmark/tasks/"
"""Where the CLUE benchmark publishes its task archives (``CLUE_DATA_URL`` replaces it)."""


@dataclass(frozen=True, slots=True)
class DataSource(SpecMixin):
    """An official archive: where it lives and how to verify it."""

    url: str
    filename: str
    size: int | None = None
    sha256: str | None = None
    md5: str | None = None
    mirrors: tuple[str, ...] = ()

    @classmethod
    def official(cls, filename: str, size: int | None = None, sha256: str | None = None,
                 md5: str | None = None) -> DataSource:
        """An archive on the CLUE benchmark's own host."""
        return cls(url=OFFICIAL_DATA_URL + filename, filename=filename, size=size, sha256=sha256, md5=md5)


@dataclass(frozen=True, slots=True)
class TaskSpec(SpecMixin):
    """Everything the kernel needs to know about a task, without importing its code.

    ``reader(task, data_dir, split) -> SplitData``. ``decode(examples, predictions[,
    settings=])`` rewrites a whole split's predictions (a joint assignment per passage) and
    receives ``settings`` (its ``decode_settings`` values) when it declares any; the reader, in the
    same way, receives ``settings=`` with its ``reader_settings`` values (which of FewCLUE's
    training splits a run reads); ``repeat`` turns one plan of it into several, one per value of
    one of them (a :class:`clue_core.plans.PlanExpansion`, its plugin's: FewCLUE's ``split=all``).
    ``recommendations`` are the task's reference values for settings that a model may
    declare (``learning_rate``, ``max_length``); ``model_recommendations`` are per-model
    overrides the task owns, keyed by model name or family (``"hf-tiny"``, ``"hf"``).
    ``scored_splits`` are labelled splits besides dev that a run predicts and scores the same way
    (FewCLUE's ``test_public``): each one's metrics go into ``metrics.json`` under its name.
    """

    name: str
    kind: str
    description: str
    reader: Ref
    labels: tuple[str, ...] = ()
    label_descriptions: Mapping[str, str] = field(default_factory=dict)
    metrics: tuple[str, ...] = ("accuracy",)
    primary_metric: str = "accuracy"
    leaderboards: tuple[Leaderboard, ...] = ()
    splits: tuple[str, ...] = ("train", "dev")
    scored_splits: tuple[str, ...] = ()
    test_versions: tuple[TestVersion, ...] = ()
    writer: str = "jsonl_labels"
    source: DataSource | None = None
    data_files: tuple[str, ...] = ()
    sample: str | None = None
    decode: Ref | None = None
    decode_settings: tuple[Setting, ...] = ()
    reader_settings: tuple[Setting, ...] = ()
    repeat: Any = None  # a clue_core.plans.PlanExpansion (specs cannot import plans: plans imports specs)
    settings: tuple[Setting, ...] = ()
    recommendations: Mapping[str, Any] = field(default_factory=dict)
    model_recommendations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    prompt: Prompt | None = None
    published: tuple[PublishedScore, ...] = ()
    notes: str = ""
    #: ``"module:attr"`` of ``cluster(example) -> str | None``: the group an example shares with others (the
    #: passage several questions ask of); its intervals resample groups (:mod:`clue_core.uncertainty`)
    cluster: Ref | None = None
    cluster_unit: str = ""  # what a group is, in words ("passage")

    def test_version(self, version: str) -> TestVersion:
        for test in self.test_versions:
            if test.version == version or test.split == version:
                return test
        known = ", ".join(t.version for t in self.test_versions) or "none"
        raise KeyError(f"task {self.name} has no test version {version!r} (has: {known})")

    @property
    def readable_splits(self) -> tuple[str, ...]:
        """Every split name the reader may be asked for: train/dev and each test file."""
        return (*self.splits, *self.scored_splits, *(t.split for t in self.test_versions))


@dataclass(frozen=True, slots=True)
class ModelSpec(SpecMixin):
    """A model (or, with ``family=True``, a family matched as ``name:<argument>``).

    ``factory(argument, task, settings) -> Learner`` builds a learner for one task, with
    the values of the settings it declares; ``argument`` is the text after ``name:`` for
    families (a hub id or a directory). ``recommendations`` are keyed by example kind
    (``"*"`` for all kinds); ``recipes`` are per-task values the model's catalogue states
    explicitly. ``trains`` is False for models that are only evaluated (LLMs zero-shot),
    which may then run tasks that have no training split. ``explain(name, argument, values)``,
    when given, returns ``{setting: (value, why)}`` for values the model resolves itself when it
    loads (``dtype=auto``): ``--dry-run`` shows them as they will be on this machine.
    """

    name: str
    factory: Ref
    kinds: tuple[str, ...]
    description: str
    family: bool = False
    size_class: str = ""
    parameters: int | None = None
    category: str = ""
    trains: bool = True
    settings: tuple[Setting, ...] = ()
    recommendations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    recipes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    explain: Ref | None = None


@dataclass(frozen=True, slots=True)
class MetricSpec(SpecMixin):
    """``compute(examples, predictions[, settings=][, context=])`` → ``{name: value}`` or a
    :class:`~clue_core.examples.MetricResult`.

    Predictions align with examples and are ``None`` where missing (scored as wrong);
    values are on the leaderboard's 0-100 scale. ``produces`` names every total it
    returns (the primary metric must be one of them). A metric that declares
    ``settings`` receives their values; one with ``uses_model`` receives the run context,
    through which it may load a model (a judge for open questions). ``check(settings)``, when
    given, runs when the run is planned, with the same values, and raises ``ClueError`` for a
    value that cannot work (a reference run that is not there): a run of several tasks must
    not find that out after it has written the earlier ones. ``counts`` names the totals that
    count things (questions, judged answers) rather than score them: shown as whole numbers.
    """

    name: str
    compute: Ref
    description: str
    kinds: tuple[str, ...] = ()
    produces: tuple[str, ...] = ()
    settings: tuple[Setting, ...] = ()
    uses_model: bool = False
    check: Ref | None = None
    counts: tuple[str, ...] = ()

    @property
    def totals(self) -> tuple[str, ...]:
        return self.produces or (self.name,)


@dataclass(frozen=True, slots=True)
class SubmissionWriterSpec(SpecMixin):
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


@dataclass(frozen=True, slots=True)
class CommandSpec(SpecMixin):
    """A ``clue-core`` sub-command a plugin adds (``report``, ``compare``).

    ``command`` names a :class:`click.Command` as ``"module:attr"``; it is imported only when
    that command runs, so ``clue-core --help`` and ``clue-core list`` stay as cheap as before
    (``help`` is what ``--help`` shows beside the name). A name that a built-in command or
    another plugin already uses is an error on this plugin's row. ``api``, when given, names the
    command's Python function (``"module:attr"``, imported on use), called as ``api(kernel, ...)``
    by the :mod:`clue_core.api` function of the command's name (``api.submit``, ``api.evaluate``),
    so that function works wherever the plugin is installed and says what to install where not.
    """

    name: str
    help: str
    command: Ref
    api: Ref | None = None


@dataclass(frozen=True, slots=True)
class ReportSectionSpec(SpecMixin):
    """A view of ``clue-core report`` a plugin adds, without touching the report's code.

    ``inputs`` are the file names this section reads among the report's paths (a path that
    is such a file, or a folder holding one, or one level above it): the report finds them
    and hands them to ``build(files, report) -> (data, warnings)``, which returns the
    section's JSON-able data (``None`` when it has nothing to show) and warnings to print.
    The data is stored in ``report.json`` under ``key`` (``name`` when empty).
    ``html(data, kit) -> str`` renders the section's body; ``kit`` is the report's toolkit
    (tables, numbers, figures and charts drawn by the report), so a section plugin never
    imports matplotlib or the report itself. ``markdown(data, kit) -> list[str]`` gives its
    lines in ``report.md``. ``order`` places it on the page (smaller first). ``empty`` is what
    ``report.json`` holds under the key when none of the inputs is found (``()`` is written as
    ``[]``); ``None`` leaves the key out. A reader of report.json then finds the key whether or
    not there was anything to show.
    """

    name: str
    title: str
    description: str
    build: Ref
    html: Ref
    markdown: Ref | None = None
    inputs: tuple[str, ...] = ()
    key: str = ""
    order: int = 100
    empty: Any = None  # a tuple (written as a JSON list) or None

    @property
    def data_key(self) -> str:
        """Where the section's data sits in ``report.json``."""
        return self.key or self.name
