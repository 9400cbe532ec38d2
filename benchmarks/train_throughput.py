"""Training and prediction throughput: clue-core's loop against the Hugging Face Trainer.

Three arms train the same model (the offline backbone ``hf-tiny`` at a small size; ``--size
base`` for a BERT-base shape) from the same initial weights on the same synthetic data, with
the same batch size, learning rate, schedule, number of steps and precision (fp32):

  a  transformers' Trainer as ``run_glue.py`` sets it up by default: every example padded to
     ``max_length`` 128 at tokenization, ``default_data_collator``, random batches
  b  the Trainer at its best: dynamic padding (``DataCollatorWithPadding``) and
     ``train_sampling_strategy="group_by_length"`` (``group_by_length=True`` before transformers 5)
  c  clue-core: ``HFLearner.fit`` / ``HFLearner.predict`` of ``clue-models-hf``, the code a
     ``clue-core run`` executes

on three CLUE-like length distributions (TNEWS-like titles of 10-40 characters, AFQMC-like
pairs of 10-30 characters each, IFLYTEK-like texts of 100-500 characters cut at 128 tokens).
Arms train alternately, their order rotating every repeat; the trained arms then predict the
dev set alternately. Every pass measures the CPU share other processes used meanwhile; a pass
they contended (over 10%) is run again (``--retries``), and each arm's best pass counts
(other processes only ever slow a pass down).

Training time is each loop's own: ``Trainer.train()`` for a and b, the ``train_runtime``
clue-core's loop records in ``trainer_state.json`` for c (no evaluation happens in any arm).
Prediction time covers tokenization and prediction in every arm. The real-token share counts
the attention masks of the batches each arm's collator actually produced.

CPU efficiency: the machine's matmul rate (fp32, bf16) against the FLOP rate a training step
achieves (FLOPs counted by ``torch.utils.flop_counter`` for the batch shapes each arm ran).

bf16 is measured where it has something to gain: clue-core training a BERT-base shape (12
layers, hidden 768, 12 heads, feed-forward 3072; random initialisation and the character
vocabulary ``hf-tiny`` builds, through hf-tiny's ``tiny_*`` settings) on the TNEWS-like data
for a fixed number of steps (``--bf16-steps``, default 30), fp32 and bf16 runs alternating
(``--bf16-repeats`` of each, default 3, the order flipping every repeat). It prints the median
training throughput of each precision and their ratio against the goal (>= 2), and the
training loss of both (the mean over the last 10 steps) against a stated tolerance,
``|loss_bf16 - loss_fp32| <= 0.02 * loss_fp32`` (why 2%: see ``BF16_LOSS_TOLERANCE``). Only
CPUs that compute bf16 natively (AVX512-BF16 or AMX) and bf16-capable GPUs measure it;
elsewhere the goal prints ``n/a`` with the reason, since torch then emulates bf16 matmuls at
a few per cent of the fp32 rate. ``--bf16-force`` runs it there anyway (the losses are
meaningful, emulated bf16 rounds as native bf16 does; the speed is not, and no goal is judged);
``--bf16-dry`` runs the same code path with 2 steps of 4 examples and one run of each
precision, to show it works; its figures measure nothing. ``--bf16-size small`` compares at
the small shape instead. ``--bf16-only`` runs just this comparison.

    python benchmarks/train_throughput.py [--quick] [--size small|base] [--steps N] [--repeats N]
                                          [--predictions N] [--threads N] [--wait SECONDS]
                                          [--bf16-only] [--bf16-dry] [--bf16-force] [--bf16-size small|base]
                                          [--bf16-steps N] [--bf16-repeats N]

``--quick`` (under two minutes on two quiet cores) runs one repeat of fewer steps and skips
the bf16 comparison (unless ``--bf16-dry``, ``--bf16-force`` or ``--bf16-only`` asks for it); the full run takes
about seven minutes plus the bf16 comparison. ``--threads 1`` keeps figures steady while
another process holds a core. Goals are printed as ``met`` or ``MISSED`` with their figures;
nothing here asserts a timing. ``benchmarks/bf16_profile.py`` profiles both precisions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from clue_core.plugin import ClassificationExample, Prediction, RunContext, TaskSpec

GOAL_C_OVER_A = 3.0  # on the TNEWS-like data
GOAL_C_OVER_B = 1.0  # on every distribution
GOAL_REAL_SHARE = 0.9
GOAL_BF16_SPEEDUP = 2.0
#: |loss_bf16 - loss_fp32| <= this share of loss_fp32 (mean training loss of the last BF16_LOSS_WINDOW steps).
#: Both precisions train the same batches from the same weights, so their losses differ only by
#: bf16 rounding: at the small size the per-step gap stayed under 0.01% for 30 steps
#: (``--bf16-only --bf16-force --bf16-size small --bf16-repeats 1``; emulated bf16 rounds as native
#: bf16 does). 2% is far above that, and below the 0.08 (3%) the fp32 loss falls over the base-size
#: run's 30 steps (docs/performance.md, bf16), so a bf16 run that stopped learning would fail.
BF16_LOSS_TOLERANCE = 0.02
BF16_LOSS_WINDOW = 10
#: the usual learning-rate scale for BERT-base (the small model's 1e-3 is not used at that size)
BF16_LEARNING_RATE = 1e-4
#: --bf16-dry: steps and examples per step of the code-path check on CPUs without native bf16
DRY_STEPS, DRY_BATCH = 2, 4

MAX_LENGTH = 128
BATCH_SIZE = 32
EVAL_BATCH_SIZE = 64
LEARNING_RATE = 1e-3
SEED = 13

SIZES: dict[str, dict[str, int]] = {
    "small": {"tiny_hidden_size": 128, "tiny_num_layers": 4, "tiny_num_heads": 4, "tiny_intermediate_size": 512},
    "base": {"tiny_hidden_size": 768, "tiny_num_layers": 12, "tiny_num_heads": 12, "tiny_intermediate_size": 3072},
}

ARMS = ("a", "b", "c")
ARM_NAMES = {
    "a": "Trainer, run_glue defaults (pad to 128)",
    "b": "Trainer, dynamic padding + group_by_length",
    "c": "clue-core HFLearner",
}


# ---- synthetic CLUE-like data ------------------------------------------------------------------

ALPHABET = [chr(0x4E00 + i) for i in range(3000)]
#: Zipf-like character frequencies, as in real Chinese text
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(ALPHABET))]
#: one marker character per label, outside the background alphabet: the learnable signal
MARKERS = [chr(0x6000 + i) for i in range(64)]


@dataclass(frozen=True)
class Distribution:
    name: str
    description: str
    lengths: tuple[int, int]
    pair: bool
    labels: int


DISTRIBUTIONS = (
    Distribution("tnews", "TNEWS-like titles, 10-40 chars", (10, 40), False, 15),
    Distribution("afqmc", "AFQMC-like pairs, 10-30 chars each", (10, 30), True, 2),
    Distribution("iflytek", "IFLYTEK-like texts, 100-500 chars", (100, 500), False, 20),
)


def make_examples(dist: Distribution, count: int, seed: int) -> list[ClassificationExample]:
    """Random texts of the distribution's lengths; the label's marker sits in the first 60 characters."""
    rng = random.Random(seed)

    def text(low: int, high: int, marker: str | None) -> str:
        chars = rng.choices(ALPHABET, WEIGHTS, k=rng.randint(low, high))
        if marker is not None:
            chars[rng.randrange(min(60, len(chars)))] = marker
        return "".join(chars)

    examples = []
    for i in range(count):
        label = rng.randrange(dist.labels)
        first = text(*dist.lengths, MARKERS[label])
        second = text(*dist.lengths, MARKERS[label] if label else None) if dist.pair else None
        examples.append(ClassificationExample(i, first, second, str(label)))
    return examples


# ---- the clue-core learner, as a run builds it ----------------------------------------------------


def hf_tiny_learner(task: TaskSpec, values: Mapping[str, Any]) -> Any:
    """``hf-tiny`` for ``task`` with ``values`` given as a user would (``--set``).

    The model spec comes from the plugin's hook and the kernel merges its declared defaults,
    the task's and the model's recommendations and ``values``, converting and checking every
    one, as ``clue-core run`` does; the factory then gets exactly the declared settings.
    """
    from clue_core.settings import Layer, merge_declarations, plugin_layers, resolve
    from clue_core.specs import resolve as resolve_ref
    from clue_models_hf.hooks import TINY_NAME, clue_models

    spec = next(m for m in clue_models() if m.name == TINY_NAME)
    declared = merge_declarations(spec.settings, f"model {spec.name}")
    layers = [*plugin_layers(task, spec, spec.name), Layer("benchmark", dict(values), user=True)]
    settings = resolve(declared, layers)
    return resolve_ref(spec.factory)(None, task, settings.only(spec.settings))


@contextmanager
def training_probe(losses: list[torch.Tensor], step_ends: list[float]) -> Iterator[None]:
    """Record every training loss (detached: no synchronisation) and when every optimizer step ended.

    Instrumented, not replaced: the loop's own forward (``clue_models_hf.training.forward``)
    runs and its loss is kept; ``Trainer.after_step`` is the loop's hook after each step.
    """
    from clue_models_hf import training

    forward, after_step = training.forward, training.Trainer.after_step

    def recording(model: Any, batch: dict[str, torch.Tensor], kind: str, with_loss: bool) -> Any:
        loss, outputs = forward(model, batch, kind, with_loss)
        if with_loss and loss is not None:
            losses.append(loss.detach())
        return loss, outputs

    def stamp(self: Any, step: int) -> None:
        step_ends.append(time.perf_counter())
        after_step(self, step)

    training.forward, training.Trainer.after_step = recording, stamp  # type: ignore[method-assign]
    try:
        yield
    finally:
        training.forward, training.Trainer.after_step = forward, after_step  # type: ignore[method-assign]


def quiet(line: str) -> None:
    """The run context's echo: the learner's log lines are not part of the report."""


# ---- measurement helpers --------------------------------------------------------------------------


@dataclass
class Shapes:
    """(rows, width, real tokens) of every batch a collator produced."""

    batches: list[tuple[int, int, int]] = field(default_factory=list)

    def add(self, mask: torch.Tensor) -> None:
        self.batches.append((int(mask.shape[0]), int(mask.shape[1]), int(mask.sum())))

    @property
    def real_share(self) -> float:
        total = sum(rows * width for rows, width, _ in self.batches)
        return sum(real for *_, real in self.batches) / max(1, total)

    @property
    def examples(self) -> int:
        return sum(rows for rows, _, _ in self.batches)


def counting(collate: Callable[[Any], dict[str, Any]], shapes: Shapes) -> Callable[[Any], dict[str, Any]]:
    """The same collator, recording the shape and real tokens of each batch it returns."""

    def wrapped(items: Any) -> dict[str, Any]:
        batch = collate(items)
        shapes.add(torch.as_tensor(batch["attention_mask"]))
        return batch

    return wrapped


class OtherLoad:
    """How much of the machine other processes used while a run was timed (0 = a quiet run).

    On two cores one busy neighbour takes half the machine, and two-thread kernels that
    wait for each other slow down far more than that; runs report this figure so a
    contended one can be recognised (and best-of-N usually skips it).
    """

    def __init__(self) -> None:
        self.start = self._sample()

    @staticmethod
    def _sample() -> tuple[float, float, float] | None:
        try:
            fields = [float(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        except (OSError, ValueError):
            return None
        ticks = os.sysconf("SC_CLK_TCK")
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)
        own = sum(os.times()[:2])
        return sum(fields) / ticks, idle / ticks, own

    def share(self) -> float | None:
        end = self._sample()
        if self.start is None or end is None:
            return None
        total, idle, own = (b - a for a, b in zip(self.start, end))
        return max(0.0, (total - idle - own) / total) if total > 0 else None


def contended(timed: Any) -> bool:
    """Other processes took more than a tenth of the machine during the pass."""
    return timed.others is not None and timed.others > 0.1


def wait_for_quiet(limit: float) -> None:
    """Wait (at most ``limit`` seconds) for half a second in which others use under a tenth of the CPUs."""
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        probe = OtherLoad()
        time.sleep(0.5)
        share = probe.share()
        if share is None or share < 0.1:
            return


def matmul_rate(dtype: torch.dtype, n: int, seconds: float) -> float:
    """FLOP/s of an n×n matmul in ``dtype`` (at least one timed call, else ``seconds`` worth)."""
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    a @ b
    calls, started = 0, time.perf_counter()
    while True:
        a @ b
        calls += 1
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return 2 * n**3 * calls / elapsed


def native_bf16() -> bool:
    from clue_models_hf.runtime import native_cpu_bf16

    return (torch.cuda.is_available() and torch.cuda.is_bf16_supported()) or native_cpu_bf16()


class FlopModel:
    """Training FLOPs of one batch shape, from ``FlopCounterMode`` on the real model.

    A BERT step costs ``rows × (p + q·width + r·width²)`` FLOPs (linear layers per token,
    attention per token pair, a per-row head); three measured widths give p, q and r.
    """

    def __init__(self, build: Callable[[], Any], vocab: int) -> None:
        from torch.utils.flop_counter import FlopCounterMode

        model = build()
        model.train()
        widths, totals = (16, 64, 128), []
        for width in widths:
            ids = torch.randint(5, vocab, (2, width))
            counter = FlopCounterMode(display=False)
            with counter:
                out = model(input_ids=ids, attention_mask=torch.ones_like(ids), labels=torch.zeros(2, dtype=torch.long))
                out.loss.backward()
            totals.append(counter.get_total_flops() / 2)
        matrix = torch.tensor([[1.0, w, w * w] for w in widths], dtype=torch.float64)
        self.coefficients = torch.linalg.solve(matrix, torch.tensor(totals, dtype=torch.float64)).tolist()

    def step(self, rows: int, width: int) -> float:
        p, q, r = self.coefficients
        return rows * (p + q * width + r * width * width)

    def total(self, shapes: Shapes) -> float:
        return sum(self.step(rows, width) for rows, width, _ in shapes.batches)


# ---- the three arms --------------------------------------------------------------------------------


@dataclass
class Timed:
    """One timed training or prediction pass of one arm."""

    seconds: float
    examples: int
    shapes: Shapes
    #: share of the machine other processes used meanwhile (None where unknown)
    others: float | None = None
    accuracy: float | None = None
    #: clue-core only: the training loss of every step and when every step ended (perf_counter)
    losses: list[float] = field(default_factory=list)
    step_ends: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.examples / self.seconds


@dataclass
class Trained:
    """A trained arm: its training pass and how to predict the dev set with it."""

    train: Timed
    predict: Callable[[], Timed]


def timed_prediction(predict: Callable[[], Sequence[Prediction]], shapes: Shapes, score: Callable[..., float]
                     ) -> Timed:
    shapes.batches.clear()
    load = OtherLoad()
    started = time.perf_counter()
    predictions = predict()
    seconds = time.perf_counter() - started
    return Timed(seconds, len(predictions), Shapes(list(shapes.batches)), load.share(), score(predictions))


class Bench:
    """One distribution's data, tokenizer and model factory, shared by the three arms."""

    def __init__(self, dist: Distribution, size: dict[str, int], steps: int, dev_size: int, *,
                 batch_size: int = BATCH_SIZE, learning_rate: float = LEARNING_RATE) -> None:
        from clue_models_hf import tiny
        from clue_models_hf.learner import texts_of

        self.dist = dist
        self.steps = steps
        self.train = make_examples(dist, steps * batch_size, SEED)
        self.dev = make_examples(dist, dev_size, SEED + 1)
        self.labels = tuple(str(i) for i in range(dist.labels))
        # the very vocabulary the learner builds from its training texts
        self.tokenizer = tiny.build_tokenizer(texts_of(self.train))
        # hf-tiny's settings, every one the Trainer arms share given explicitly (the model's own
        # recommendations, e.g. its learning rate, must not apply); the seed is run control
        self.config: dict[str, Any] = {
            **size, "learning_rate": learning_rate, "learning_rate_scale": 1.0, "batch_size": batch_size,
            "eval_batch_size": EVAL_BATCH_SIZE, "gradient_accumulation_steps": 1, "max_length": MAX_LENGTH,
            "warmup_ratio": 0.1, "weight_decay": 0.01, "max_grad_norm": 1.0, "max_steps": steps, "progress": False,
            "mixed_precision": "no",
        }
        self.task = TaskSpec(f"bench-{dist.name}", "classification", dist.description, "unused:reader",
                             labels=self.labels)

    def build_model(self) -> Any:
        """The model every arm starts from: hf-tiny's config, seeded as the learner seeds it."""
        from accelerate.utils import set_seed
        from transformers import AutoModelForSequenceClassification

        from clue_models_hf import tiny

        set_seed(SEED)
        config = tiny.tiny_config(len(self.tokenizer), self.config, MAX_LENGTH, num_labels=len(self.labels),
                                  id2label=dict(enumerate(self.labels)),
                                  label2id={label: i for i, label in enumerate(self.labels)},
                                  problem_type="single_label_classification")
        return AutoModelForSequenceClassification.from_config(config)

    def accuracy(self, predictions: Sequence[Prediction]) -> float:
        return 100.0 * sum(p.value == e.label for p, e in zip(predictions, self.dev)) / len(self.dev)

    # ---- a and b -----------------------------------------------------------------------------------
    def _encode(self, examples: Sequence[ClassificationExample], pad_to_max: bool, labels: bool) -> list[dict]:
        texts = [e.text for e in examples]
        pairs = [e.text_pair for e in examples] if self.dist.pair else None
        padding = {"padding": "max_length"} if pad_to_max else {}
        encoded = self.tokenizer(texts, pairs, truncation=True, max_length=MAX_LENGTH, **padding)
        rows = [{key: encoded[key][i] for key in encoded} for i in range(len(examples))]
        if labels:
            for row, example in zip(rows, examples):
                row["labels"] = self.labels.index(example.label)
        return rows

    def train_trainer(self, arm: str, output: Path) -> Trained:
        from transformers import DataCollatorWithPadding, Trainer, TrainingArguments, default_data_collator
        from transformers.trainer_callback import PrinterCallback

        grouped = arm == "b"
        arguments: dict[str, Any] = {
            "output_dir": str(output), "per_device_train_batch_size": BATCH_SIZE,
            "per_device_eval_batch_size": EVAL_BATCH_SIZE, "learning_rate": LEARNING_RATE,
            "max_steps": self.steps, "warmup_steps": 0.1, "weight_decay": 0.01, "max_grad_norm": 1.0,
            "save_strategy": "no", "eval_strategy": "no", "logging_strategy": "no", "report_to": "none",
            "disable_tqdm": True, "seed": SEED, "use_cpu": not torch.cuda.is_available(),
        }
        if grouped:
            arguments["train_sampling_strategy"] = "group_by_length"
        shapes = Shapes()
        collate = DataCollatorWithPadding(self.tokenizer) if grouped else default_data_collator
        trainer = Trainer(model=self.build_model(), args=TrainingArguments(**arguments),
                          train_dataset=self._encode(self.train, not grouped, labels=True),
                          data_collator=counting(collate, shapes), processing_class=self.tokenizer)
        trainer.remove_callback(PrinterCallback)  # it prints the metrics dict; the timing stays the same
        load = OtherLoad()
        started = time.perf_counter()
        trainer.train()
        seconds, others = time.perf_counter() - started, load.share()
        assert trainer.state.global_step == self.steps, trainer.state.global_step
        shapes.batches[self.steps:] = []  # a batch a loader fetched ahead but never trained on
        train = Timed(seconds, shapes.examples, Shapes(list(shapes.batches)), others)

        def predict() -> list[Prediction]:
            logits = trainer.predict(self._encode(self.dev, not grouped, labels=False)).predictions
            return [Prediction(e.id, self.labels[int(i)]) for e, i in zip(self.dev, logits.argmax(-1))]

        return Trained(train, lambda: timed_prediction(predict, shapes, self.accuracy))

    # ---- c -----------------------------------------------------------------------------------------
    def train_clue(self, output: Path, **overrides: Any) -> Trained:
        config = {**self.config, **overrides}
        learner = hf_tiny_learner(self.task, config)
        shapes = Shapes()
        make_collator = learner._collator  # instrumented, not replaced: the learner's own collator
        learner._collator = lambda: counting(make_collator(), shapes)  # type: ignore[method-assign]
        context = RunContext(task=self.task, seed=SEED, run_dir=output, echo=quiet)
        losses: list[torch.Tensor] = []
        step_ends: list[float] = []
        load = OtherLoad()
        with training_probe(losses, step_ends):
            learner.fit(self.train, [], context)
        others = load.share()
        state = json.loads((context.training_dir / "trainer_state.json").read_text())
        assert state["global_step"] == config["max_steps"], state["global_step"]
        shapes.batches[config["max_steps"]:] = []  # a batch the loader fetched ahead but never trained on
        assert state["train_examples"] == shapes.examples, (state["train_examples"], shapes.examples)
        assert learner.tokenizer.get_vocab() == self.tokenizer.get_vocab(), "the learner built another vocabulary"
        # the loop's own clock: the learner's set-up before it (vocabulary, model, encoding) is not counted,
        # as the Trainer arms' set-up is not
        train = Timed(state["train_runtime"], state["train_examples"], Shapes(list(shapes.batches)), others,
                      losses=[float(loss) for loss in losses], step_ends=step_ends)
        return Trained(train, lambda: timed_prediction(lambda: learner.predict(self.dev), shapes, self.accuracy))

    def train_arm(self, arm: str, output: Path, **overrides: Any) -> Trained:
        if arm == "c":
            return self.train_clue(output, **overrides)
        return self.train_trainer(arm, output)


# ---- reporting ---------------------------------------------------------------------------------------


def verdict(met: bool | None) -> str:
    return "n/a" if met is None else ("met" if met else "MISSED")


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def quiet_libraries() -> None:
    warnings.filterwarnings("ignore")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def percent(value: float | None) -> str:
    return "?" if value is None else f"{value:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer steps, no bf16 comparison unless --bf16-dry/--bf16-only (under two minutes)")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--steps", type=int, help="optimizer steps per training run (default 20, quick 6)")
    parser.add_argument("--repeats", type=int, help="alternating repeats of every arm (default 3, quick 1)")
    parser.add_argument("--predictions", type=int,
                        help="alternating prediction passes per repeat (default 1, quick 2)")
    parser.add_argument("--bf16-only", action="store_true",
                        help="only the fp32/bf16 comparison at BERT-base size (no Trainer arms)")
    parser.add_argument("--bf16-dry", action="store_true",
                        help=f"run the fp32/bf16 comparison's code path even without native bf16: {DRY_STEPS} steps "
                        f"of {DRY_BATCH} examples, one run each; the figures measure nothing")
    parser.add_argument("--bf16-force", action="store_true",
                        help="run the fp32/bf16 comparison even without native bf16 (emulated: the losses are "
                        "meaningful, the speed is not)")
    parser.add_argument("--bf16-size", choices=sorted(SIZES), default="base",
                        help="model shape of the fp32/bf16 comparison (default base)")
    parser.add_argument("--bf16-steps", type=int, default=30,
                        help="optimizer steps per run of the fp32/bf16 comparison (default 30)")
    parser.add_argument("--bf16-repeats", type=int, default=3,
                        help="runs of each precision in the fp32/bf16 comparison, alternating (default 3)")
    parser.add_argument("--wait", type=float, default=2.0,
                        help="seconds to wait at most for a quiet machine before each pass (default 2)")
    parser.add_argument("--retries", type=int, default=2,
                        help="extra passes for a pass other processes contended (>10%% of the CPUs; default 2)")
    parser.add_argument("--threads", type=int, help="torch threads for every arm (default: torch's own choice); "
                        "1 keeps figures steady while another process holds a core")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    steps = args.steps or (6 if args.quick else 20)
    repeats = args.repeats or (1 if args.quick else 3)
    passes = args.predictions or (2 if args.quick else 1)
    # real dev sets hold thousands of examples (TNEWS 10,000, IFLYTEK 2,599); a few hundred
    # would leave every length-sorted prediction batch spanning several lengths
    dev_size = 8 * EVAL_BATCH_SIZE if args.quick else 16 * EVAL_BATCH_SIZE
    began = time.perf_counter()
    # retries stop once the run nears its time budget (ten minutes, two with --quick)
    retry_until = began + (60 if args.quick else 330)
    quiet_libraries()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, CPU capability "
          f"{torch.backends.cpu.get_cpu_capability()}, native bf16: {native_bf16()}, "
          f"GPU: {torch.cuda.get_device_name() if torch.cuda.is_available() else 'none'}; "
          f"load average {load_average()}")
    peak = matmul_rates(args.wait)
    if args.bf16_only:
        ratio = f"{peak['bf16'] / peak['fp32']:.2f}"
        rows = [*compare_bf16(args), ("bf16 matmul rate / fp32 matmul rate", ratio, None)]
        print_goals(f"Goals (clue-core, hf-tiny {args.bf16_size} shape, TNEWS-like)", rows)
        print(f"\nwall time {time.perf_counter() - began:.0f} s; load average at the end {load_average()}")
        return
    print(f"model: hf-tiny {args.size} {SIZES[args.size]}; batch {BATCH_SIZE}, eval batch {EVAL_BATCH_SIZE}, "
          f"lr {LEARNING_RATE}, {steps} steps per training run, {dev_size} dev examples, {repeats} alternating "
          f"repeats, fp32\n")

    train_runs: dict[str, dict[str, list[Timed]]] = {}
    predict_runs: dict[str, dict[str, list[Timed]]] = {}
    benches: dict[str, Bench] = {}
    for dist in DISTRIBUTIONS:
        bench = benches[dist.name] = Bench(dist, SIZES[args.size], steps, dev_size)
        train_runs[dist.name] = {arm: [] for arm in ARMS}
        predict_runs[dist.name] = {arm: [] for arm in ARMS}
        for repeat in range(repeats):
            order = ARMS[repeat % 3:] + ARMS[: repeat % 3]
            with tempfile.TemporaryDirectory(prefix="bench-") as folder:
                trained: dict[str, Trained] = {}
                for arm in order:
                    for attempt in range(1 + args.retries):
                        wait_for_quiet(args.wait)
                        trained[arm] = bench.train_arm(arm, Path(folder) / f"{arm}{attempt}")
                        train_runs[dist.name][arm].append(trained[arm].train)
                        if not contended(trained[arm].train) or time.perf_counter() > retry_until:
                            break
                for arm in order * passes:
                    for _ in range(1 + args.retries):
                        wait_for_quiet(args.wait)
                        predict_runs[dist.name][arm].append(trained[arm].predict())
                        if not contended(predict_runs[dist.name][arm][-1]) or time.perf_counter() > retry_until:
                            break
            for arm in ARMS:
                train, predict = train_runs[dist.name][arm][-1], predict_runs[dist.name][arm][-1]
                print(f"  {dist.name:<8} {arm}  train {train.rate:6.1f} ex/s (others {percent(train.others):>4})  "
                      f"predict {predict.rate:6.1f} ex/s (others {percent(predict.others):>4})  real tokens "
                      f"{train.shapes.real_share:.2f} / {predict.shapes.real_share:.2f}  dev acc "
                      f"{predict.accuracy:4.1f}", flush=True)
    best_train = {name: {arm: _best(runs) for arm, runs in arms.items()} for name, arms in train_runs.items()}
    best_predict = {name: {arm: _best(runs) for arm, runs in arms.items()} for name, arms in predict_runs.items()}
    flops = FlopModel(benches["tnews"].build_model, len(benches["tnews"].tokenizer))
    bf16 = compare_bf16(args) if not args.quick or args.bf16_dry or args.bf16_force else None

    print(f"\nThroughput, examples/s (fp32, hf-tiny {args.size}; the best of {repeats} training runs and of "
          f"{passes * repeats} predictions; 'others': CPU share other processes used meanwhile)")
    print(f"{'data':<8} {'arm':<46} {'train':>7} {'others':>6} {'predict':>8} {'others':>6} "
          f"{'real tok train':>14} {'predict':>8}")
    for name in best_train:
        for arm in ARMS:
            train, predict = best_train[name][arm], best_predict[name][arm]
            print(f"{name:<8} {arm + ' ' + ARM_NAMES[arm]:<46} {train.rate:>7.1f} {percent(train.others):>6} "
                  f"{predict.rate:>8.1f} {percent(predict.others):>6} "
                  f"{train.shapes.real_share:>14.3f} {predict.shapes.real_share:>8.3f}")
    ratios: dict[str, dict[str, float]] = {}
    print(f"\n{'data':<8} {'train c/a':>10} {'train c/b':>10} {'predict c/a':>12} {'predict c/b':>12}")
    for name in best_train:
        t, pr = best_train[name], best_predict[name]
        ratios[name] = {
            "train c/a": t["c"].rate / t["a"].rate,
            "train c/b": t["c"].rate / t["b"].rate,
            "predict c/a": pr["c"].rate / pr["a"].rate,
            "predict c/b": pr["c"].rate / pr["b"].rate,
        }
        print(f"{name:<8} " + " ".join(f"{value:>{max(10, len(key))}.2f}" for key, value in ratios[name].items()))

    print("\nCPU efficiency of training (FLOPs counted by torch.utils.flop_counter for every batch shape run)")
    efficiency: dict[str, float] = {}
    for name, arms in best_train.items():
        for arm in ARMS:
            train = arms[arm]
            rate = efficiency[f"{name} {arm}"] = flops.total(train.shapes) / train.seconds
            real = sum(flops.step(rows, real // rows) for rows, _, real in train.shapes.batches)
            print(f"  {name:<8} {arm}: {rate / 1e9:6.1f} GFLOP/s = {rate / peak['fp32']:4.0%} of the fp32 matmul "
                  f"rate; on real tokens only {real / train.seconds / 1e9:5.1f} GFLOP/s")

    rows: list[tuple[str, str, bool | None]] = []
    tnews = ratios["tnews"]
    for key in ("train c/a", "predict c/a"):
        rows.append((f"{key} >= {GOAL_C_OVER_A:g} (TNEWS-like)", f"{tnews[key]:.2f}", tnews[key] >= GOAL_C_OVER_A))
    for name, r in ratios.items():
        for key in ("train c/b", "predict c/b"):
            rows.append((f"{key} >= {GOAL_C_OVER_B:g} ({name.upper()}-like)", f"{r[key]:.2f}",
                         r[key] >= GOAL_C_OVER_B))
    for name in best_train:
        share = min(best_train[name]["c"].shapes.real_share, best_predict[name]["c"].shapes.real_share)
        rows.append((f"c real-token share >= {GOAL_REAL_SHARE:g}, train and predict ({name.upper()}-like)",
                     f"{share:.3f}", share >= GOAL_REAL_SHARE))
    rows.append(("c training FLOP rate / fp32 matmul rate (TNEWS-like)",
                 f"{efficiency['tnews c'] / peak['fp32']:.0%}", None))
    rows.append(("bf16 matmul rate / fp32 matmul rate", f"{peak['bf16'] / peak['fp32']:.2f}", None))
    rows.extend(bf16 or [(BF16_GOAL, "skipped (--quick)", None)])
    print_goals(f"Goals (hf-tiny {args.size}, {steps} steps, {torch.get_num_threads()} threads; bf16 rows: "
                f"{args.bf16_size} shape)", rows)
    print(f"\nwall time {time.perf_counter() - began:.0f} s; load average at the end {load_average()}")


def matmul_rates(wait: float) -> dict[str, float]:
    """The best fp32 and bf16 matmul rates of this machine (emulated bf16: one size, it is slow)."""
    peak: dict[str, float] = {}
    shown: dict[str, tuple[int, ...]] = {}
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        wait_for_quiet(wait)
        shown[name] = (256, 512, 1024) if name == "fp32" or native_bf16() else (512,)
        peak[name] = max(matmul_rate(dtype, n, 0.3) for n in shown[name])
    print(f"matmul rate: fp32 {peak['fp32'] / 1e9:.1f} GFLOP/s (best of {', '.join(map(str, shown['fp32']))}²), "
          f"bf16 {peak['bf16'] / 1e9:.1f} GFLOP/s (best of {', '.join(map(str, shown['bf16']))}²)")
    return peak


def print_goals(title: str, rows: list[tuple[str, str, bool | None]]) -> None:
    width = max(len(goal) for goal, _, _ in rows)
    figures = max(17, *(len(figure) for _, figure, _ in rows))
    print(f"\n{title}")
    for goal, figure, met in rows:
        print(f"  {goal:<{width}}  {figure:>{figures}}  {verdict(met)}")


def _best(runs: list[Timed]) -> Timed:
    """The fastest pass: other processes only ever slow a run down."""
    return max(runs, key=lambda r: r.rate)


BF16_GOAL = f"c bf16 / fp32 training throughput >= {GOAL_BF16_SPEEDUP:g}"
BF16_LOSS_GOAL = (f"c |loss bf16 - loss fp32| <= {BF16_LOSS_TOLERANCE:g} x loss fp32 "
                  f"(mean of the last {BF16_LOSS_WINDOW} steps)")


def compare_bf16(args: argparse.Namespace) -> list[tuple[str, str, bool | None]]:
    """clue-core fp32 against bf16 at BERT-base size on the TNEWS-like data: speed and training loss.

    Runs only where bf16 is native (AVX512-BF16/AMX, or a bf16 GPU); elsewhere autocast
    emulates bf16 matmuls far below the fp32 rate and the goal is ``n/a``. ``--bf16-force``
    runs it anyway (the losses mean what they mean, the speed does not); ``--bf16-dry`` runs
    the same path with a few tiny steps: it shows the code works, nothing more.
    """
    native, dry = native_bf16(), args.bf16_dry
    forced = (args.bf16_force or dry) and not native
    shape = f"{args.bf16_size} shape"
    if not native and not forced:
        reason = ("no native bf16 on this CPU (neither AVX512-BF16 nor AMX; torch emulates bf16 matmuls): "
                  "n/a, not run (--bf16-dry runs the code path)")
        print(f"\nbf16 against fp32 (clue-core, {shape}): {reason}")
        return [(BF16_GOAL, "n/a: no native bf16", None), (BF16_LOSS_GOAL, "not run", None)]
    steps = DRY_STEPS if dry else args.bf16_steps
    batch = DRY_BATCH if dry else BATCH_SIZE
    repeats = 1 if dry else args.bf16_repeats
    window = min(BF16_LOSS_WINDOW, steps)
    dist = DISTRIBUTIONS[0]
    bench = Bench(dist, SIZES[args.bf16_size], steps, 0, batch_size=batch, learning_rate=BF16_LEARNING_RATE)
    label = "DRY RUN, the figures measure nothing: " if dry else ""
    emulated = ", bf16 EMULATED: its speed is not representative" if forced else ""
    print(f"\nbf16 against fp32 ({label}clue-core, hf-tiny at {shape} {SIZES[args.bf16_size]}, "
          f"{dist.description}; {steps} steps of {batch} examples, lr {BF16_LEARNING_RATE:g}, "
          f"{repeats} run{'s' if repeats > 1 else ''} of each precision, alternating{emulated})")
    runs: dict[str, list[Timed]] = {"no": [], "bf16": []}
    for repeat in range(repeats):
        for precision in ("no", "bf16") if repeat % 2 == 0 else ("bf16", "no"):
            wait_for_quiet(args.wait)
            with tempfile.TemporaryDirectory(prefix="bench-bf16-") as folder:
                run = bench.train_arm("c", Path(folder), mixed_precision=precision).train
            assert len(run.losses) == steps, (len(run.losses), steps)
            runs[precision].append(run)
            print(f"  run {repeat + 1} {PRECISION[precision]}: {run.rate:7.2f} ex/s ({run.seconds:6.1f} s), "
                  f"loss first {run.losses[0]:.4f} last-{window} mean {statistics.fmean(run.losses[-window:]):.4f} "
                  f"(others {percent(run.others)})", flush=True)
    rate = {p: statistics.median(r.rate for r in rs) for p, rs in runs.items()}
    loss = {p: statistics.median(statistics.fmean(r.losses[-window:]) for r in rs) for p, rs in runs.items()}
    speedup = rate["bf16"] / rate["no"]
    difference, tolerance = abs(loss["bf16"] - loss["no"]), BF16_LOSS_TOLERANCE * loss["no"]
    steady = {p: statistics.median(_steady_seconds(r) for r in rs) for p, rs in runs.items()}
    print(f"  median: fp32 {rate['no']:.2f} ex/s, bf16 {rate['bf16']:.2f} ex/s, ratio {speedup:.2f}; "
          f"without step 1 (warm-up) {steady['no'] / steady['bf16']:.2f}")
    fp32, bf16 = runs["no"][0].losses, runs["bf16"][0].losses
    gaps = [abs(b - a) / a for a, b in zip(fp32, bf16)]
    print(f"  training loss, mean of the last {window} steps: fp32 {loss['no']:.4f}, bf16 {loss['bf16']:.4f}; "
          f"difference {difference:.4f}, tolerance {tolerance:.4f}")
    print(f"  same batches, same initial weights: largest per-step loss difference {max(gaps):.3%} (step "
          f"{gaps.index(max(gaps)) + 1}); fp32 loss over the run: mean of the first {window} steps "
          f"{statistics.fmean(fp32[:window]):.4f}, of the last {window} {statistics.fmean(fp32[-window:]):.4f}")
    _first_widths(runs)
    if forced or dry:
        kind = "dry run" if dry else "forced"
        return [(BF16_GOAL, f"{speedup:.2f} ({kind}{', emulated' if forced else ''})", None),
                (BF16_LOSS_GOAL, f"{loss['no']:.3f} / {loss['bf16']:.3f} ({kind})", None)]
    return [(BF16_GOAL, f"{speedup:.2f}", speedup >= GOAL_BF16_SPEEDUP),
            (BF16_LOSS_GOAL, f"{loss['no']:.3f} / {loss['bf16']:.3f}", difference <= tolerance)]


PRECISION = {"no": "fp32", "bf16": "bf16"}


def _steady_seconds(run: Timed) -> float:
    """Seconds of steps 2 to N (step 1 allocates the optimizer state and the first kernels)."""
    return run.step_ends[-1] - run.step_ends[0]


def _first_widths(runs: dict[str, list[Timed]]) -> None:
    """Step time by whether the batch width was new in the run: kernels created per shape (oneDNN) show here."""
    widths = [width for _, width, _ in runs["no"][0].shapes.batches]
    new = [i for i in range(1, len(widths)) if widths[i] not in widths[:i]]
    seen = [i for i in range(1, len(widths)) if widths[i] in widths[:i]]
    parts = []
    for precision, rs in runs.items():
        times = {i: statistics.median(r.step_ends[i] - r.step_ends[i - 1] for r in rs) for i in range(1, len(widths))}
        mean = {kind: f"{statistics.fmean(times[i] for i in steps) * 1000:.0f}" if steps else "-"
                for kind, steps in (("new", new), ("seen", seen))}
        parts.append(f"{PRECISION[precision]} {mean['new']} / {mean['seen']} ms")
    print(f"  mean step time, steps 2-{len(widths)} whose batch width is new in the run ({len(new)}) / was seen "
          f"before ({len(seen)}): " + "; ".join(parts))


if __name__ == "__main__":
    sys.exit(main())
