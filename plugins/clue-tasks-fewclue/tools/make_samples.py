"""Cut the bundled samples from FewCLUE's official files: a few real lines per file, byte for byte.

    python plugins/clue-tasks-fewclue/tools/make_samples.py /work/fewclue/datasets

Deterministic: in each file, lines are taken in file order, first one line of each label not yet
covered (so small label sets are covered whole), then the next lines, until the file's quota is
reached. CSLDCP's test_public sample also keeps both records of its first repeated id, so the
sample exercises that quirk. Every labelled pair is cut (few_all and 0-4, so ``--sample`` runs
``split=all``), with test_public and test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FILES = ("train_few_all.json", "dev_few_all.json", "test_public.json", "test.json",
         *(f"{split}_{k}.json" for k in range(5) for split in ("train", "dev")))  # split=0-4 and split=all
#: Lines per file: enough to cover the labels of small label sets, few for the large ones.
QUOTA = {"eprstmt": 6, "csldcp": 6, "tnews": 15, "iflytek": 6, "ocnli": 6, "bustm": 6, "chid": 5, "csl": 6,
         "cluewsc": 6}
TARGET = Path(__file__).resolve().parents[1] / "clue_tasks_fewclue" / "samples"


def _label(record: dict) -> object:
    return record.get("label", record.get("answer"))


def cut(lines: list[str], quota: int) -> list[int]:
    """Indices of the lines to keep, in file order."""
    records = [json.loads(line) for line in lines]
    chosen: list[int] = []
    covered: set[str] = set()
    for index, record in enumerate(records):
        key = json.dumps(_label(record))
        if key not in covered and len(chosen) < quota:
            covered.add(key)
            chosen.append(index)
    for index in range(len(records)):
        if len(chosen) >= quota:
            break
        if index not in chosen:
            chosen.append(index)
    return sorted(chosen)


def repeated_pair(lines: list[str]) -> list[int]:
    """The two lines of the first id that two records share (CSLDCP's test_public)."""
    first: dict[object, int] = {}
    for index, line in enumerate(lines):
        record_id = json.loads(line).get("id")
        if record_id in first:
            return [first[record_id], index]
        first[record_id] = index
    return []


def main(source: Path) -> None:
    for task, quota in QUOTA.items():
        for name in FILES:
            raw = [line + "\n" for line in (source / task / name).read_text(encoding="utf-8").split("\n")]
            lines = [line for line in raw if line.strip()]
            keep = cut(lines, quota if "few_all" in name or name.startswith("test") else min(quota, 4))
            if task == "csldcp" and name == "test_public.json":
                keep = sorted(set(keep) | set(repeated_pair(lines)))
            out = TARGET / task / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("".join(lines[index] for index in keep), encoding="utf-8")
            print(f"{out.relative_to(TARGET)}: {len(keep)} of {len(lines)} lines")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/fewclue/datasets"))
