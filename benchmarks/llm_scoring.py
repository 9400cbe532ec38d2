"""Likelihood scoring: clue-models-llm against lm-evaluation-harness's HF backend, side by side.

Both score the same per-choice log-likelihoods on the same model, prompts and examples:
lm-evaluation-harness (``lm-eval==0.4.13``, its ``HFLM`` backend, ``loglikelihood`` over one
request per choice, batch 32) runs every ``prompt + choice`` as its own sequence;
clue-models-llm encodes each prompt once and scores the choices against its key/value
cache, batched across examples (``eval_batch_size`` 32). Two shapes of work:

* C3-like: a long passage and question, four short options (the shared prompt dominates);
* AFQMC-like: two short questions, two two-character labels (batching across examples decides).

The model is a 4-layer, 256-wide random Llama with a character vocabulary of the CJK
Unified Ideographs block (about 21,000 tokens, like BERT-Chinese's; ``--vocabulary`` shrinks it:
the smaller the vocabulary, the closer the ratios come to the ratio of tokens run, since
lm-evaluation-harness computes every position's log-softmax); the prompts are the
tasks' own (rendered by the plugin), the texts random characters. Timings are the median
of alternating runs (lm-eval, ours, lm-eval, …) on the same threads. The script prints the
largest difference between the two tools' log-likelihoods (goal: 1e-4) and each
throughput ratio next to its goal (C3-like >= 3.5x, AFQMC-like >= 1.5x).

    python benchmarks/llm_scoring.py                 # 200 C3-like, 400 AFQMC-like examples, 3 runs
    python benchmarks/llm_scoring.py --examples 50 --runs 1

lm-eval is installed for this benchmark only (``pip install lm-eval==0.4.13``); without it
the comparison prints n/a and only clue-models-llm's own time is measured.

``--server`` measures ``openai:<model>`` instead: a local OpenAI-compatible server in its own
process (``tests/support/openai_server.py``, scripted answers, ``--slots`` requests computed
at once, each taking ``--latency`` seconds: a server at capacity) answers AFQMC-like examples
generated at each concurrency setting. Printed per setting: requests, seconds, throughput and
its ratio against the named baseline (concurrency 1) in the same run, and the most requests in
flight measured at the server (goal: equal to the setting); throughput should grow with the
setting until the server's slots are the limit. Then the largest setting runs again on its
cache, as a resumed run would: the server must see 0 requests.

    python benchmarks/llm_scoring.py --server --examples 200
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

GOALS = {"c3-like": 3.5, "afqmc-like": 1.5}
TOLERANCE = 1e-4
CJK = "".join(chr(code) for code in range(0x4E00, 0xA000))
PUNCTUATION = "，。？！：；、“”‘’（）《》…—"


def build_model(seed: int, layers: int, hidden: int, vocabulary: int) -> tuple[Any, Any]:
    import torch
    from transformers import LlamaForCausalLM

    from clue_models_llm.tiny import build_tokenizer, tiny_config

    tokenizer = build_tokenizer([CJK[:vocabulary], PUNCTUATION, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789. \n"],
                                max_size=30_000)
    config = tiny_config(len(tokenizer), {"tiny_hidden_size": hidden, "tiny_num_layers": layers,
                                          "tiny_num_heads": max(1, hidden // 64),
                                          "tiny_intermediate_size": 4 * hidden})
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    return model, tokenizer


def _text(rng: random.Random, low: int, high: int, alphabet: str) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def examples(shape: str, count: int, seed: int) -> list[Any]:
    """Random texts in the shape of C3 or AFQMC examples (the alphabet: common CJK characters)."""
    from clue_core.plugin import ClassificationExample, MultipleChoiceExample

    rng = random.Random(seed)
    alphabet = CJK[:3500]
    made: list[Any] = []
    for i in range(count):
        if shape == "c3-like":
            context = "".join(_text(rng, 12, 30, alphabet) + rng.choice("，。？！") for _ in range(rng.randint(10, 16)))
            made.append(MultipleChoiceExample(i, context, _text(rng, 8, 16, alphabet) + "？",
                                              tuple(_text(rng, 2, 8, alphabet) for _ in range(4)), rng.randrange(4)))
        else:
            made.append(ClassificationExample(i, _text(rng, 8, 20, alphabet) + "？", _text(rng, 8, 20, alphabet) + "？",
                                              rng.choice(("0", "1"))))
    return made


def questions(task_name: str, items: Sequence[Any]) -> list[tuple[str, tuple[str, ...]]]:
    """``(prompt, choices)`` as clue-models-llm asks them (the task's own prompt, zero-shot)."""
    from clue_core.kernel import Kernel
    from clue_models_llm.prompts import Renderer

    renderer = Renderer(Kernel().task(task_name))
    rendered = [renderer.render(item) for item in items]
    return [(q.prompt, q.choices) for q in rendered]


def ours(model: Any, tokenizer: Any, items: Sequence[tuple[str, tuple[str, ...]]], batch_size: int
         ) -> list[list[float]]:
    from clue_models_llm.scoring import LikelihoodScorer, encode_requests

    requests = encode_requests(tokenizer, items, fallback=tokenizer.eos_token_id,
                               max_positions=model.config.max_position_embeddings)
    scored = LikelihoodScorer(model, batch_size, tokenizer.pad_token_id).score(requests)
    return [list(result.logprobs) for result in scored]


def lm_eval_backend(model: Any, tokenizer: Any, batch_size: int) -> Any:
    from lm_eval.models.huggingface import HFLM

    return HFLM(pretrained=model, tokenizer=tokenizer, batch_size=batch_size, device="cpu")


def theirs(lm: Any, items: Sequence[tuple[str, tuple[str, ...]]]) -> list[list[float]]:
    from lm_eval.api.instance import Instance

    requests = [Instance("loglikelihood", {}, (prompt, choice), index)
                for index, (prompt, choices) in enumerate(items) for choice in choices]
    results = lm.loglikelihood(requests, disable_tqdm=True)
    flat = iter(logprob for logprob, _ in results)
    return [[next(flat) for _ in choices] for _, choices in items]


def timed(run: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = run()
    return time.perf_counter() - started, value


def start_server(slots: int, latency: float) -> tuple[Any, str]:
    """The scripted test server in its own process, and its API root."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    process = subprocess.Popen([sys.executable, "-m", "tests.support.openai_server", "--scripted-echo",
                                "--slots", str(slots), "--latency", str(latency)], cwd=root,
                               stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline() if process.stdout else ""
    if not line.startswith("READY "):
        process.kill()
        raise SystemExit(f"the test server did not start: {line!r}")
    return process, line.split()[1]


def server_stats(url: str, reset: bool = False) -> dict[str, Any]:
    import json
    import urllib.request

    root = url.rsplit("/v1", 1)[0]
    request = urllib.request.Request(f"{root}/stats/reset" if reset else f"{root}/stats", method="POST" if reset
                                     else "GET", data=b"" if reset else None)
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read() or b"{}")


def served_run(url: str, items: Sequence[Any], concurrency: int, cache: Any) -> float:
    """Seconds to answer ``items`` through ``openai:tiny`` with ``concurrency`` requests in flight."""
    from clue_core.kernel import Kernel
    from clue_core.plugin import RunContext
    from clue_models_llm.factory import create_server

    task = Kernel().task("afqmc")
    learner = create_server("tiny", task, {"base_url": url, "concurrency": concurrency, "mode": "generate",
                                           "max_new_tokens": 8})
    learner.fit([], [], RunContext(task=task, cache_dir=cache, echo=lambda text: None))
    seconds, _ = timed(lambda: learner.predict(items))
    return seconds


def server_benchmark(args: argparse.Namespace) -> None:
    import tempfile
    from pathlib import Path

    items = examples("afqmc-like", args.examples, args.seed)
    process, url = start_server(args.slots, args.latency)
    settings = [1, 2, 4, 8, 16, 32]
    rows = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            baseline = None
            for concurrency in settings:
                cache = Path(folder) / f"c{concurrency}"
                server_stats(url, reset=True)
                seconds = served_run(url, items, concurrency, cache)
                stats = server_stats(url)
                throughput = len(items) / seconds
                baseline = baseline or throughput
                rows.append((concurrency, stats["requests"], f"{seconds:.2f}", f"{throughput:.1f}",
                             f"{throughput / baseline:.2f}x", stats["max_in_flight"],
                             "met" if stats["max_in_flight"] == min(concurrency, len(items)) else "NOT met"))
            server_stats(url, reset=True)
            served_run(url, items, settings[-1], Path(folder) / f"c{settings[-1]}")
            resent = server_stats(url)["requests"]
    finally:
        process.terminate()
        process.wait(30)
    print(f"server: scripted answers, {args.slots} slots, {args.latency:g} s per answer "
          f"(capacity {args.slots / args.latency:.0f} answers/s); {len(items)} AFQMC-like examples")
    header = ("concurrency", "requests", "seconds", "answers/s", "vs concurrency 1", "max in flight (server)",
              "in flight = setting")
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))
    print(f"resumed run at concurrency {settings[-1]} on its cache: {resent} requests sent (goal: 0) "
          f"{'met' if resent == 0 else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="C3-like examples (AFQMC-like: twice as many)")
    parser.add_argument("--runs", type=int, default=3, help="alternating timed runs per tool (median)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--vocabulary", type=int, default=len(CJK),
                        help="CJK characters in the vocabulary (the texts use the first 3,500)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server", action="store_true", help="measure openai:<model> against a local server")
    parser.add_argument("--slots", type=int, default=8, help="--server: requests the server computes at once")
    parser.add_argument("--latency", type=float, default=0.1, help="--server: seconds per answer")
    args = parser.parse_args()
    if args.server:
        server_benchmark(args)
        return

    import torch

    torch.set_num_threads(args.threads)
    from clue_models_llm.loading import quiet_transformers

    quiet_transformers()
    model, tokenizer = build_model(args.seed, args.layers, args.hidden, max(args.vocabulary, 3500))
    try:
        import lm_eval  # noqa: F401

        lm = lm_eval_backend(model, tokenizer, args.batch_size)
        version = getattr(__import__("lm_eval"), "__version__", "?")
    except ImportError:
        lm, version = None, None
    print(f"model: Llama, {args.layers} layers, {args.hidden} hidden, vocabulary {len(tokenizer):,}; "
          f"{args.threads} threads; batch {args.batch_size}; median of {args.runs} alternating runs")
    print(f"lm-evaluation-harness: {version or 'not installed (pip install lm-eval==0.4.13)'}")
    rows = []
    for shape, task, count in (("c3-like", "c3", args.examples), ("afqmc-like", "afqmc", 2 * args.examples)):
        items = questions(task, examples(shape, count, args.seed))
        n_requests = sum(len(choices) for _, choices in items)
        ours(model, tokenizer, items[:4], args.batch_size)  # warm-up
        if lm is not None:
            theirs(lm, items[:4])
        our_times, their_times = [], []
        our_scores = their_scores = None
        for _ in range(args.runs):
            if lm is not None:
                seconds, their_scores = timed(lambda items=items: theirs(lm, items))
                their_times.append(seconds)
            seconds, our_scores = timed(lambda items=items: ours(model, tokenizer, items, args.batch_size))
            our_times.append(seconds)
        ours_s = statistics.median(our_times)
        if lm is None:
            rows.append((shape, count, n_requests, "n/a", f"{ours_s:.2f}", "n/a", f">= {GOALS[shape]}x", "n/a", "n/a"))
            continue
        theirs_s = statistics.median(their_times)
        gap = max(abs(a - b) for mine, other in zip(our_scores, their_scores) for a, b in zip(mine, other))
        ratio = theirs_s / ours_s
        verdict = "met" if ratio >= GOALS[shape] and gap <= TOLERANCE else "NOT met"
        rows.append((shape, count, n_requests, f"{theirs_s:.2f}", f"{ours_s:.2f}", f"{ratio:.2f}x",
                     f">= {GOALS[shape]}x", f"{gap:.1e}", verdict))
    header = ("examples", "n", "requests", "lm-eval s", "clue-models-llm s", "ratio", "goal", "max |Δ logprob|",
              "goal met")
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))
    print(f"log-likelihoods must agree within {TOLERANCE:g} (per choice)")


if __name__ == "__main__":
    main()
