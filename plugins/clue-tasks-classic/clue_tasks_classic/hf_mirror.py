"""An optional data source: the Hugging Face ``clue/clue`` mirror, written back in CLUE's own format.

The mirror differs from the official files: labels are class indices (CMNLI, OCNLI and
diagnostics in the order neutral, entailment, contradiction; CLUEWSC true, false), test
rows carry ``label = -1``, ids are row indices and TNEWS loses its keywords. The pure
functions here map a mirror row back to an official record, so the normal readers
read the result. ``datasets`` is imported only by :func:`export` (the ``hf`` extra).

Which test version the mirror holds (1.0 or 1.1) and whether its ids are the official
ones is not established, so test rows are written to ``test.unverified.json``, a name no
TestVersion maps to: no submission file is ever named after a version nobody vouched for.

Usage: ``python -m clue_tasks_classic.hf_mirror TASK DEST_DIR`` then
``clue-core run TASK --data-dir DEST_DIR``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, write_jsonl
from clue_tasks_classic import labels

HUB_DATASET = "clue/clue"
UNVERIFIED_SUFFIX = ".unverified.json"
MIRROR_NLI = ("neutral", "entailment", "contradiction")

#: The mirror's ClassLabel names per task: a label index ``i`` means ``LABEL_NAMES[task][i]``.
LABEL_NAMES: dict[str, tuple[str, ...]] = {
    "afqmc": labels.BINARY,
    "tnews": labels.TNEWS,
    "iflytek": labels.IFLYTEK,
    "ocnli": MIRROR_NLI,
    "cmnli": MIRROR_NLI,
    "diagnostics": MIRROR_NLI,
    "cluewsc2020": ("true", "false"),
    "csl": labels.BINARY,
}
TASKS = tuple(LABEL_NAMES)
SPLIT_NAMES = {"train": "train", "validation": "dev", "test": "test"}
"""The mirror's split names -> CLUE's."""


class MirrorError(ClueError):
    """A mirror row or dataset that cannot be mapped back to CLUE's format."""


def label_string(task: str, value: Any, *, where: str = "") -> str | None:
    """The CLUE label string of a mirror label: a class index, ``-1`` (no label) or already a string."""
    names = LABEL_NAMES[task]
    if isinstance(value, str):
        if value in names:
            return value
        raise MirrorError(f"{task}{where}: unknown label {value!r}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise MirrorError(f"{task}{where}: expected a class index, got {value!r}")
    if value == -1:
        return None
    if not 0 <= value < len(names):
        raise MirrorError(f"{task}{where}: class index {value} out of range 0..{len(names) - 1}")
    return names[value]


def _value(row: Mapping[str, Any], name: str, task: str, where: str) -> Any:
    if name not in row:
        raise MirrorError(f"{task}{where}: mirror row has no {name!r} column")
    return row[name]


def to_official(task: str, row: Mapping[str, Any], split: str) -> dict[str, Any]:
    """One mirror row -> the record the official ``<split>.json`` of ``task`` would hold.

    ``split`` is CLUE's name (``train``, ``dev``, ``test``). Labelled splits must carry a
    label; on test the label is dropped whatever it is.
    """
    if task not in LABEL_NAMES:
        raise MirrorError(f"no mirror mapping for task {task!r} (has: {', '.join(TASKS)})")
    index = row.get("idx")
    where = f" {split} row {index}" if index is not None else f" {split} row"

    def get(name: str) -> Any:
        return _value(row, name, task, where)

    label = None
    if split != "test":
        label = label_string(task, get("label"), where=where)
        if label is None:
            raise MirrorError(f"{task}{where}: a {split} row without a label (-1)")
    if task == "diagnostics":
        return {"index": get("idx"), "premise": get("sentence1"), "hypothesis": get("sentence2")}
    test = split == "test"
    record: dict[str, Any]
    if task in ("afqmc", "cmnli", "ocnli"):
        record = {"sentence1": get("sentence1"), "sentence2": get("sentence2")}
    elif task == "tnews":
        record = {"sentence": get("sentence"), "keywords": ""}  # the mirror has no keywords
    elif task == "iflytek":
        record = {"sentence": get("sentence")}
    elif task == "cluewsc2020":
        record = {"target": dict(get("target")), ("id" if test else "idx"): get("idx"), "text": get("text")}
    else:  # csl keeps the file's own id as corpus_id
        record = {"id": get("corpus_id"), "abst": get("abst"), "keyword": list(get("keyword"))}
    if task == "ocnli" or (test and task in ("afqmc", "cmnli", "tnews", "iflytek")):
        record = {"id": get("idx"), **record}
    if label is None:
        return record
    if task == "tnews":
        return {"label": label, "label_desc": labels.TNEWS_DESCRIPTIONS[label], **record}
    if task == "iflytek":
        return {"label": label, "label_des": labels.IFLYTEK_DESCRIPTIONS[label], **record}
    return {**record, "label": label}


def output_name(task: str, split: str) -> str:
    """The file a mirror split is written to; test rows never get a name a TestVersion reads."""
    if split == "test":
        return ("diagnostics_test" if task == "diagnostics" else "test") + UNVERIFIED_SUFFIX
    return f"{split}.json"


def check_label_names(task: str, names: Sequence[str] | None) -> None:
    """Refuse a mirror whose label order is not the one this mapping was written for."""
    if names is not None and tuple(names) != LABEL_NAMES[task]:
        raise MirrorError(
            f"{task}: the mirror's label order {tuple(names)[:5]}... differs from the expected "
            f"{LABEL_NAMES[task][:5]}...; refusing to guess the mapping"
        )


def _label_feature_names(rows: Any) -> Sequence[str] | None:
    features = getattr(rows, "features", None)
    feature = features.get("label") if isinstance(features, Mapping) else None
    return getattr(feature, "names", None)


def export_rows(task: str, splits: Mapping[str, Iterable[Mapping[str, Any]]], dest_dir: Path) -> dict[str, int]:
    """Write mirror splits (``train``/``validation``/``test`` -> rows) as official files in ``dest_dir``."""
    dest_dir = Path(dest_dir)
    written: dict[str, int] = {}
    for mirror_split, rows in splits.items():
        split = SPLIT_NAMES.get(mirror_split)
        if split is None:
            continue
        check_label_names(task, _label_feature_names(rows))
        records = [to_official(task, row, split) for row in rows]
        name = output_name(task, split)
        write_jsonl(dest_dir / name, records)
        written[name] = len(records)
    descriptions = {"tnews": ("label_desc", labels.TNEWS_DESCRIPTIONS),
                    "iflytek": ("label_des", labels.IFLYTEK_DESCRIPTIONS)}
    if task in descriptions:
        key, texts = descriptions[task]
        write_jsonl(dest_dir / "labels.json", [{"label": label, key: text} for label, text in texts.items()])
    return written


def export(task: str, dest_dir: Path, *, dataset: str = HUB_DATASET, revision: str | None = None) -> dict[str, int]:
    """Download ``task`` from the mirror with ``datasets`` and write it into ``dest_dir``."""
    if task not in LABEL_NAMES:
        raise MirrorError(f"no mirror mapping for task {task!r} (has: {', '.join(TASKS)})")
    try:
        import datasets  # the optional 'hf' extra; never imported by the readers or hooks
    except ImportError:
        raise ClueError(
            "the Hugging Face mirror needs the 'datasets' package: pip install 'clue-tasks-classic[hf]'"
        ) from None
    loaded = datasets.load_dataset(dataset, task, revision=revision)
    return export_rows(task, loaded, dest_dir)


def summary(task: str, dest_dir: Path, written: Mapping[str, int]) -> str:
    files = ", ".join(f"{name} ({count})" for name, count in written.items())
    lines = [f"wrote {files} to {dest_dir}"]
    unverified = [name for name in written if name.endswith(UNVERIFIED_SUFFIX)]
    if unverified:
        lines.append(
            f"note: {unverified[0]} is the mirror's test split; which CLUE test version it holds and whether "
            "its ids are the official ones is not established, so no submission file is made from it"
        )
    if task != "diagnostics":
        lines.append(f"run: clue-core run {task} --data-dir {dest_dir} --model <model>")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m clue_tasks_classic.hf_mirror",
        description="Write a classic CLUE task from the Hugging Face clue/clue mirror in the official format.",
    )
    parser.add_argument("task", choices=TASKS)
    parser.add_argument("dest_dir", type=Path)
    parser.add_argument("--dataset", default=HUB_DATASET, help="dataset repository (default: %(default)s)")
    parser.add_argument("--revision", default=None, help="a dataset revision to pin")
    args = parser.parse_args(argv)
    try:
        written = export(args.task, args.dest_dir, dataset=args.dataset, revision=args.revision)
    except ClueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary(args.task, args.dest_dir, written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
