"""Produce the user-visible outputs that the golden test pins: dev metrics, per-example
predictions and submission file bytes of every task on the bundled samples.

The outputs were recorded (``python -m tests.golden.golden record``) before the plugin
contracts were redesigned; the test reruns the same commands through the CLI and insists
on the same results, so a refactor of the kernel cannot change what users get.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

TASKS = ("afqmc", "tnews", "iflytek", "ocnli", "cmnli", "cluewsc2020", "csl", "cmrc2018", "drcd", "chid", "c3")
MODELS = ("baseline", "hf-tiny")
DATA = Path(__file__).parent / "data"


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


def record(scratch: Path) -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    for model in MODELS:
        out = scratch / model
        run_model(model, out)
        (DATA / f"{model}.json").write_text(json.dumps(collect(out), ensure_ascii=False, indent=1, sort_keys=True)
                                            + "\n", encoding="utf-8")


if __name__ == "__main__":
    import tempfile

    if sys.argv[1:] != ["record"]:
        raise SystemExit("usage: python -m tests.golden.golden record")
    with tempfile.TemporaryDirectory() as tmp:
        record(Path(tmp))
