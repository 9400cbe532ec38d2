"""Readers: FewCLUE's official files -> :class:`SplitData`, one reader per task.

Every task folder of FewCLUE's ``datasets/`` holds five train/dev pairs (``train_0.json`` /
``dev_0.json`` … ``_4``), their union (``train_few_all.json`` / ``dev_few_all.json``), a
labelled ``test_public.json`` and the unlabelled ``test.json`` the leaderboard scores. The
kernel asks for ``train``/``dev``: the task setting ``split`` (``few_all`` by default, or
``0``–``4``) says which pair those are. ``test_public`` and ``test`` are read as they are.

``data_dir`` is a task's own folder or any folder above it (FewCLUE's ``datasets/``, the
repository, an unpacked zip of either): the task's files are looked up in the folder named
after it (``eprstmt/``, ``csl/`` …). The files differ from CLUE's in small ways, each read as
it is rather than refused: integer labels (TNEWS, IFLYTEK) become label strings, TNEWS'
``test.json`` has string ids, CLUEWSC's ids are ``idx`` except in ``test.json`` (``id``),
OCNLI's ``label0``…``label4`` are null in most training lines, and CSLDCP's ``test_public.json``
gives 49 ids to two different records each (the later one is read as ``"<id>#<line>"``, since
predictions are matched by id). Anything else that is wrong is one :class:`InputError` naming
file, line and field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    ClassificationExample,
    DataError,
    Example,
    ExampleId,
    InputError,
    SplitData,
    TaskSpec,
    find_file,
    iter_jsonl,
)
from clue_core.plugin import field as get
from clue_tasks_fewclue.catalog import PROTOCOLS

DEFAULT_PROTOCOL = PROTOCOLS[0]
#: The task folders of FewCLUE's ``datasets/``, named by task.
FOLDERS = ("eprstmt", "csldcp", "tnews", "iflytek", "ocnli", "bustm", "chid", "csl", "cluewsc")
NO_MAJORITY = "-"


def folder_name(task: TaskSpec) -> str:
    """``fewclue-csl`` -> ``csl``: the task's folder in FewCLUE's ``datasets/``."""
    return task.name.removeprefix("fewclue-")


def protocol_of(settings: Mapping[str, Any] | None) -> str:
    """The train/dev pair a run uses: the ``split`` setting, ``few_all`` when none is given."""
    value = str((settings or {}).get("split", DEFAULT_PROTOCOL))
    if value not in PROTOCOLS:
        raise DataError(f"split={value!r} is not a FewCLUE train/dev pair (choose {', '.join(PROTOCOLS)})")
    return value


def file_name(split: str, protocol: str = DEFAULT_PROTOCOL) -> str:
    """The official file of a kernel split: ``train`` + ``3`` -> ``train_3.json``; ``test_public.json``."""
    if split in ("train", "dev"):
        return f"{split}_{protocol}.json"
    return f"{split}.json"


def _junk(path: Path) -> bool:
    return any(part == "__MACOSX" or part.startswith(".") for part in path.parts)


def task_dir(task: TaskSpec, data_dir: Path, name: str) -> Path:
    """The folder holding the task's ``name``: ``data_dir`` itself, or its shallowest ``<folder>/`` below.

    A parent such as ``datasets/`` holds every task's files under the same names, so a
    file found there is only taken from the folder named after the task; a folder named after
    another FewCLUE task is refused rather than read as this one.
    """
    root = Path(data_dir)
    folder = folder_name(task)
    if root.name in FOLDERS and root.name != folder:
        raise DataError(f"{root}: this is FewCLUE's {root.name} folder, not {folder}'s (task {task.name}); "
                        f"pass {root.parent} or {root.parent / folder}")
    if (root / name).is_file():
        return root
    found = sorted((p for p in root.glob(f"**/{folder}") if p.is_dir() and not _junk(p.relative_to(root))),
                   key=lambda p: (len(p.relative_to(root).parts), str(p)))
    for candidate in found:
        if find_file(candidate, name, required=False) is not None:
            return candidate
    if root.name == folder:
        return root  # its files in a wrapper folder: find_file looks in sub-folders
    raise DataError(f"{root}: task {task.name} needs {name} in a folder named {folder}/ "
                    f"(or pass the task's folder itself); looked in all sub-folders")


def data_file(task: TaskSpec, data_dir: Path, split: str, settings: Mapping[str, Any] | None = None) -> Path:
    """The file the reader opens for ``split`` under the run's ``split`` setting."""
    name = file_name(split, protocol_of(settings))
    found = find_file(task_dir(task, data_dir, name), name, required=False)
    if found is None:
        raise DataError(f"{data_dir}: task {task.name} split {split!r} needs {name} (looked in all sub-folders)")
    return found


@dataclass
class Context:
    """What a record builder needs besides the record: the file, and whether its lines carry labels."""

    path: Path
    labelled: bool
    id_names: tuple[str, ...] = ("id",)
    int_labels: int = 0
    notes: list[str] = field(default_factory=list)

    def text(self, record: dict[str, Any], name: str, line: int) -> str:
        value = record.get(name)
        return value if type(value) is str else get(record, name, str, path=self.path, line=line)

    def label(self, record: dict[str, Any], line: int) -> str | None:
        """The label string of a labelled line (integer codes become strings); None in ``test.json``."""
        if not self.labelled:
            return None
        value = get(record, "label", (str, int), path=self.path, line=line)
        if type(value) is int:
            self.int_labels += 1
        return str(value)

    def example_id(self, record: dict[str, Any], line: int) -> ExampleId:
        """The file's own id (the first of ``id_names`` present, int or str), else the 0-based line index."""
        for name in self.id_names:
            if name in record:
                return get(record, name, (int, str), path=self.path, line=line)
        return line - 1

    def optional(self, record: dict[str, Any], line: int, names: tuple[str, ...], types: tuple[type, ...]) -> None:
        """Fields the input does not use, checked only for their type: a wrong one means a broken file."""
        for name in names:
            if name in record and record[name] is not None:
                get(record, name, types, path=self.path, line=line)


Builder = Callable[[dict[str, Any], int, Context], Example]


def read_file(task: TaskSpec, path: Path, split: str, build: Builder, id_names: tuple[str, ...] = ("id",),
              note: str = "") -> SplitData:
    """Every line of ``path`` through ``build``; repeated ids of labelled files are made unique."""
    context = Context(path, labelled=split != "test", id_names=id_names)
    examples: list[Example] = []
    lines: list[int] = []
    seen: set[str] = set()
    renamed = dropped = 0
    for line, record in iter_jsonl(path):
        if context.labelled and task.kind == "classification" and record.get("label") == NO_MAJORITY:
            dropped += 1  # OCNLI's no-majority label; FewCLUE's files have none, CLUE's do
            continue
        example = build(record, line, context)
        key = str(example.id)
        if context.labelled and key in seen:
            # CSLDCP's test_public.json: two different records share 49 ids; predictions are matched by id
            example = _with_id(example, f"{example.id}#{line}")
            renamed += 1
        seen.add(str(example.id))
        examples.append(example)
        lines.append(line)
    if not examples:
        raise InputError(path, "contains no records")
    notes = [note] if note else []
    notes += context.notes
    if dropped:
        notes.append(f"{path.name}: dropped {dropped} line(s) labelled '-' (no annotator majority)")
    if renamed:
        notes.append(f"{path.name}: {renamed} id(s) repeated by another record; the later record is read "
                     f"as '<id>#<line>'")
    if context.int_labels:
        notes.append(f"{path.name}: {context.int_labels} integer-coded label(s) read as label strings")
    prefix = f"{path}:"
    return SplitData(examples=tuple(examples), notes=tuple(notes), files=(str(path),),
                     where=tuple(prefix + str(line) for line in lines))


def _with_id(example: Example, new_id: str) -> Example:
    return replace(example, id=new_id)  # type: ignore[type-var]


def reader(build: Builder, id_names: tuple[str, ...] = ("id",), test_ids: tuple[str, ...] | None = None
           ) -> Callable[..., SplitData]:
    """A reader ``read(task, data_dir, split, settings=None)`` built from one record builder.

    ``test_ids`` are the id fields of ``test.json`` when they differ (CLUEWSC: ``id`` there,
    ``idx`` elsewhere). ``settings`` carries the task's ``split`` setting.
    """

    def read(task: TaskSpec, data_dir: Path, split: str, settings: Mapping[str, Any] | None = None) -> SplitData:
        path = data_file(task, data_dir, split, settings)
        names = test_ids if split == "test" and test_ids is not None else id_names
        note = f"read {path.name}" if split in ("train", "dev") else ""
        return read_file(task, path, split, build, names, note)

    return read


# --- the classification tasks ------------------------------------------------------------

def _single(text: str, unused: tuple[str, ...] = ()) -> Builder:
    def build(record: dict[str, Any], line: int, ctx: Context) -> ClassificationExample:
        ctx.optional(record, line, unused, (str,))
        return ClassificationExample(id=ctx.example_id(record, line), text=ctx.text(record, text, line),
                                     label=ctx.label(record, line))

    return build


def _pair(first: str, second: str, unused: tuple[str, ...] = ()) -> Builder:
    def build(record: dict[str, Any], line: int, ctx: Context) -> ClassificationExample:
        ctx.optional(record, line, unused, (str,))
        return ClassificationExample(id=ctx.example_id(record, line), text=ctx.text(record, first, line),
                                     text_pair=ctx.text(record, second, line), label=ctx.label(record, line))

    return build


def _csl(record: dict[str, Any], line: int, ctx: Context) -> ClassificationExample:
    keywords = get(record, "keyword", list, path=ctx.path, line=line)
    if not keywords or not all(isinstance(k, str) for k in keywords):
        raise InputError(ctx.path, "expected a non-empty list of strings", line=line, field="keyword")
    return ClassificationExample(id=ctx.example_id(record, line), text=" ".join(keywords),
                                 text_pair=ctx.text(record, "abst", line), label=ctx.label(record, line))


def _wsc(record: dict[str, Any], line: int, ctx: Context) -> ClassificationExample:
    from clue_tasks_fewclue.wsc import marked_text

    example_id = ctx.example_id(record, line)
    text = marked_text(ctx.text(record, "text", line), record, ctx.path, line, f"id {example_id}")
    return ClassificationExample(id=example_id, text=text, label=ctx.label(record, line))


OCNLI_UNUSED = ("level", "genre", "prem_id", "label0", "label1", "label2", "label3", "label4")

read_eprstmt = reader(_single("sentence"))
read_csldcp = reader(_single("content"))
read_tnews = reader(_single("sentence", ("label_desc", "keywords")))
read_iflytek = reader(_single("sentence", ("label_des",)))
read_ocnli = reader(_pair("sentence1", "sentence2", OCNLI_UNUSED))
read_bustm = reader(_pair("sentence1", "sentence2"))
read_csl = reader(_csl)
read_cluewsc = reader(_wsc, id_names=("idx", "id"), test_ids=("id", "idx"))
