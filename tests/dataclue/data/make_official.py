"""Cut test_public.json of five DataCLUE tasks, write perturbed predictions and run the official compute_f1.py.

Run once by hand (``/tmp/h/venv/bin/python make_official.py DATACLUE_REPO``, sklearn 1.9.1); its output
(the cuts, the prediction files and official.json) is committed, so the tests need neither the
repository nor sklearn. Predictions keep the gold's JSON type (triclue: integers), because the official
script raises on integers against strings; clue-core compares labels as strings either way.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CUT = 80
SIZES = {"cic": 118, "tnews": 15, "afqmc": 2, "qbqtc": 3, "triclue": 2}


def _relabel(label, n):
    new = (int(label) + 1) % n
    return new if isinstance(label, int) else str(new)


def predictions(gold: list, n: int) -> dict[str, list]:
    rng = random.Random(0)
    shuffled = list(gold)
    rng.shuffle(shuffled)
    stray = list(gold)
    absent = next(str(i) for i in range(n + 200) if str(i) not in {str(g) for g in gold})
    stray[0] = int(absent) if isinstance(gold[0], int) else absent
    return {
        "identity": list(gold),
        "perturbed": [_relabel(g, n) if i % 3 == 0 else g for i, g in enumerate(gold)],
        "shuffled": shuffled,
        "stray": stray,
    }


def main(repo: Path) -> None:
    script = repo / "baselines/models_pytorch/classifier_pytorch/compute_f1.py"
    official: dict[str, dict[str, dict[str, float]]] = {}
    for task, n in SIZES.items():
        lines = (repo / f"datasets/raw_{task}/test_public.json").read_text(encoding="utf-8").splitlines(True)[:CUT]
        out = HERE / task
        out.mkdir(exist_ok=True)
        (out / "test_public.json").write_text("".join(lines), encoding="utf-8")
        gold = [json.loads(line)["label"] for line in lines]
        official[task] = {}
        for name, labels in predictions(gold, n).items():
            pred = out / f"{name}.json"
            pred.write_text("".join(json.dumps({"id": i, "label": v}) + "\n" for i, v in enumerate(labels)),
                            encoding="utf-8")
            with tempfile.TemporaryDirectory() as tmp:
                shutil.copy(out / "test_public.json", Path(tmp) / "test_public.json")
                shutil.copy(pred, Path(tmp) / "test_public_preidct.json")
                text = subprocess.run([sys.executable, str(script)], cwd=tmp, capture_output=True, text=True,
                                      check=True).stdout
            values = dict(line.split(": ", 1) for line in text.splitlines() if line.startswith("f1_"))
            official[task][name] = {k: float(v) for k, v in values.items()}
    (HERE / "official.json").write_text(json.dumps(official, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
