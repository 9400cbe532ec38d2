"""End to end through ``clue-core run``: every task kind, both modes, few-shot, the cache, submit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.models_llm.memorizer import ALL_TASKS

pytestmark = pytest.mark.slow


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def metrics(run: Path) -> dict:
    return json.loads((run / "metrics.json").read_text(encoding="utf-8"))


def manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("mode", ["loglikelihood", "generate"])
def test_every_kind_runs_and_submits(run_cli, tmp_path, mode) -> None:
    out = tmp_path / "runs"
    result = run_cli("run", "afqmc", "cmrc2018", "c3", "--model", "llm-tiny", "--sample", "-o", out,
                     "--set", f"mode={mode}", "--set", "max_new_tokens=8")
    assert result.exit_code == 0, result.output
    info = manifest(out / "afqmc")["model_info"]
    assert info == metrics(out / "afqmc")["model_info"]
    assert info["decoding"]["mode"] == mode and info["model"]["source"] == "llm-tiny"
    assert len(info["prompt"]["template_sha256"]) == 64 and info["shots"] == {"k": 0, "seed": 42, "ids": []}
    assert metrics(out / "afqmc")["model_category"] == "llm"
    record = read_jsonl(out / "c3" / "predictions" / "dev.jsonl")[0]
    assert record["raw"]["prompt"].endswith("答案：")
    if mode == "loglikelihood":
        assert record["raw"]["continuations"] and len(record["raw"]["logprobs"]) == len(record["scores"])
        assert record["raw"]["answer"] == record["raw"]["continuations"][record["prediction"]]
    else:
        assert "generation" in record["raw"] and "extracted" in record["raw"]
        assert info["decoding"] == {"mode": "generate", "greedy": True, "temperature": 0.0, "max_new_tokens": 8,
                                    "thinking_tokens": 2048, "stop": ["\n"]}
        counted = sum(1 for r in read_jsonl(out / "afqmc" / "predictions" / "dev.jsonl")
                      if r["raw"]["extracted"] is False)
        assert info["unextracted"] == counted  # a random model's answers mostly cannot be extracted
        assert all(r["prediction"] is None for r in read_jsonl(out / "afqmc" / "predictions" / "dev.jsonl")
                   if r["raw"]["extracted"] is False)
    span = read_jsonl(out / "cmrc2018" / "predictions" / "dev.jsonl")[0]
    assert "generation" in span["raw"] and span["raw"]["prompt"].startswith("阅读下面的文章")
    packed = run_cli("submit", *(out / t for t in ("afqmc", "cmrc2018", "c3")), "-o", tmp_path / "sub.zip")
    assert packed.exit_code == 0, packed.output
    assert (tmp_path / "sub.zip").is_file()


@pytest.mark.parametrize("mode", ["loglikelihood", "generate"])
def test_the_memorizing_model_scores_at_least_90_on_every_task(run_cli, memorizer, tmp_path, mode) -> None:
    out = tmp_path / mode
    result = run_cli("run", *ALL_TASKS, "--model", f"llm:{memorizer}", "--sample", "-o", out,
                     "--set", f"mode={mode}", "--set", "max_new_tokens=24")
    assert result.exit_code == 0, result.output
    for task in ALL_TASKS:
        found = metrics(out / task)
        assert found["primary"] >= 90.0, (task, found["dev"])
        assert found["model_info"]["unextracted"] == 0
        assert found["model_info"]["model"]["source"] == "folder"
    if mode == "loglikelihood":  # CHID's joint decoding works on the LLM's per-choice scores
        assert all(len(r["scores"]) == 10 for r in read_jsonl(out / "chid" / "predictions" / "dev.jsonl"))
    packed = run_cli("submit", *(out / t for t in ALL_TASKS), "-o", tmp_path / f"{mode}.zip")
    assert packed.exit_code == 0, packed.output


def test_traditional_conversion_is_recorded(run_cli, memorizer, tmp_path) -> None:
    pytest.importorskip("opencc")
    out = tmp_path / "drcd"
    result = run_cli("run", "drcd", "--model", f"llm:{memorizer}", "--sample", "-o", out, "--set", "mode=generate",
                     "--set", "traditional=true", "--set", "max_new_tokens=24")
    assert result.exit_code == 0, result.output
    found = metrics(out / "drcd")
    assert found["primary"] == 100.0 and found["report_settings"]["traditional"] is True
    assert found["model_info"]["traditional"] == {"converter": "opencc", "config": "s2tw"}
    assert all("traditional" in r["raw"] for r in read_jsonl(out / "drcd" / "predictions" / "dev.jsonl"))


def test_few_shot_is_drawn_with_the_seed_and_recorded(run_cli, tmp_path) -> None:
    def run(name, seed):
        out = tmp_path / name
        result = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "-o", out, "--seed", seed,
                         "--limit", "3", "--set", "shots=2")
        assert result.exit_code == 0, result.output
        return manifest(out / "afqmc")["model_info"], read_jsonl(out / "afqmc" / "predictions" / "dev.jsonl")

    first, predictions = run("a", 5)
    again, predictions_again = run("b", 5)
    other, _ = run("c", 6)
    assert len(first["shots"]["ids"]) == 2 and first["shots"] == again["shots"]
    assert first["prompt"]["prompts_sha256"] == again["prompt"]["prompts_sha256"]
    assert predictions == predictions_again
    assert other["shots"]["ids"] != first["shots"]["ids"]
    train = {r.get("id", i): r for i, r in enumerate(
        json.loads(line) for line in (Path(__file__).parents[2] / "plugins/clue-tasks-classic/clue_tasks_classic/"
                                      "samples/afqmc/train.json").read_text(encoding="utf-8").splitlines())}
    demo = train[first["shots"]["ids"][0]]
    assert demo["sentence1"] in predictions[0]["raw"]["prompt"]  # the demo is shown before the question
    assert first["prompt"]["template_sha256"] != other["prompt"]["template_sha256"]  # demos are in the template


def test_a_killed_run_resumes_from_the_cache(run_cli, tmp_path, monkeypatch) -> None:
    from clue_models_llm import scoring

    clean = tmp_path / "clean"
    assert run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "-o", clean, "--set", "result_cache=false",
                   "--set", "eval_batch_size=4").exit_code == 0
    original = scoring.LikelihoodScorer.score_batch
    calls = []

    def dies_on_the_third_batch(self, requests):
        calls.append(len(requests))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(self, requests)

    monkeypatch.setattr(scoring.LikelihoodScorer, "score_batch", dies_on_the_third_batch)
    out = tmp_path / "killed"
    killed = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "-o", out, "--set", "eval_batch_size=4")
    assert killed.exit_code != 0 and len(calls) == 3  # click turns the interrupt into "Aborted!"
    monkeypatch.setattr(scoring.LikelihoodScorer, "score_batch", original)
    assert (out / ".afqmc.staging").is_dir() and not (out / "afqmc").exists()
    resumed = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "-o", out, "--set", "eval_batch_size=4",
                      "--resume")
    assert resumed.exit_code == 0, resumed.output
    info = manifest(out / "afqmc")["model_info"]
    assert info["predict_calls"][0]["cached"] == 8 and info["predict_calls"][0]["computed"] == 8  # 2 of 4 batches
    resumed_records = read_jsonl(out / "afqmc" / "predictions" / "dev.jsonl")
    clean_records = read_jsonl(clean / "afqmc" / "predictions" / "dev.jsonl")
    assert [(r["id"], r["prediction"]) for r in resumed_records] == [(r["id"], r["prediction"]) for r in clean_records]
    for a, b in zip(resumed_records, clean_records):
        assert a["scores"] == pytest.approx(b["scores"], abs=1e-5)
    assert metrics(out / "afqmc")["dev"] == metrics(clean / "afqmc")["dev"]


def test_a_retrained_folder_does_not_reuse_answers(run_cli, memorizer, tmp_path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(memorizer, folder)

    def run(name):
        result = run_cli("run", "afqmc", "--model", f"llm:{folder}", "--sample", "-o", tmp_path / name,
                         "--limit", "4", "--cache", tmp_path / "cache")
        assert result.exit_code == 0, result.output
        return manifest(tmp_path / name / "afqmc")["model_info"]

    first, second = run("a"), run("b")
    assert second["cache"]["hits"] == first["cache"]["misses"] > 0 and second["model"] == first["model"]
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    weights["lm_head.weight"] = weights["lm_head.weight"] * 0.5
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    third = run("c")
    assert third["model"]["sha256"] != first["model"]["sha256"] and third["cache"]["hits"] == 0


def test_chat_templates(run_cli, memorizer, tmp_path) -> None:
    out = tmp_path / "plain"
    refused = run_cli("run", "afqmc", "--model", f"llm:{memorizer}", "--sample", "-o", out, "--set", "chat=true")
    assert refused.exit_code == 2 and "has no chat template" in refused.output
    folder = tmp_path / "chatty"
    shutil.copytree(memorizer, folder)
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["chat_template"] = ("{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
                               "{% if add_generation_prompt %}<assistant>{% if enable_thinking is defined and "
                               "not enable_thinking %}<think></think>{% endif %}{% endif %}")
    (folder / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "chat"
    result = run_cli("run", "afqmc", "--model", f"llm:{folder}", "--sample", "-o", out, "--set", "chat=true",
                     "--limit", "2")
    assert result.exit_code == 0, result.output
    info = manifest(out / "afqmc")["model_info"]["prompt"]
    assert info["chat"] is True and info["thinking_switch"] is True and len(info["chat_template_sha256"]) == 64
    prompt = read_jsonl(out / "afqmc" / "predictions" / "dev.jsonl")[0]["raw"]["prompt"]
    assert prompt.startswith("<user>判断下面两个问题") and prompt.endswith("<assistant><think></think>答案：")
