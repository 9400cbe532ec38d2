"""``vllm:`` against ``llm:`` on the same model and examples: log-likelihood differences and throughput.

One prepared script for a machine with a GPU and vLLM installed (``pip install vllm`` in a
virtual environment of its own: vLLM brings its own torch). It installs nothing and reaches no
hub: the model is a local folder (``config.json``, tokenizer and weights) that both families
load, read with ``HF_HUB_OFFLINE=1``. Where vLLM is not installed or no GPU is visible it says
so in one line (``n/a: ...``) and exits 0, having run nothing; a ``--model`` that is not such a
folder is one ``error:`` line, exit 2. Otherwise it scores the same dev examples by likelihood
with ``llm:<folder>`` (transformers in process) and ``vllm:<folder>`` (vLLM's offline engine),
both in bf16 with the result cache off, and prints per task, each against its goal:

* the largest and the mean absolute difference of the per-choice log-likelihoods (goal: the
  largest within 1e-2 in bf16),
* the share of examples where both pick the same choice (goal: at least 99%),
* the throughput ratio vllm/llm in examples per second, model loading excluded (goal: at
  least 5x on C3).

    python benchmarks/vllm_check.py --model ~/models/Qwen2.5-0.5B          # C3 and TNEWS samples
    python benchmarks/vllm_check.py --model ~/models/Qwen2.5-0.5B --data-dir ~/clue --limit 1000
    python benchmarks/vllm_check.py --self-check                     # CPU only, no vLLM, no download

``--self-check`` runs the same comparison on the CPU, without vLLM: a small random Llama is
saved to a temporary folder and ``vllm:`` is answered by the stand-in engine with vLLM's
output shapes (``tests/support/vllm_reference.py``), so the request building, the parsing
of vLLM's answers and this script's arithmetic are checked; it exits 0 when the stand-in's
log-likelihoods equal ``llm:``'s within 1e-4 and every choice agrees (no throughput goal:
the stand-in is not vLLM). The stand-in is a test helper, not part of the installed package, so
the self-check puts the repository root on ``sys.path`` to import it (``python
benchmarks/vllm_check.py`` puts only ``benchmarks/`` there).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"max_abs": 1e-2, "agreement": 0.99, "ratio_c3": 5.0}
SELF_CHECK_TOLERANCE = 1e-4


def not_here() -> str | None:
    """Why the check cannot run on this machine (one line), or ``None`` where vLLM and a GPU are here."""
    if importlib.util.find_spec("vllm") is None:
        return (f"n/a: vLLM is not installed for {sys.executable} (this script installs nothing: pip install "
                f"vllm in an environment of its own, then run it there); nothing was run")
    import torch

    if not torch.cuda.is_available():
        return "n/a: no GPU is visible to torch here (vLLM's offline engine needs one); nothing was run"
    return None


def model_folder_problem(model: str | None) -> str | None:
    """Why ``--model`` is not a local model folder (one line), or ``None``: this script reaches no hub."""
    if not model:
        return "error: --model: give a local model folder (config.json, tokenizer, weights); no hub is reached"
    folder = Path(model).expanduser()
    if not (folder / "config.json").is_file():
        return (f"error: --model {model}: not a local model folder (no config.json in it); this script reads "
                f"folders only, it reaches no hub")
    return None


def examples(kernel: Any, name: str, data_dir: Path | None, limit: int | None) -> tuple[Any, list, list]:
    from clue_core import data
    from clue_core.reading import read_split

    task = kernel.task(name)
    folder = data.resolve_task_data(task, data_dir=data_dir, sample=data_dir is None)
    train = list(read_split(task, folder, "train").examples)
    dev = list(read_split(task, folder, "dev").examples)
    return task, train, dev[:limit] if limit else dev


def score(family: str, model: str, task: Any, train: list, dev: list, settings: dict[str, Any]
          ) -> tuple[list[Any], float]:
    """Predictions of ``family:model`` on ``dev`` and the seconds ``predict`` took (loading excluded)."""
    from clue_core.plugin import RunContext
    from clue_models_llm import factory

    learner = factory.create(family, model, task, {"result_cache": False, **settings})
    learner.fit(train, dev, RunContext(task=task, echo=lambda text: None))
    start = time.perf_counter()
    predictions = learner.predict(dev)
    return predictions, time.perf_counter() - start


def compare(ours: list[Any], theirs: list[Any]) -> dict[str, float]:
    """Per-choice |Δ log-likelihood| (largest, mean) and the share of examples with the same choice."""
    differences = []
    same = 0
    for a, b in zip(ours, theirs):
        differences += [abs(x - y) for x, y in zip(a.raw["logprobs"], b.raw["logprobs"])]
        same += a.value == b.value
    return {"max_abs": max(differences), "mean_abs": sum(differences) / len(differences),
            "agreement": same / len(ours)}


def run(model: str, tasks: list[str], data_dir: Path | None, limit: int | None, settings: dict[str, Any],
        vllm_settings: dict[str, Any], tolerance: float, throughput_goal: bool) -> bool:
    from clue_core.kernel import Kernel

    kernel = Kernel()
    print(f"{'task':<8} {'n':>5} {'llm s':>8} {'vllm s':>8} {'ratio':>7} {'max |Δ|':>9} {'mean |Δ|':>9} "
          f"{'agree':>7}  goals")
    ok = True
    for name in tasks:
        task, train, dev = examples(kernel, name, data_dir, limit)
        theirs, llm_seconds = score("llm", model, task, train, dev, settings)
        ours, vllm_seconds = score("vllm", model, task, train, dev, {**settings, **vllm_settings})
        found = compare(ours, theirs)
        ratio = llm_seconds / vllm_seconds
        verdicts = [f"max |Δ| <= {tolerance:g}: {'met' if found['max_abs'] <= tolerance else 'NOT met'}",
                    f"agree >= {GOALS['agreement']:.0%}: "
                    f"{'met' if found['agreement'] >= GOALS['agreement'] else 'NOT met'}"]
        ok &= found["max_abs"] <= tolerance and found["agreement"] >= GOALS["agreement"]
        if throughput_goal and name == "c3":
            verdicts.append(f"ratio >= {GOALS['ratio_c3']:g}x: {'met' if ratio >= GOALS['ratio_c3'] else 'NOT met'}")
            ok &= ratio >= GOALS["ratio_c3"]
        print(f"{name:<8} {len(dev):>5} {llm_seconds:>8.2f} {vllm_seconds:>8.2f} {ratio:>6.2f}x "
              f"{found['max_abs']:>9.2e} {found['mean_abs']:>9.2e} {found['agreement']:>7.1%}  {'; '.join(verdicts)}",
              flush=True)
    return ok


def self_check(tasks: list[str]) -> bool:
    """The comparison on the CPU: a random Llama folder, ``vllm:`` answered by the stand-in engine."""
    import torch
    from transformers import LlamaForCausalLM

    from clue_core.kernel import Kernel
    from clue_models_llm.prompts import vocabulary_texts
    from clue_models_llm.tiny import build_tokenizer, tiny_config

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # the stand-in is tests/support/vllm_reference.py, a test helper
    from tests.support import vllm_reference

    kernel = Kernel()
    texts = []
    for name in tasks:
        task, train, dev = examples(kernel, name, None, None)
        texts += vocabulary_texts(task, [*train, *dev])
    tokenizer = build_tokenizer(texts)
    torch.manual_seed(0)
    model = LlamaForCausalLM(tiny_config(len(tokenizer), {})).eval()
    vllm_reference.install()
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        return run(folder, tasks, None, 40, {"dtype": "float32", "shots": 1}, {}, SELF_CHECK_TOLERANCE, False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="a local model folder both families load (no hub id)")
    parser.add_argument("--tasks", default="c3,tnews", help="comma-separated tasks scored by likelihood")
    parser.add_argument("--data-dir", type=Path, default=None, help="CLUE data (default: the bundled samples)")
    parser.add_argument("--limit", type=int, default=None, help="first N dev examples per task")
    parser.add_argument("--tensor-parallel-size", type=int, default=1)
    parser.add_argument("--self-check", action="store_true", help="CPU only: the stand-in engine, no vLLM")
    args = parser.parse_args(argv)
    tasks = [t for t in args.tasks.split(",") if t]
    if args.self_check:
        ok = self_check(tasks)
    else:
        reason = not_here()
        if reason:
            print(reason)
            return 0
        problem = model_folder_problem(args.model)
        if problem:
            print(problem, file=sys.stderr)
            return 2
        os.environ["HF_HUB_OFFLINE"] = os.environ["TRANSFORMERS_OFFLINE"] = "1"
        ok = run(str(Path(args.model).expanduser()), tasks, args.data_dir, args.limit, {"dtype": "bfloat16"},
                 {"tensor_parallel_size": args.tensor_parallel_size}, GOALS["max_abs"], True)
    print("all goals met" if ok else "some goals NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
