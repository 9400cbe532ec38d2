"""The same predictions give the same metric bits in every process (the golden test compares them
exactly): macro-F1 once summed its per-class scores in set order, which follows string hashing and
so changes with PYTHONHASHSEED; one seed in ten gave a different last bit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import random
from clue_core.examples import ClassificationExample, Prediction
from clue_builtin.metrics import macro_f1
rng = random.Random(3)
labels = [f"类{i}" for i in range(7)]
examples = [ClassificationExample(str(i), "t", None, rng.choice(labels)) for i in range(60)]
predictions = [Prediction(e.id, e.label if rng.random() < 0.5 else rng.choice(labels)) for e in examples]
print(repr(macro_f1(examples, predictions)["macro_f1"]))
"""


def test_macro_f1_does_not_depend_on_the_hash_seed():
    values = set()
    for seed in range(10):
        environment = {**os.environ, "PYTHONHASHSEED": str(seed)}
        done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=environment, capture_output=True,
                              text=True, check=True, timeout=120)
        values.add(done.stdout.strip())
    assert len(values) == 1, values
