"""``gguf:`` (llama.cpp in process) against ``llm:`` (the same GGUF dequantised, transformers fp32) and llama.cpp.

Three comparisons, one run, the same gemma-3-270m Q4_K_M file:

1. **gguf: vs llm:** on the same C3 questions by likelihood (``llm_gemma_common.c3_questions``:
   real-format questions built from the samples' texts, rendered by the C3 task's template),
   each side in a fresh process of its own through its backend class (what ``clue-core run``
   calls), so each peak RSS (VmHWM) is its own: wall seconds (model load + scoring), peak
   memory, argmax agreement and the mean |Δ log-likelihood| per choice (quantised vs
   dequantised arithmetic: they are not expected to be equal).
2. **gguf: vs the engine's limit:** the prompt tokens gguf: had llama.cpp evaluate per second of
   its scoring, against llama.cpp's ``Llama.eval`` of one long prompt (``--long`` tokens) of the
   same file with the same threads, timed in gguf:'s process right after its scoring (its peak
   memory is read before).
3. **gguf: vs llama.cpp's own server** (``python -m llama_cpp.server``, ``openai:``, echo +
   logprobs) on the AFQMC sample questions (``--server-limit`` per split), both through
   ``clue-core run``: per-choice |Δ log-likelihood| and the wall-time ratio.

    .venv/bin/python benchmarks/gguf_vs_llm.py --questions 50 --server-limit 2

The ``llm:`` side reads the dequantised copy ``llm:<file>.gguf`` keeps under ``--cache``
(``$CLUE_HOME/cache``); without it, it reads the GGUF itself (minutes). Ratios are printed
against the named baseline, with the goals of issue 33 (>= 2x faster at <= 0.5x the memory,
>= 95% agreement; >= 70% of the engine's rate; server: within 1e-3, >= 10x faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
SPEED_GOAL, MEMORY_GOAL, AGREEMENT_GOAL, ENGINE_GOAL, SERVER_GOAL = 2.0, 0.5, 95.0, 0.70, 10.0


def peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def side_backend(job: dict) -> dict:
    """One backend (``gguf`` or ``llm``) loaded and scoring every question, timed from before the load."""
    started = time.perf_counter()
    from clue_models_llm.backend import backend_info, create_backend
    from clue_models_llm.exchange import ScoreRequest
    from clue_models_llm.settings import complete

    family = job["family"]
    values = complete(backend_info(family).settings, job["values"])
    backend = create_backend(family, job["gguf"], values, f"{family}:{Path(job['gguf']).name}")
    context = types.SimpleNamespace(world_size=1, rank=0, cache_dir=Path(job["cache"]), seed=0)
    backend.load(context, lambda: [])
    loaded = time.perf_counter()
    evaluated = [0]
    if family == "gguf":  # count the tokens llama.cpp is asked to evaluate
        engine, decode = backend.engine, backend.engine.decode

        def counting(tokens: Any, wanted: Any) -> Any:
            evaluated[0] += len(tokens)
            return decode(tokens, wanted)

        engine.decode = counting
    entries: dict[int, dict] = {}
    requests = [ScoreRequest(prompt, tuple(choices)) for prompt, choices in job["items"]]
    backend.score_choices(requests, ppl=False, done=entries.update)
    finished = time.perf_counter()
    peak = peak_rss_mib()
    # the engine's limit timed right after, in this process (on a shared machine, minutes apart is another load)
    engine = engine_rate({**job, "threads": backend.threads}) if family == "gguf" else None
    return {"engine": engine, "seconds": finished - started, "load_seconds": loaded - started,
            "score_seconds": finished - loaded,
            "peak_mib": peak, "evaluated_tokens": evaluated[0],
            "logprobs": [entries[i]["logprobs"] for i in range(len(requests))],
            "dtype": backend.describe().dtype}


def engine_rate(job: dict) -> dict:
    """llama.cpp's own rate: ``Llama.eval`` of one long prompt (its last position's logits only), best of 2."""
    import llama_cpp

    model = llama_cpp.Llama(model_path=job["gguf"], n_ctx=job["long"] + 16, n_batch=512, n_threads=job["threads"],
                            n_threads_batch=job["threads"], flash_attn=True, logits_all=False, verbose=False)
    text = "".join(prompt for prompt, _ in job["items"])
    tokens = [model.token_bos(), *model.tokenize(text.encode(), add_bos=False, special=True)]
    while len(tokens) < job["long"]:
        tokens += tokens[1:]
    tokens = tokens[:job["long"]]
    best = float("inf")
    for _ in range(2):
        model.reset()
        started = time.perf_counter()
        model.eval(tokens)
        best = min(best, time.perf_counter() - started)
    model.close()
    return {"tokens": len(tokens), "seconds": best}


def run_side(side: str, job: dict, scratch: Path) -> dict:
    path = scratch / f"{side}.json"
    path.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run([sys.executable, str(HERE), "--side", side, str(path)], capture_output=True, text=True,
                          cwd=HERE.parents[1])
    if done.returncode != 0:
        raise SystemExit(f"side {side} failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def readable_records(path: Path) -> list[Any]:
    """``llm_gemma_common._records`` without the lines that are not JSON (a raw sample cut mid-character)."""
    text = path.read_text(encoding="utf-8")
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    found = []
    for line in text.splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found


def differences(a: list[list[float]], b: list[list[float]]) -> tuple[float, float, float]:
    """Mean and largest per-choice |a - b|, and the share of questions whose argmax agrees (percent)."""
    flat = [abs(x - y) for row_a, row_b in zip(a, b) for x, y in zip(row_a, row_b)]
    agree = sum(max(range(len(x)), key=x.__getitem__) == max(range(len(y)), key=y.__getitem__) for x, y in zip(a, b))
    return statistics.fmean(flat), max(flat), 100.0 * agree / len(a)


def start_server(served: Any, gguf: str, threads: int, log: Path) -> tuple[subprocess.Popen, str]:
    """``llamacpp_vs_llm.start_server``'s server with flash attention on, as gguf: computes (its default is off,
    and the two attention paths' sums differ by about 0.2 in a log-likelihood on gemma)."""
    import urllib.request

    port = served.free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", "gemma", "--host",
               "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--logits_all", "true", "--flash_attn", "true",
               "--n_threads", str(threads), "--n_threads_batch", str(threads)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 300
    while True:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5):
                return server, url
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                said = log.read_text(errors="replace")[-2000:]
                raise SystemExit(f"llama.cpp's server did not start: {said}") from None
            time.sleep(0.5)


def against_server(gguf: str, threads: int, limit: int, scratch: Path) -> None:
    """gguf: and openai: against llama.cpp's server, on the AFQMC samples through ``clue-core run``."""
    sys.path.insert(0, str(HERE.parent))
    import llamacpp_vs_llm as served

    server, url = start_server(served, gguf, threads, scratch / "server.log")
    try:
        server_s = served.clue_run(["afqmc"], "openai:gemma", scratch / "served", scratch / "c-served", limit,
                                   f"base_url={url}", "concurrency=1", "timeout=3600")
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    gguf_s = served.clue_run(["afqmc"], f"gguf:{gguf}", scratch / "local", scratch / "c-local", limit,
                             f"n_threads={threads}")
    theirs, ours = served.scores(scratch / "served", "afqmc"), served.scores(scratch / "local", "afqmc")
    keys = sorted(set(theirs) & set(ours))
    mean, largest, agree = differences([theirs[k] for k in keys], [ours[k] for k in keys])
    print(f"server: {len(keys)} AFQMC sample questions (--limit {limit} per split), {threads} threads: openai: "
          f"against llama_cpp.server {server_s:.1f} s, gguf: {gguf_s:.1f} s wall (each a clue-core run, model load "
          f"included); gguf: {server_s / gguf_s:.2f}x faster (goal >= {SERVER_GOAL:.0f}x); per-choice |Δ "
          f"log-likelihood| mean {mean:.2e}, max {largest:.2e} (goal <= 1e-3); argmax agreement {agree:.0f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp's n_threads (0: this process's cores)")
    parser.add_argument("--long", type=int, default=2048, help="tokens of the engine's one long prompt")
    parser.add_argument("--server-limit", type=int, default=2, help="AFQMC questions per split for the server "
                        "comparison (0: skip it; its echo path is slow)")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--side", choices=("backend",), help=argparse.SUPPRESS)
    parser.add_argument("job", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        job = json.loads(Path(args.job).read_text(encoding="utf-8"))
        print(json.dumps(side_backend(job)))
        return
    sys.path.insert(0, str(HERE.parent))
    import llm_gemma_common as common

    from clue_core.data import clue_home
    from clue_models_llm.backends.llamacpp import available_cores

    common._records = readable_records  # a sample file cut mid-line (DataCLUE's raw cuts) stops sentences()
    cache = args.cache or clue_home() / "cache"
    gguf = str(common.gguf_file())
    threads = args.threads or available_cores()
    items = common.c3_questions(args.questions, args.seed)
    print(f"{len(items)} C3 questions, {sum(len(c) for _, c in items)} choices; {Path(gguf).name}; {threads} "
          f"threads; load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="gguf-vs-llm-") as work:
        scratch = Path(work)
        base = {"gguf": gguf, "cache": str(cache), "items": items}
        ours = run_side("backend", {**base, "family": "gguf", "values": {"n_threads": threads}, "long": args.long},
                        scratch)
        theirs = run_side("backend", {**base, "family": "llm", "values": {}}, scratch)
        engine = ours["engine"]
        mean, largest, agree = differences(ours["logprobs"], theirs["logprobs"])
        print(f"{'side':<28} {'wall s':>8} {'load s':>7} {'score s':>8} {'peak MiB':>9}")
        for name, side in ((f"gguf: ({ours['dtype']})", ours), (f"llm: ({theirs['dtype']})", theirs)):
            print(f"{name:<28} {side['seconds']:8.1f} {side['load_seconds']:7.1f} {side['score_seconds']:8.1f} "
                  f"{side['peak_mib']:9.0f}")
        print(f"gguf: vs llm: {theirs['seconds'] / ours['seconds']:.2f}x faster end to end (goal >= {SPEED_GOAL:.0f}x; "
              f"scoring alone {theirs['score_seconds'] / ours['score_seconds']:.2f}x), "
              f"{ours['peak_mib'] / theirs['peak_mib']:.2f}x the peak memory (goal <= {MEMORY_GOAL}x); argmax "
              f"agreement {agree:.0f}% (goal >= {AGREEMENT_GOAL:.0f}%); per-choice |Δ log-likelihood| mean "
              f"{mean:.3f}, max {largest:.3f}")
        rate = ours["evaluated_tokens"] / ours["score_seconds"]
        limit = engine["tokens"] / engine["seconds"]
        print(f"gguf: evaluated {ours['evaluated_tokens']} prompt tokens at {rate:.0f} tokens/s (scoring, end to end); "
              f"llama.cpp's eval of one {engine['tokens']}-token prompt: {limit:.0f} tokens/s; gguf: at "
              f"{100 * rate / limit:.0f}% of the engine's rate (goal >= {100 * ENGINE_GOAL:.0f}%)")
        if args.server_limit:
            against_server(gguf, threads, args.server_limit, scratch)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
