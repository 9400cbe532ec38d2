"""Benchmark: reading and encoding a CMNLI-sized training file, against json + one tokenizer call.

Two arms, each run in a fresh Python process so that neither inherits the other's memory:

* baseline: ``json.loads`` every line into three lists (sentence1, sentence2, label), then
  one ``tokenizer(sentence1s, sentence2s, truncation=True, max_length=128)`` call;
* clue-core: the CMNLI reader (``clue_tasks_classic.readers.read_cmnli``: every field
  type-checked, bad lines named by file, line and field, frozen examples) and the HF
  learner's encoder (``clue_models_hf.encoding.encode_classification`` with labels), i.e.
  what ``clue-core run cmnli --model hf-…`` does before training starts. Its encoder
  asks the tokenizer for no attention masks (the collator derives them from lengths),
  which the baseline call, as it is usually written, builds and holds.

Both use the same tokenizer: the offline character-level BERT tokenizer of
``clue_models_hf.tiny`` (a fast, Rust-backed tokenizer), built once from the data and
saved, loaded by each arm before its clock starts. The script checks that both arms
produce the same token ids.

Time: wall clock of the read + encode work. Memory: peak resident set size of the arm's
process (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and, the figure the goal uses,
its growth over the resident size just before the work started (``/proc/self/statm``),
so that the interpreter, transformers and the tokenizer do not water the ratio down.

Data: 391,783 synthetic lines in CMNLI's train.json format (the size of the real file),
mostly Chinese sentences with some digits and Latin words; premises about 33
characters on average, hypotheses about 17 (fixed seed), in a temporary directory.

    python benchmarks/data_path.py            # 391,783 lines, best of 2 per arm
    python benchmarks/data_path.py --quick    # 60,000 lines, 1 run per arm
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PATHS = [str(ROOT), str(ROOT / "plugins" / "clue-tasks-classic"), str(ROOT / "plugins" / "clue-models-hf")]
sys.path[:0] = PATHS

LINES = 391_783
MAX_LENGTH = 128
LABELS = ("neutral", "entailment", "contradiction")
HANZI = "".join(chr(code) for code in range(0x4E00, 0x4E00 + 3000))
LATIN = ["NBA", "iPhone", "GDP", "CEO", "Wi-Fi", "3.5", "1999", "100%"]


def write_synthetic(path: Path, lines: int, seed: int = 391783) -> None:
    rng = random.Random(seed)
    # a Zipf-like character distribution, as real text has
    weights = [1.0 / (rank + 10) for rank in range(len(HANZI))]
    chars = rng.choices(HANZI, weights, k=200_000)
    position = 0

    def sentence(mean: float) -> str:
        nonlocal position
        length = max(3, int(rng.gammavariate(4.0, mean / 4.0)))
        if position + length > len(chars):
            position = 0
        text = "".join(chars[position:position + length])
        position += length
        if rng.random() < 0.1:
            cut = rng.randrange(len(text))
            text = text[:cut] + rng.choice(LATIN) + text[cut:]
        return text + "。"

    with path.open("w", encoding="utf-8") as handle:
        for _ in range(lines):
            record = {"sentence1": sentence(33.0), "sentence2": sentence(17.0), "label": rng.choice(LABELS)}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def current_rss_kb() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def checksum(ids: Any, types: Any) -> int:
    crc = 0
    for row_ids, row_types in zip(ids, types):
        crc = zlib.crc32(bytes(str(row_ids) + str(row_types), "ascii"), crc)
    return crc


def arm(name: str, data_dir: Path, tokenizer_dir: Path) -> dict[str, Any]:
    """One measured run; imports and tokenizer loading happen before the clock starts."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    if name == "baseline":
        start_rss = current_rss_kb()
        started = time.perf_counter()
        firsts, seconds, labels = [], [], []
        with (data_dir / "cmnli_public" / "train.json").open(encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                firsts.append(record["sentence1"])
                seconds.append(record["sentence2"])
                labels.append(record["label"])
        encoding = tokenizer(firsts, seconds, truncation=True, max_length=MAX_LENGTH)
        elapsed = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        crc = checksum(encoding["input_ids"], encoding["token_type_ids"])
        count = len(encoding["input_ids"])
    else:
        from clue_models_hf.encoding import encode_classification
        from clue_tasks_classic.catalog import task
        from clue_tasks_classic.readers import read_cmnli

        start_rss = current_rss_kb()
        started = time.perf_counter()
        split = read_cmnli(task("cmnli"), data_dir, "train")
        features = encode_classification(tokenizer, split.examples, {label: i for i, label in enumerate(LABELS)},
                                         MAX_LENGTH, with_labels=True)
        elapsed = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        crc = checksum((item["input_ids"] for item in features.items),
                       (item["token_type_ids"] for item in features.items))
        count = len(features)
    return {"seconds": elapsed, "peak_kb": peak, "start_kb": start_rss, "count": count, "crc": crc}


def run_arm(name: str, data_dir: Path, tokenizer_dir: Path) -> dict[str, Any]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(PATHS)}
    done = subprocess.run([sys.executable, __file__, "--arm", name, "--data-dir", str(data_dir),
                           "--tokenizer", str(tokenizer_dir)], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"arm {name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="60,000 lines, one run per arm")
    parser.add_argument("--arm", choices=("baseline", "clue-core"), help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tokenizer", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.arm:
        print(json.dumps(arm(args.arm, args.data_dir, args.tokenizer)))
        return

    lines, repeats = (60_000, 1) if args.quick else (LINES, 2)
    with tempfile.TemporaryDirectory(prefix="clue-data-path-") as tmp:
        data_dir = Path(tmp) / "cmnli"
        (data_dir / "cmnli_public").mkdir(parents=True)
        path = data_dir / "cmnli_public" / "train.json"
        started = time.perf_counter()
        write_synthetic(path, lines)
        from clue_models_hf import tiny

        with path.open(encoding="utf-8") as handle:
            sample = [handle.readline() for _ in range(20_000)]
        tokenizer_dir = Path(tmp) / "tokenizer"
        tiny.build_tokenizer(sample).save_pretrained(tokenizer_dir)
        size_mb = path.stat().st_size / 2**20
        print(f"setup (file of {size_mb:.1f} MiB, tokenizer; not timed): {time.perf_counter() - started:.1f} s")

        results: dict[str, dict[str, Any]] = {}
        for _ in range(repeats):
            for name in ("baseline", "clue-core"):
                result = run_arm(name, data_dir, tokenizer_dir)
                if name not in results or result["seconds"] < results[name]["seconds"]:
                    best_peak = min(result["peak_kb"], results.get(name, result)["peak_kb"])
                    results[name] = {**result, "peak_kb": best_peak}
    base, ours = results["baseline"], results["clue-core"]
    assert base["count"] == ours["count"] == lines, (base["count"], ours["count"], lines)
    assert base["crc"] == ours["crc"], "the two arms produced different token ids"

    def growth(result: dict[str, Any]) -> float:
        return (result["peak_kb"] - result["start_kb"]) / 1024

    time_ratio = ours["seconds"] / base["seconds"]
    memory_ratio = growth(ours) / growth(base)
    print(f"data path: {lines} CMNLI-like pairs, max_length {MAX_LENGTH}, best of {repeats} per arm; "
          "token ids identical in both arms")
    print()
    print(f"{'arm':<12}{'seconds':>10}{'peak RSS MiB':>14}{'growth MiB':>12}")
    for name, result in (("baseline", base), ("clue-core", ours)):
        print(f"{name:<12}{result['seconds']:>10.2f}{result['peak_kb'] / 1024:>14.0f}{growth(result):>12.0f}")
    print()
    print(f"{'goal':<36}{'figure':>10}  result")
    print(f"{'time <= 1.2x baseline':<36}{f'{time_ratio:.2f}x':>10}  {'met' if time_ratio <= 1.2 else 'MISSED'}")
    print(f"{'peak memory growth <= 2x baseline':<36}{f'{memory_ratio:.2f}x':>10}  "
          f"{'met' if memory_ratio <= 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
