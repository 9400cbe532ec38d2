"""Readers: the official files of each classic task -> :class:`SplitData` of classification examples.

Each ``read_<task>(data_dir, split)`` finds its file by name anywhere below ``data_dir``
(official zips nest differently; ``__MACOSX``/``.DS_Store`` debris is skipped), checks
every field it uses, and builds the model input the official baselines build. Bad input
raises :class:`InputError` naming file, line and field before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core.data import find_file
from clue_core.errors import DataError, InputError
from clue_core.examples import ClassificationExample, ExampleId, SplitData
from clue_core.jsonio import field as get
from clue_core.jsonio import iter_jsonl
from clue_core.specs import TaskSpec
from clue_tasks_classic.catalog import task as task_spec
from clue_tasks_classic.wsc import mark_spans

NO_MAJORITY = "-"


@dataclass
class _Context:
    """What a record builder needs besides the record: where it is and which split."""

    spec: TaskSpec
    path: Path
    labelled: bool
    int_labels: int = 0
    notes: list[str] = field(default_factory=list)
    known_labels: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.known_labels = frozenset(self.spec.labels)

    # ``label`` and ``text`` run for every line of files of up to 400,000 lines: the common
    # case (a plain string that is fine) is answered first, everything else goes through
    # the full type-checked path that words the error.

    def label(self, record: dict[str, Any], line: int) -> str | None:
        """The label string of a labelled split; integer codes of known labels are accepted."""
        if not self.labelled:
            return None
        value = record.get("label")
        if type(value) is str and value in self.known_labels:
            return value
        value = get(record, "label", (str, int), path=self.path, line=line)
        text = str(value)
        if text not in self.spec.labels:
            raise InputError(self.path, f"unknown label {value!r} (expected {_expected(self.spec.labels)})",
                             line=line, field="label")
        if isinstance(value, int):
            self.int_labels += 1
        return text

    def text(self, record: dict[str, Any], name: str, line: int) -> str:
        value = record.get(name)
        return value if type(value) is str else get(record, name, str, path=self.path, line=line)

    def example_id(self, record: dict[str, Any], line: int, names: tuple[str, ...] = ("id",)) -> ExampleId:
        """The file's own id (first of ``names`` present), else the 0-based line index."""
        for name in names:
            if name in record:
                return get(record, name, (int, str), path=self.path, line=line)
        return line - 1


Builder = Callable[[dict[str, Any], int, _Context], ClassificationExample]
Skip = Callable[[dict[str, Any], _Context], bool]


def _expected(allowed: tuple[str, ...]) -> str:
    if len(allowed) <= 16:
        return "one of " + ", ".join(repr(label) for label in allowed)
    return f"one of {allowed[0]!r} .. {allowed[-1]!r} ({len(allowed)} labels)"


def _file_names(spec: TaskSpec, split: str) -> tuple[str, ...]:
    if spec.name == "diagnostics":
        return ("diagnostics_test.json",)
    if spec.name == "ocnli" and split == "train":
        # the official zip has train.50k.json; the OCNLI repository snapshot names it train.json
        return ("train.50k.json", "train.json")
    return (f"{split}.json",)


def data_file(spec: TaskSpec, data_dir: Path, split: str) -> Path:
    """The file of ``split`` below ``data_dir``, looked up recursively by its official name."""
    test_splits = tuple(test.split for test in spec.test_versions)
    if split not in spec.splits + test_splits:
        known = ", ".join(spec.splits + test_splits)
        raise DataError(f"task {spec.name} has no split {split!r} (has: {known})")
    names = _file_names(spec, split)
    for name in names:
        found = find_file(Path(data_dir), name, required=False)
        if found is not None:
            return found
    wanted = " or ".join(names)
    raise DataError(f"{data_dir}: task {spec.name} split {split!r} needs {wanted} (looked in all sub-folders)")


def _read(name: str, data_dir: Path, split: str, build: Builder, skip: Skip | None = None) -> SplitData:
    spec = task_spec(name)
    path = data_file(spec, data_dir, split)
    context = _Context(spec, path, labelled=split in spec.splits)
    examples = []
    skipped = 0
    for line, record in iter_jsonl(path):
        if skip is not None and context.labelled and skip(record, context):
            skipped += 1
            continue
        examples.append(build(record, line, context))
    if not examples and not skipped:
        raise InputError(path, "contains no records")
    notes = list(context.notes)
    if skipped:
        notes.append(f"{path.name}: dropped {skipped} line(s) labelled '-' (no annotator majority); "
                     f"{len(examples)} kept")
    if context.int_labels:
        notes.append(f"{path.name}: {context.int_labels} integer-coded label(s) read as label strings")
    return SplitData(examples=tuple(examples), notes=tuple(notes), files=(str(path),))


def _with_descriptions(result: SplitData, data_dir: Path, spec: TaskSpec) -> SplitData:
    """Attach the descriptions of ``labels.json`` (TNEWS ``label_desc``, IFLYTEK ``label_des``)."""
    path = find_file(Path(data_dir), "labels.json", required=False)
    if path is None:
        return SplitData(result.examples, result.notes, result.files, dict(spec.label_descriptions))
    descriptions: dict[str, str] = {}
    for line, record in iter_jsonl(path):
        label = str(get(record, "label", (str, int), path=path, line=line))
        if label not in spec.labels:
            raise InputError(path, f"unknown label {label!r} (expected {_expected(spec.labels)})",
                             line=line, field="label")
        desc_field = "label_desc" if "label_desc" in record else "label_des"
        descriptions[label] = get(record, desc_field, str, path=path, line=line)
    return SplitData(result.examples, result.notes, (*result.files, str(path)), descriptions)


# --- sentence pairs -----------------------------------------------------------------------

def _pair(first: str, second: str, id_names: tuple[str, ...] = ("id",)) -> Builder:
    def build(record: dict[str, Any], line: int, ctx: _Context) -> ClassificationExample:
        return ClassificationExample(
            id=ctx.example_id(record, line, id_names),
            text=ctx.text(record, first, line),
            text_pair=ctx.text(record, second, line),
            label=ctx.label(record, line),
        )

    return build


def _no_majority(record: dict[str, Any], ctx: _Context) -> bool:
    return record.get("label") == NO_MAJORITY


def read_afqmc(data_dir: Path, split: str) -> SplitData:
    """AFQMC: ``sentence1``/``sentence2``; train/dev have no id (line index), test has ``id``."""
    return _read("afqmc", data_dir, split, _pair("sentence1", "sentence2"))


def read_ocnli(data_dir: Path, split: str) -> SplitData:
    """OCNLI: sentence pair with its own ``id``; ``"-"`` (no majority) lines are dropped and counted."""
    return _read("ocnli", data_dir, split, _pair("sentence1", "sentence2"), skip=_no_majority)


def read_cmnli(data_dir: Path, split: str) -> SplitData:
    """CMNLI (files in ``cmnli_public/``): as OCNLI; train/dev have no id."""
    return _read("cmnli", data_dir, split, _pair("sentence1", "sentence2"), skip=_no_majority)


def read_diagnostics(data_dir: Path, split: str) -> SplitData:
    """The diagnostics set: ``premise``/``hypothesis`` keyed by ``index``; test only."""
    return _read("diagnostics", data_dir, split, _pair("premise", "hypothesis", ("index", "id")))


# --- single texts ---------------------------------------------------------------------------

def _single(optional_strings: tuple[str, ...]) -> Builder:
    def build(record: dict[str, Any], line: int, ctx: _Context) -> ClassificationExample:
        for name in optional_strings:  # not used as input, but a wrong type means a broken file
            get(record, name, str, path=ctx.path, line=line, default="")
        return ClassificationExample(
            id=ctx.example_id(record, line),
            text=ctx.text(record, "sentence", line),
            label=ctx.label(record, line),
        )

    return build


def read_tnews(data_dir: Path, split: str) -> SplitData:
    """TNEWS: the title (``sentence``) alone, as the baselines use it; descriptions from labels.json."""
    result = _read("tnews", data_dir, split, _single(("label_desc", "keywords")))
    return _with_descriptions(result, data_dir, task_spec("tnews"))


def read_iflytek(data_dir: Path, split: str) -> SplitData:
    """IFLYTEK: the app description; the description field here is ``label_des``."""
    result = _read("iflytek", data_dir, split, _single(("label_des",)))
    return _with_descriptions(result, data_dir, task_spec("iflytek"))


# --- CLUEWSC2020 and CSL ------------------------------------------------------------------

def _wsc(record: dict[str, Any], line: int, ctx: _Context) -> ClassificationExample:
    # train/dev carry ``idx``, the test files ``id``: accept either, prefer the split's own
    example_id = ctx.example_id(record, line, ("idx", "id") if ctx.labelled else ("id", "idx"))
    text = ctx.text(record, "text", line)
    target = get(record, "target", dict, path=ctx.path, line=line)

    def part(name: str, expected: type) -> Any:
        try:
            return get(target, name, expected, path=ctx.path, line=line)
        except InputError as exc:
            raise InputError(ctx.path, exc.reason, line=line, field=f"target.{name}") from None

    marked = mark_spans(
        text,
        noun=(part("span1_text", str), part("span1_index", int)),
        pronoun=(part("span2_text", str), part("span2_index", int)),
        path=ctx.path,
        line=line,
        record=f"id {example_id}",
    )
    return ClassificationExample(id=example_id, text=marked, label=ctx.label(record, line))


def read_cluewsc2020(data_dir: Path, split: str) -> SplitData:
    """CLUEWSC2020: one text with the noun marked ``_…_`` and the pronoun ``[…]``."""
    return _read("cluewsc2020", data_dir, split, _wsc)


def _csl(record: dict[str, Any], line: int, ctx: _Context) -> ClassificationExample:
    keywords = get(record, "keyword", list, path=ctx.path, line=line)
    for position, keyword in enumerate(keywords):
        if not isinstance(keyword, str):
            raise InputError(ctx.path, f"item {position} is {type(keyword).__name__}, expected a string",
                             line=line, field="keyword")
    return ClassificationExample(
        id=ctx.example_id(record, line),
        text=" ".join(keywords),
        text_pair=ctx.text(record, "abst", line),
        label=ctx.label(record, line),
    )


def read_csl(data_dir: Path, split: str) -> SplitData:
    """CSL: the space-joined keywords paired with the abstract, as the baselines pair them."""
    return _read("csl", data_dir, split, _csl)
