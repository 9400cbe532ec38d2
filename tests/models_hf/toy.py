"""A toy task for CLI tests that must not depend on the task plugins: an isolated kernel with
the built-in plugin, clue-models-hf and this task.

``toy-pairs`` is a classification task whose label says whether a marker character occurs
in the text; its reader ignores the data folder and makes the same examples every time, so
``--data-dir`` may be any folder.
"""

from __future__ import annotations

import random
from pathlib import Path

from clue_builtin import hooks as builtin
from clue_core.kernel import Kernel
from clue_core.plugin import CLASSIFICATION, ClassificationExample, SplitData, TaskSpec, TestVersion, hookimpl

from .conftest import CHARS, sentence

NAME = "toy-pairs"
#: The task's reference values, as a task plugin states them (``TaskSpec.recommendations``).
REFERENCE = {"learning_rate": 3e-5, "epochs": 3, "batch_size": 8, "max_length": 64, "warmup_ratio": 0.0}

TASK = TaskSpec(
    NAME,
    CLASSIFICATION,
    "toy: does the text contain 甲?",
    reader="tests.models_hf.toy:read",
    labels=("0", "1"),
    metrics=("accuracy",),
    test_versions=(TestVersion("1.0", "test", "toy_predict.json"),),
    recommendations=REFERENCE,
)


def read(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    rng = random.Random({"train": 1, "dev": 2, "test": 3}[split])
    examples = []
    for i in range({"train": 48, "dev": 16, "test": 8}[split]):
        label = str(i % 2)
        text = sentence(rng, 4, CHARS) + ("甲" if label == "1" else "乙") + sentence(rng, 4, CHARS)
        examples.append(ClassificationExample(i, text, None, None if split == "test" else label))
    return SplitData(tuple(examples))


class ToyPlugin:
    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return [TASK]


def toy_kernel() -> Kernel:
    """builtin + clue-models-hf + the toy task; a spec the kernel drops fails the test at once.

    (Not ``strict``: a strict kernel re-raises user errors instead of exiting with code 2.)
    """
    from clue_models_hf import hooks

    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    kernel.register(builtin, "builtin", distribution="clue-core")
    kernel.register(hooks, "clue-models-hf", distribution="clue-models-hf")
    kernel.register(ToyPlugin(), "toy")
    broken = [(p.name, p.error) for p in kernel.plugins if p.status != "ok"]
    assert not broken, broken
    return kernel
