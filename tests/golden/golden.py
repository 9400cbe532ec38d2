"""Produce the user-visible outputs that the golden test pins: dev metrics, per-example
predictions and submission file bytes of every task on the bundled samples.

The outputs were recorded (``python -m tests.golden.golden record``) before the plugin
contracts were redesigned; the test reruns the same commands through the CLI and insists
on the same results, so a refactor of the kernel cannot change what users get.

A trained network's floats differ across CPUs and their math kernels, so for the models in
:data:`TRAINED` the recording also measures that spread: it reruns the model in fresh
processes under each of :data:`KERNEL_SETTINGS` (torch reads them at import) and writes the
largest score difference between any two runs, per task, to ``data/<model>.spread.json``.
The test's tolerances are derived from it (see :mod:`tests.golden.compare`).
``python -m tests.golden.golden spread`` re-measures without re-recording.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

TASKS = ("afqmc", "tnews", "iflytek", "ocnli", "cmnli", "cluewsc2020", "csl", "cmrc2018", "drcd", "chid", "c3")
MODELS = ("baseline", "hf-tiny")
#: Models whose outputs come from a trained network: compared within the measured spread.
TRAINED = ("hf-tiny",)
DATA = Path(__file__).parent / "data"
REPO_ROOT = Path(__file__).resolve().parents[2]

#: Kernel choices that change a trained network's floats on one machine: a stand-in for other
#: CPUs (scalar vs vectorised ATen kernels, oneDNN's instruction set, MKL's code path, threads).
KERNEL_SETTINGS: dict[str, dict[str, str]] = {
    "default": {},
    "one-thread": {"OMP_NUM_THREADS": "1"},
    "two-threads": {"OMP_NUM_THREADS": "2"},
    "aten-scalar": {"ATEN_CPU_CAPABILITY": "default"},
    "aten-avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "onednn-avx2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
    "onednn-sse41": {"ONEDNN_MAX_CPU_ISA": "SSE41"},
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
    "scalar-avx2-one-thread": {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "AVX2", "OMP_NUM_THREADS": "1"},
}
KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "OMP_NUM_THREADS", "MKL_CBWR")


def _invoke(args: list[str]) -> None:
    from clue_core.cli import cli

    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    if result.exit_code != 0:
        raise AssertionError(f"clue-core {' '.join(args)} exited {result.exit_code}: {result.output}")


def run_model(model: str, out: Path) -> None:
    """Every task with ``model`` on the samples, then diagnostics with the trained OCNLI model."""
    _invoke(["run", *TASKS, "--model", model, "--sample", "--output-dir", str(out / "runs")])
    _invoke(["run", "diagnostics", "--model", str(out / "runs" / "ocnli" / "model"), "--no-train", "--sample",
             "--output-dir", str(out / "diag")])


def collect(out: Path) -> dict[str, Any]:
    """The golden view of one model's runs: metrics, prediction records, submission files (text)."""
    view: dict[str, Any] = {}
    for run_dir in sorted([*(out / "runs").iterdir(), *(out / "diag").iterdir()]):
        task = run_dir.name
        metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
        entry: dict[str, Any] = {"dev": metrics["dev"], "primary": metrics["primary"], "predictions": {},
                                 "submission": {}}
        for path in sorted((run_dir / "predictions").glob("*.jsonl")):
            entry["predictions"][path.name] = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        for path in sorted((run_dir / "submission").glob("*")):
            entry["submission"][path.name] = path.read_bytes().decode("utf-8")
        view[task] = entry
    return view


def score_spread(views: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Per task, the largest |difference| of one per-label score between any two views (0.0 if none)."""
    views = list(views)
    spread = {task: 0.0 for task in views[0]}
    for one, other in itertools.combinations(views, 2):
        for task, entry in one.items():
            for split, records in entry["predictions"].items():
                for a, b in zip(records, other[task]["predictions"][split]):
                    for x, y in zip(a.get("scores") or (), b.get("scores") or ()):
                        spread[task] = max(spread[task], round(abs(x - y), 9))
    return spread


def view_under(model: str, setting: dict[str, str], scratch: Path) -> dict[str, Any]:
    """``model``'s golden view from a fresh process with the kernel variables set as ``setting`` says."""
    env = {name: value for name, value in os.environ.items() if name not in KERNEL_VARIABLES}
    env.update(setting, CLUE_HOME=str(scratch / "home"))
    scratch.mkdir(parents=True, exist_ok=True)
    out = scratch / "view.json"
    subprocess.run([sys.executable, "-m", "tests.golden.golden", "view", model, str(out)], cwd=REPO_ROOT, env=env,
                   check=True)
    return json.loads(out.read_text(encoding="utf-8"))


def _cpu() -> str:
    """The CPU the spread was measured on (documentation only)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def measure_spread(model: str, scratch: Path) -> dict[str, Any]:
    """Rerun ``model`` under every kernel setting and write the spread, recording included, beside it."""
    recorded = json.loads((DATA / f"{model}.json").read_text(encoding="utf-8"))
    views = [recorded]
    for name, setting in KERNEL_SETTINGS.items():
        views.append(view_under(model, setting, scratch / name))
    import torch

    measured = {"model": model, "cpu": _cpu(), "torch": torch.__version__, "settings": KERNEL_SETTINGS,
                "spread": score_spread(views)}
    (DATA / f"{model}.spread.json").write_text(json.dumps(measured, indent=1, sort_keys=True) + "\n",
                                               encoding="utf-8")
    return measured


def record(scratch: Path) -> None:
    """Record every model's golden view, then measure the trained models' spread."""
    DATA.mkdir(parents=True, exist_ok=True)
    for model in MODELS:
        out = scratch / model
        run_model(model, out)
        (DATA / f"{model}.json").write_text(json.dumps(collect(out), ensure_ascii=False, indent=1, sort_keys=True)
                                            + "\n", encoding="utf-8")
    for model in TRAINED:
        measure_spread(model, scratch / "spread" / model)


def main(argv: list[str]) -> None:
    """``record`` | ``spread`` | ``view MODEL OUT`` (the last is what :func:`view_under` runs)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CLUE_HOME"] = str(Path(tmp) / "home")  # a fresh cache, as the test has
        if argv == ["record"]:
            record(Path(tmp))
        elif argv == ["spread"]:
            for model in TRAINED:
                print(json.dumps(measure_spread(model, Path(tmp) / model)["spread"], sort_keys=True))
        elif len(argv) == 3 and argv[0] == "view":
            run_model(argv[1], Path(tmp) / "out")
            Path(argv[2]).write_text(json.dumps(collect(Path(tmp) / "out"), ensure_ascii=False), encoding="utf-8")
        else:
            raise SystemExit("usage: python -m tests.golden.golden record | spread")


if __name__ == "__main__":
    main(sys.argv[1:])
