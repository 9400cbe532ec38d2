"""Readers: the official files of each classic task -> :class:`SplitData` of classification examples.

Each ``read_<task>(task, data_dir, split)`` maps the split to its official file name and
finds it anywhere below ``data_dir`` (official zips nest differently; ``__MACOSX``/
``.DS_Store`` debris is skipped), checks the type of every field it uses, and builds the
model input the official baselines build. Bad input raises :class:`InputError` naming
file, line and field before anything is written.

The kernel checks the split name, that labels are among ``task.labels`` and that test ids
are unique, naming the line through ``SplitData.where``; the readers only normalise labels
(integer codes become label strings, OCNLI/CMNLI ``"-"`` lines are dropped and counted).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    ClassificationExample,
    DataError,
    ExampleId,
    InputError,
    SplitData,
    TaskSpec,
    find_file,
    iter_jsonl,
)
from clue_core.plugin import field as get
from clue_tasks_classic.wsc import mark_spans

NO_MAJORITY = "-"


@dataclass
class _Context:
    """What a record builder needs besides the record: where it is and which split."""

    path: Path
    labelled: bool
    int_labels: int = 0
    notes: list[str] = field(default_factory=list)

    # ``label`` and ``text`` run for every line of files of up to 400,000 lines: the common
    # case (a plain string) is answered first, everything else goes through the full
    # type-checked path that words the error.

    def label(self, record: dict[str, Any], line: int) -> str | None:
        """The label string of a labelled split; integer codes (``1``, TNEWS ``102``) become strings.

        Whether the label is one of the task's is the kernel's check, made after reading.
        """
        if not self.labelled:
            return None
        value = record.get("label")
        if type(value) is str:
            return value
        value = get(record, "label", (str, int), path=self.path, line=line)
        self.int_labels += 1
        return str(value)

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


def _file_names(task: TaskSpec, split: str) -> tuple[str, ...]:
    """The official file name(s) of ``split``, in order of preference (the kernel checked the split)."""
    if task.name == "diagnostics":
        return ("diagnostics_test.json",)
    if task.name == "ocnli" and split == "train":
        # the official zip has train.50k.json; the OCNLI repository snapshot names it train.json
        return ("train.50k.json", "train.json")
    return (f"{split}.json",)


def data_file(task: TaskSpec, data_dir: Path, split: str) -> Path:
    """The file of ``split`` below ``data_dir``, looked up recursively by its official name."""
    names = _file_names(task, split)
    for name in names:
        found = find_file(Path(data_dir), name, required=False)
        if found is not None:
            return found
    wanted = " or ".join(names)
    raise DataError(f"{data_dir}: task {task.name} split {split!r} needs {wanted} (looked in all sub-folders)")


def _read(task: TaskSpec, data_dir: Path, split: str, build: Builder, skip: Skip | None = None) -> SplitData:
    path = data_file(task, data_dir, split)
    context = _Context(path, labelled=split in task.splits)
    examples = []
    lines = []
    skipped = 0
    for line, record in iter_jsonl(path):
        if skip is not None and context.labelled and skip(record, context):
            skipped += 1
            continue
        examples.append(build(record, line, context))
        lines.append(line)
    if not examples and not skipped:
        raise InputError(path, "contains no records")
    notes = list(context.notes)
    if skipped:
        notes.append(f"{path.name}: dropped {skipped} line(s) labelled '-' (no annotator majority); "
                     f"{len(examples)} kept")
    if context.int_labels:
        notes.append(f"{path.name}: {context.int_labels} integer-coded label(s) read as label strings")
    prefix = f"{path}:"
    return SplitData(examples=tuple(examples), notes=tuple(notes), files=(str(path),),
                     where=tuple(prefix + str(line) for line in lines))


def _with_label_file(task: TaskSpec, result: SplitData, data_dir: Path) -> SplitData:
    """Check ``labels.json`` (TNEWS, IFLYTEK) when present: it lists the label set of the data.

    A label the task does not know means data of another version or a hand-made file, so
    it is refused with the file's line; the descriptions are not used (the spec has them).
    The file joins ``files`` so the run manifest records its checksum.
    """
    path = find_file(Path(data_dir), "labels.json", required=False)
    if path is None:
        return result
    known = set(task.labels)
    for line, record in iter_jsonl(path):
        label = get(record, "label", (str, int), path=path, line=line)
        if str(label) not in known:
            raise InputError(path, f"unknown label {label!r}: task {task.name} has {len(known)} labels "
                             f"({task.labels[0]!r} .. {task.labels[-1]!r})", line=line, field="label")
    return SplitData(result.examples, result.notes, (*result.files, str(path)), result.where)


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


def read_afqmc(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """AFQMC: ``sentence1``/``sentence2``; train/dev have no id (line index), test has ``id``."""
    return _read(task, data_dir, split, _pair("sentence1", "sentence2"))


def read_ocnli(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """OCNLI: sentence pair with its own ``id``; ``"-"`` (no majority) lines are dropped and counted."""
    return _read(task, data_dir, split, _pair("sentence1", "sentence2"), skip=_no_majority)


def read_cmnli(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """CMNLI (files in ``cmnli_public/``): as OCNLI; train/dev have no id."""
    return _read(task, data_dir, split, _pair("sentence1", "sentence2"), skip=_no_majority)


def read_diagnostics(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """The diagnostics set: ``premise``/``hypothesis`` keyed by ``index``; test only."""
    return _read(task, data_dir, split, _pair("premise", "hypothesis", ("index", "id")))


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


def read_tnews(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """TNEWS: the title (``sentence``) alone, as the baselines use it; labels.json is checked."""
    result = _read(task, data_dir, split, _single(("label_desc", "keywords")))
    return _with_label_file(task, result, data_dir)


def read_iflytek(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """IFLYTEK: the app description; the description field here is ``label_des``."""
    result = _read(task, data_dir, split, _single(("label_des",)))
    return _with_label_file(task, result, data_dir)


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


def read_cluewsc2020(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """CLUEWSC2020: one text with the noun marked ``_…_`` and the pronoun ``[…]``."""
    return _read(task, data_dir, split, _wsc)


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


def read_csl(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    """CSL: the space-joined keywords paired with the abstract, as the baselines pair them."""
    return _read(task, data_dir, split, _csl)
