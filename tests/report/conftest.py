"""Run folders and built reports shared by the report tests (built once per session).

Real runs come from the runner itself on the bundled samples: ``baseline`` (instant) and
the Makefile demo (``afqmc cmrc2018 chid c3 --model hf-tiny --sample``). LLM runs and the
SuperCLUE comparison are fixtures written by :mod:`tests.report.fixtures`.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clue_core.kernel import Kernel
from clue_core.runner import RunRequest, run
from clue_core.specs import PublishedScore
from tests.report.fixtures import copy_as_full_data, write_comparison, write_run

DEMO_TASKS = ["afqmc", "cmrc2018", "chid", "c3"]
BASELINE_TASKS = ["afqmc", "tnews", "iflytek", "ocnli", "cmrc2018", "chid", "c3"]
#: An LLM score published for AFQMC dev (OpenCompass, Qwen-7B-Chat, generation; PUBLISHED.md): its mode
#: is written as the source writes it, "generation", which the report maps onto the runs' "generate".
LLM_PUBLISHED = PublishedScore(model="Qwen-7B-Chat", split="dev", version="1.1", metric="accuracy", value=69.0,
                               source="OpenCompass examples/eval_qwen_7b_chat.py", mode="generation", shots=0)
GLYPH_WARNING = r"Glyph .* missing from"


@pytest.fixture(scope="session", autouse=True)
def _clue_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Runs in these tests cache nothing outside their temporary folders."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUE_HOME", str(tmp_path_factory.mktemp("clue-home")))
        yield


@pytest.fixture(scope="session")
def kernel() -> Kernel:
    return Kernel()


def _run(kernel: Kernel, tasks: list[str], model: str, output: Path, **extra: Any) -> Path:
    run(kernel, RunRequest(tasks=tasks, model=model, sample=True, output_dir=output, command=["tests"], **extra),
        echo=lambda line: None)
    return output


@pytest.fixture(scope="session")
def baseline_runs(kernel: Kernel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(kernel, BASELINE_TASKS, "baseline", tmp_path_factory.mktemp("runs") / "baseline")


@pytest.fixture(scope="session")
def demo_runs(kernel: Kernel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Makefile demo's runs (hf-tiny trains for a few seconds per task)."""
    if "hf-tiny" not in kernel.models:
        pytest.skip("clue-models-hf is not installed")
    return _run(kernel, DEMO_TASKS, "hf-tiny", tmp_path_factory.mktemp("runs") / "demo")


@pytest.fixture(scope="session")
def llm_kernel() -> Kernel:
    """A kernel whose AFQMC also declares a published LLM score (generation, 0-shot)."""
    kernel = Kernel()
    afqmc = kernel.tasks["afqmc"]
    kernel.tasks["afqmc"] = dataclasses.replace(afqmc, published=(*afqmc.published, LLM_PUBLISHED))
    return kernel


@pytest.fixture(scope="session")
def llm_runs(llm_kernel: Kernel, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Fixture LLM runs (clue-models-llm's vocabulary: mode generate / loglikelihood): generate 0-shot and
    loglikelihood 5-shot on samples, plus two seeds of a comparable AFQMC run on a copy of the data
    standing for the full dev set."""
    root = tmp_path_factory.mktemp("llm")
    info = {"parameters": 7_000_000_000, "prompt_hash": "3f2a9c"}
    folders = []
    for name, settings in (("generate", {"mode": "generate", "shots": 0}),
                           ("loglikelihood", {"mode": "loglikelihood", "shots": 5})):
        folder = root / name
        for task in ("afqmc", "c3", "cmrc2018"):
            write_run(llm_kernel, folder, task, report_settings=settings, model_info=info)
        folders.append(folder)
    data = copy_as_full_data(llm_kernel, "afqmc", root / "afqmc-data")
    for seed in (1, 2):
        folder = root / f"full-seed{seed}"
        write_run(llm_kernel, folder, "afqmc", report_settings={"mode": "generate", "shots": 0}, seed=seed,
                  sample=False, data_dir=data, model_info=info,
                  answer=lambda e, i, s=seed: e.label if (i + s) % (2 + s) else ("1" if e.label == "0" else "0"))
        folders.append(folder)
    return folders


@pytest.fixture(scope="session")
def comparison_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("superclue")
    write_comparison(folder)
    return folder


def build(kernel: Kernel, paths: list[Path], output: Path, font: str | None = None) -> dict[str, Any]:
    """The report of ``paths``, with matplotlib's missing-glyph warnings turned into errors."""
    from clue_report import write_report

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=GLYPH_WARNING)
        return write_report(kernel, paths, output, font=font)


@pytest.fixture(scope="session")
def demo_report(kernel: Kernel, demo_runs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's report, drawn with a CJK font when one is installed."""
    output = tmp_path_factory.mktemp("demo-report")
    build(kernel, [demo_runs], output)
    return output


@pytest.fixture(scope="session")
def llm_report(llm_kernel: Kernel, llm_runs: list[Path], comparison_dir: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Path:
    """LLM runs and a SuperCLUE comparison, drawn without a CJK font (English labels)."""
    output = tmp_path_factory.mktemp("llm-report")
    build(llm_kernel, [*llm_runs, comparison_dir], output, font="none")
    return output


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"
