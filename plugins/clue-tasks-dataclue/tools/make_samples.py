"""Cut the bundled samples and write ``labels.py`` from a DataCLUE checkout's ``datasets/``.

Usage: ``python tools/make_samples.py DATACLUE/datasets`` (CLUEbenchmark/DataCLUE at 32425a4).
Lines are copied byte for byte (first lines of each file), so the samples keep the files'
quirks: triclue's integer and string labels, tnews' two label description fields. Upstream
``raw_qbqtc/train.json`` is empty and ``raw_iflytek/train.json`` is missing from the public
snapshot, so those two samples' ``train.json`` are cut from ``dev.json`` (lines 1-40) and their
``dev.json`` from the dev lines after those: moving dev examples into train is a DataCLUE move.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "clue_tasks_dataclue"
TASKS = ("cic", "tnews", "iflytek", "afqmc", "qbqtc", "triclue")
TRAIN, DEV, TEST = 40, 16, 16


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def main(datasets: Path) -> None:
    descriptions: dict[str, dict[str, str]] = {}
    for task in TASKS:
        raw, out = datasets / f"raw_{task}", HERE / "samples" / task
        out.mkdir(parents=True, exist_ok=True)
        dev = lines(raw / "dev.json")
        train = lines(raw / "train.json") if (raw / "train.json").is_file() else []
        if not train:
            train, dev = dev[:TRAIN], dev[TRAIN:]
        (out / "train.json").write_text("".join(train[:TRAIN]), encoding="utf-8")
        (out / "dev.json").write_text("".join(dev[:DEV]), encoding="utf-8")
        (out / "test_public.json").write_text("".join(lines(raw / "test_public.json")[:TEST]), encoding="utf-8")
        if (raw / "labels.json").is_file():
            (out / "labels.json").write_bytes((raw / "labels.json").read_bytes())
            records = [json.loads(line) for line in lines(raw / "labels.json")]
            descriptions[task] = {str(r["label"]): r["label_des"] for r in records}
    body = ['"""Label descriptions of labels.json (cic, tnews, iflytek), in label order; written by '
            'tools/make_samples.py."""', "", "from __future__ import annotations", ""]
    for task, names in descriptions.items():
        body.append(f"{task.upper()}: dict[str, str] = {{")
        body += [f"    {k!r}: {v!r}," for k, v in names.items()]
        body.append("}")
    (HERE / "labels.py").write_text("\n".join(body) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
