"""Fixtures for the clue-models-hf tests: toy tasks with a learnable signal, tiny configs.

Training tests use the offline backbone at its smallest (one layer, 32 hidden units) so a
fit takes a second or two on two CPU cores.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from clue_core.plugin import (
    ClassificationExample,
    MultipleChoiceExample,
    Prediction,
    RunContext,
    SpanExample,
    TaskSpec,
)

CHARS = "天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏闰余成岁律吕调阳云腾致雨露结为霜"

#: A short schedule: settings every hf model declares.
FAST: dict[str, Any] = {
    "learning_rate": 1e-2, "epochs": 4, "batch_size": 8, "eval_batch_size": 8, "max_length": 64,
    "warmup_ratio": 0.0, "progress": False,
}
#: The smallest useful offline backbone (``hf-tiny`` settings) with that schedule.
TINY: dict[str, Any] = {
    **FAST, "tiny_hidden_size": 32, "tiny_num_layers": 1, "tiny_num_heads": 2, "tiny_intermediate_size": 64,
}
#: Run control the tests use (the run context's, never a setting).
SEED = 7


def stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_context(task: TaskSpec, run_dir: Path, score: Callable[[Sequence[Prediction]], dict[str, float]], *,
                resume: bool = False, primary_metric: str = "accuracy", seed: int = SEED) -> RunContext:
    """What the runner hands ``fit``: checkpoints go to ``run_dir / "training"``."""
    return RunContext(task=task, seed=seed, run_dir=run_dir, resume=resume, primary_metric=primary_metric,
                      score=score, echo=stderr)


def sentence(rng: random.Random, n: int, alphabet: str = CHARS) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


@pytest.fixture(scope="session")
def classification_task() -> TaskSpec:
    # label strings deliberately unlike indices, as in TNEWS
    return TaskSpec("toy-cls", "classification", "toy", "unused:reader", labels=("103", "100", "116"))


@pytest.fixture(scope="session")
def classification_data() -> tuple[list[ClassificationExample], list[ClassificationExample]]:
    """The label is decided by which marker character the text contains: learnable in a few steps."""
    rng = random.Random(1)
    markers = {"103": "甲", "100": "乙", "116": "丙"}
    examples = []
    for i in range(72):
        label = ("103", "100", "116")[i % 3]
        text = sentence(rng, rng.randint(3, 12)) + markers[label] + sentence(rng, rng.randint(3, 12))
        examples.append(ClassificationExample(i, text, None, label))
    return examples[:60], examples[60:]


@pytest.fixture(scope="session")
def span_data() -> list[SpanExample]:
    rng = random.Random(2)
    examples = []
    for i in range(12):
        context = sentence(rng, rng.randint(20, 70))
        start = rng.randint(0, len(context) - 4)
        answer = context[start:start + 3]
        examples.append(SpanExample(f"q{i}", context, "问" + answer[0], ((answer, start),)))
    return examples


@pytest.fixture(scope="session")
def choice_data() -> list[MultipleChoiceExample]:
    """The right choice is the one containing the question's character; 2 to 5 choices."""
    rng = random.Random(3)
    examples = []
    for i in range(40):
        n = 2 + i % 4
        key = rng.choice(CHARS)
        others = CHARS.replace(key, "")
        choices = [sentence(rng, 3, others) for _ in range(n)]
        label = rng.randrange(n)
        choices[label] = choices[label][:1] + key + choices[label][2:]
        examples.append(MultipleChoiceExample(i, sentence(rng, 10), key, tuple(choices), label))
    return examples


def accuracy_scorer(dev: Sequence[Any]) -> Callable[[Sequence[Prediction]], dict[str, float]]:
    def score(predictions: Sequence[Prediction]) -> dict[str, float]:
        right = sum(p.value == e.label for p, e in zip(predictions, dev))
        return {"accuracy": 100.0 * right / len(dev)}
    return score


#: The README's demo: every example kind, Simplified and Traditional Chinese.
DEMO_TASKS = ("afqmc", "cmrc2018", "chid", "c3", "drcd")


def invoke(*args: object) -> Any:
    """``clue-core`` in-process; the result's ``output`` holds stdout and stderr."""
    from click.testing import CliRunner

    from clue_core.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> Any:
    """``clue-core run <every kind> --model hf-tiny --sample`` once for the whole session."""
    out = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUE_HOME", str(out / "clue-home"))
        result = invoke("run", *DEMO_TASKS, "--model", "hf-tiny", "--sample", "--output-dir", out / "runs",
                        "--set", "progress=false")
    assert result.exit_code == 0, result.output
    return out / "runs", result.output
