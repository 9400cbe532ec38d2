"""The report explorer with 10,000 examples: the page's size and its load time in headless Chromium.

A synthetic AFQMC dev set of N/2 examples (the bundled sample's pairs, numbered) is answered by two
real runs of ``baseline`` (the majority label of its training data), the second trained on a copy
whose training labels are flipped (so it answers the other label: the two disagree everywhere);
the report is written with ``--examples N/2`` (N examples in the explorer), and Chromium opens
``index.html`` from disk with no filter and with filters. The load time is the page's own ``performance.now()`` when the
explorer's first render is done (``#explorer-count``'s ``data-ms``: from navigation start, the
HTML and the JSON parsed, the rows drawn), the median of the loads; the browser's wall time
around it (start-up included) is printed too.

    python benchmarks/report_explorer.py [--examples 10000] [--loads 3] [--keep DIR]
    python benchmarks/report_explorer.py --screenshot REPORT_DIR FRAGMENT OUT.png   # docs/images
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLUE = str(Path(sys.executable).parent / "clue-core")
SAMPLE = ROOT / "plugins" / "clue-tasks-classic" / "clue_tasks_classic" / "samples" / "afqmc"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")
FRAGMENTS = ("", "#wrong=1", "#q=%E8%8A%B1%E5%91%97", "#disagree=baseline%20%C2%B7%20run-1,baseline")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return str(shutil.which(name))
    raise SystemExit("Chromium is not installed (apt-get install chromium)")


def _lines(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def synthetic(target: Path, size: int, flip: bool) -> Path:
    """AFQMC's sample with ``size`` numbered dev pairs (the training labels flipped when ``flip``)."""
    shutil.copytree(SAMPLE, target)
    lines = _lines(SAMPLE / "dev.json")
    rows = [dict(lines[i % len(lines)]) for i in range(size)]
    _write(target / "dev.json", [dict(row, sentence1=f"{row['sentence1']}（第{i}条）") for i, row in enumerate(rows)])
    if flip:
        _write(target / "train.json", [dict(r, label="0" if r["label"] == "1" else "1")
                                       for r in _lines(SAMPLE / "train.json")])
    return target


def run(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([CLUE, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def load(page: Path, fragment: str, profile: Path) -> tuple[float, float, int]:
    """``(render ms from the page, browser wall seconds, rows matched)`` of one load."""
    start = time.perf_counter()
    dom = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                          page.resolve().as_uri() + fragment], capture_output=True, text=True, timeout=300,
                         check=True).stdout
    wall = time.perf_counter() - start
    found = re.search(r'id="explorer-count"[^>]*data-count="(\d+)"[^>]*data-ms="(\d+)"', dom)
    if not found:
        raise SystemExit(f"the explorer did not render {page}{fragment}")
    return float(found.group(2)), wall, int(found.group(1))


def screenshot(report: Path, fragment: str, out: Path, height: int = 1100) -> None:
    """The explorer of ``report`` filtered by ``fragment``, cut out of a screenshot of the whole page (a
    scrolled headless window is captured blank, so the window is as tall as the page)."""
    from PIL import Image

    page = report / "index.html"
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", "--window-size=1280,1000",
                              "--hide-scrollbars", "--dump-dom", page.resolve().as_uri() + fragment],
                             capture_output=True, text=True, check=True).stdout
        top = int(re.search(r'data-top="(\d+)"', dom).group(1))
        total = int(re.search(r'data-height="(\d+)"', dom).group(1))
        shot = Path(profile) / "page.png"
        subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", "--hide-scrollbars",
                        f"--window-size=1280,{total}", f"--screenshot={shot}", page.resolve().as_uri() + fragment],
                       capture_output=True, check=True)
        with Image.open(shot) as image:
            image.crop((0, max(0, top - 8), 1280, min(total, top + height))).save(out, optimize=True)
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000, help="dev examples in all (two runs share them)")
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the runs and the report here (kept)")
    parser.add_argument("--screenshot", nargs=3, metavar=("REPORT_DIR", "FRAGMENT", "OUT"))
    args = parser.parse_args()
    if args.screenshot:
        report, fragment, out = args.screenshot
        screenshot(Path(report), fragment, Path(out))
        return
    base = args.keep or Path(tempfile.mkdtemp(prefix="explorer-bench-"))
    half = args.examples // 2
    run("run", "afqmc", "--model", "baseline", "--data-dir", str(synthetic(base / "data-a", half, False)),
        "-o", str(base / "runs-a"), "--overwrite")
    run("run", "afqmc", "--model", "baseline", "--data-dir", str(synthetic(base / "data-b", half, True)),
        "-o", str(base / "runs-b"), "--overwrite")
    seconds = run("report", str(base / "runs-a"), str(base / "runs-b"), "-o", str(base / "report"),
                  "--examples", str(half), "--force")
    page = base / "report" / "index.html"
    report = json.loads((base / "report" / "report.json").read_text(encoding="utf-8"))
    shown = sum(r["shown"] for r in report["explorer"]["runs"])
    embedded = len(re.search(rb"id='explorer-data'>(.*?)</script>", page.read_bytes(), re.S).group(1))
    print(f"{shown} examples in the explorer ({len(report['explorer']['runs'])} runs); report written in "
          f"{seconds:.1f} s; index.html {page.stat().st_size / 1e6:.2f} MB (explorer data {embedded / 1e6:.2f} MB), "
          f"report.json {(base / 'report' / 'report.json').stat().st_size / 1e6:.2f} MB")
    with tempfile.TemporaryDirectory() as profile:
        for fragment in FRAGMENTS:
            loads = [load(page, fragment, Path(profile)) for _ in range(args.loads)]
            print(f"{fragment or '(no filter)':<50} rows {loads[0][2]:>6}  first render "
                  f"{statistics.median(ms for ms, _, _ in loads):7.0f} ms (median of {args.loads}), "
                  f"browser wall {statistics.median(w for _, w, _ in loads):5.2f} s")
    if not args.keep:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
