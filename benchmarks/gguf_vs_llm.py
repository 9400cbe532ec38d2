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
3. **gguf: vs llama.cpp's own server** (``python -m llama_cpp.server``) on the AFQMC sample
   questions (``--server-limit`` per split), two protocols:

   - *speed* (the ``openai:`` protocol): ``openai:`` against the server and ``gguf:``, each a
     ``clue-core run``: the wall-time ratio, and the |Δ| of that protocol, where the server
     computes each ``prompt + choice`` text in the calls its own prefix reuse makes;
   - *parity* (gguf:'s calls): the same tokens computed by the server in the calls gguf:
     makes (:func:`served_in_gguf_calls`: a fresh server per question, the prefix alone first):
     per-choice |Δ log-likelihood| against ``gguf:``'s run, goal <= 1e-3.

    .venv/bin/python benchmarks/gguf_vs_llm.py --questions 50 --server-limit 2
    .venv/bin/python benchmarks/gguf_vs_llm.py --server-only --server-limit 1

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


def start_server(served: Any, gguf: str, threads: int, log: Path, n_batch: int = 512) -> tuple[subprocess.Popen, str]:
    """``llamacpp_vs_llm.start_server``'s server with flash attention on, as gguf: computes (its default is off,
    and the two attention paths' sums differ by about 0.2 in a log-likelihood on gemma), and gguf:'s batch
    (``n_batch`` = ``n_ubatch``: how a prompt is cut into calls moves the sums)."""
    import urllib.request

    port = served.free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", "gemma", "--host",
               "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--logits_all", "true", "--flash_attn", "true",
               "--n_threads", str(threads), "--n_threads_batch", str(threads), "--n_batch", str(n_batch),
               "--n_ubatch", str(n_batch)]
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


def stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    import urllib.request

    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=3600) as response:
        return json.loads(response.read())


def served_in_gguf_calls(start: Any, questions: list[tuple[str, list[str], list[int], list[list[int]]]],
                         detokenize: Any) -> list[list[float]]:
    """Each question's choice log-likelihoods from ``llama_cpp.server``, computed in the calls gguf: makes.

    ``questions``: ``(prompt, choices, prefix, continuations)``, the last two the ids gguf: evaluates
    (``LlamaCppBackend.question_tokens``: the prefix, BOS first, from position 0 in calls of
    ``n_batch``; each continuation but its last token in one call after it). The server (0.3.36)
    cannot be sent ids: a completions ``prompt`` is a string or a list of one string (types.py,
    app.py); it tokenizes the text, adds BOS, and continues each request from the longest prefix
    it shares with the previous one, re-evaluating at least one token (``Llama.generate``); every
    text shares BOS, so only a fresh server's first request is evaluated from position 0. Hence a
    fresh server (``start()``: ``(process, api root)``) per question: the prefix's text first
    (no logprobs: one call, as gguf:'s), then each ``prompt + choice`` with echo + logprobs, which
    the server continues from the prefix with the choice's tokens in one call (gguf:'s call plus
    the last token, whose logits are not read and which moves no other row's). A choice sharing
    its first tokens with the previous one would be continued from those: it gets a fresh server.
    The tokens are checked against the server's own ``/extras/tokenize`` first.
    """
    found = []
    for prompt, choices, prefix, continuations in questions:
        server, url = None, ""
        previous: list[int] = []
        scores = []
        try:
            for choice, continuation in zip(choices, continuations):
                if server is None or continuation[:1] == previous[:1]:
                    if server is not None:
                        stop(server)
                    server, url = start()
                    root = url.removesuffix("/v1")
                    text = detokenize(prefix[1:])
                    for said, wanted in ((text, prefix), (prompt + choice, prefix + continuation)):
                        got = post(f"{root}/extras/tokenize", {"input": said})["tokens"]
                        if got != wanted:
                            raise SystemExit(f"the server tokenizes {said!r} as {got}, gguf: evaluates {wanted}")
                    post(f"{url}/completions", {"prompt": text, "max_tokens": 1, "temperature": 0.0})
                answer = post(f"{url}/completions", {"prompt": prompt + choice, "max_tokens": 1, "temperature": 0.0,
                                                     "echo": True, "logprobs": 0})
                got = answer["choices"][0]["logprobs"]["token_logprobs"]
                first = len(prefix) - 1  # token_logprobs[j]: position j + 1's token (BOS dropped)
                if len(got) < first + len(continuation):
                    raise SystemExit(f"the server echoed {len(got)} log-probabilities for "
                                     f"{len(prefix) + len(continuation)} tokens")
                scores.append(float(sum(got[first:first + len(continuation)])))
                previous = continuation
        finally:
            if server is not None:
                stop(server)
        found.append(scores)
    return found


def parity(gguf: str, threads: int, folder: Path, start: Any) -> tuple[int, float, float, float]:
    """gguf:'s run in ``folder`` against the server in gguf:'s calls: ``(choices, mean, max |Δ|, seconds)``."""
    from clue_models_llm.backend import backend_info, create_backend
    from clue_models_llm.settings import complete

    values = complete(backend_info("gguf").settings, {"n_threads": threads})
    backend = create_backend("gguf", gguf, values, "gguf")
    backend.load(types.SimpleNamespace(world_size=1, rank=0, cache_dir=folder / "unused", seed=0), lambda: [])
    questions, ours = [], []
    for path in sorted((folder / "afqmc" / "predictions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            raw = json.loads(line)["raw"]
            prefix, continuations, _ = backend.question_tokens(raw["prompt"], raw["continuations"])
            questions.append((raw["prompt"], raw["continuations"], prefix, continuations))
            ours.append(raw["logprobs"])
    started = time.perf_counter()
    theirs = served_in_gguf_calls(start, questions, backend.engine.detokenize)
    seconds = time.perf_counter() - started
    flat = [abs(a - b) for x, y in zip(ours, theirs) for a, b in zip(x, y)]
    return len(flat), statistics.fmean(flat), max(flat), seconds


def against_server(gguf: str, threads: int, limit: int, scratch: Path) -> None:
    """gguf: and openai: against llama.cpp's server, on the AFQMC samples through ``clue-core run`` (the speed);
    then the server given gguf:'s tokens in gguf:'s calls (the parity)."""
    sys.path.insert(0, str(HERE.parent))
    import llamacpp_vs_llm as served

    server, url = start_server(served, gguf, threads, scratch / "server.log")
    try:
        server_s = served.clue_run(["afqmc"], "openai:gemma", scratch / "served", scratch / "c-served", limit,
                                   f"base_url={url}", "concurrency=1", "timeout=3600")
    finally:
        stop(server)
    gguf_s = served.clue_run(["afqmc"], f"gguf:{gguf}", scratch / "local", scratch / "c-local", limit,
                             f"n_threads={threads}")
    theirs, ours = served.scores(scratch / "served", "afqmc"), served.scores(scratch / "local", "afqmc")
    keys = sorted(set(theirs) & set(ours))
    mean, largest, agree = differences([theirs[k] for k in keys], [ours[k] for k in keys])
    print(f"server, speed (openai: protocol: each prompt + choice text a request, split by the server's prefix "
          f"reuse): {len(keys)} AFQMC sample questions (--limit {limit} per split), {threads} threads: openai: "
          f"against llama_cpp.server {server_s:.1f} s, gguf: {gguf_s:.1f} s wall (each a clue-core run, model load "
          f"included); gguf: {server_s / gguf_s:.2f}x faster (goal >= {SERVER_GOAL:.0f}x); per-choice |Δ "
          f"log-likelihood| mean {mean:.2e}, max {largest:.2e} (other calls: not the parity figure); argmax "
          f"agreement {agree:.0f}%")
    count = [0]

    def start() -> tuple[subprocess.Popen, str]:
        count[0] += 1
        return start_server(served, gguf, threads, scratch / f"server-{count[0]}.log")

    choices, mean, largest, seconds = parity(gguf, threads, scratch / "local", start)
    print(f"server, parity (gguf:'s calls: the same token ids, the prefix alone from position 0 in one call, each "
          f"choice in one call after it; {count[0]} fresh servers, {seconds:.1f} s): {choices} choices, per-choice "
          f"|Δ log-likelihood| gguf: - llama_cpp.server mean {mean:.2e}, max {largest:.2e} (goal <= 1e-3: "
          f"{'met' if largest <= 1e-3 else 'NOT met'})")


def against_llm(gguf: str, cache: Path, threads: int, items: list[Any], long: int, scratch: Path) -> None:
    """gguf: against llm: on the C3 questions, and against the engine's own rate."""
    print(f"{len(items)} C3 questions, {sum(len(c) for _, c in items)} choices")
    base = {"gguf": gguf, "cache": str(cache), "items": items}
    ours = run_side("backend", {**base, "family": "gguf", "values": {"n_threads": threads}, "long": long},
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp's n_threads (0: this process's cores)")
    parser.add_argument("--long", type=int, default=2048, help="tokens of the engine's one long prompt")
    parser.add_argument("--server-limit", type=int, default=2, help="AFQMC questions per split for the server "
                        "comparison (0: skip it; its echo path is slow)")
    parser.add_argument("--server-only", action="store_true", help="only the comparisons with llama.cpp's server")
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
    print(f"{Path(gguf).name}; {threads} threads; load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="gguf-vs-llm-") as work:
        scratch = Path(work)
        if not args.server_only:
            against_llm(gguf, cache, threads, common.c3_questions(args.questions, args.seed), args.long, scratch)
        if args.server_limit:
            against_server(gguf, threads, args.server_limit, scratch)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
