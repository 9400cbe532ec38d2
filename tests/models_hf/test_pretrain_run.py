"""``clue-core pretrain`` end to end on a small corpus from the bundled samples' texts:
the held-out loss falls, a kill loses nothing and resuming gives the same weights, the
result fine-tunes, and bad input stops before anything is written."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from clue_models_hf import pretrain_loop

from .conftest import invoke
from .pretrain_samples import write_corpus

FAST = ("--set", "max_length=32", "--set", "batch_size=8", "--set", "tiny_hidden_size=32",
        "--set", "tiny_num_layers=1", "--set", "tiny_intermediate_size=64", "--set", "eval_sequences=16",
        "--set", "eval_share=0.1", "--set", "tokenize_workers=1", "--set", "progress=false",
        "--set", "logging_steps=5", "--set", "learning_rate=5e-3", "--set", "save_every_seconds=0")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("pretrain") / "corpus")


def pretrain(corpus: Path, out: Path, *extra: str) -> object:
    return invoke("pretrain", "--corpus", corpus, "--model", "hf-tiny", "-o", out, *FAST, *extra)


def weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "model" / "model.safetensors"))


@pytest.mark.slow
def test_pretraining_lowers_the_held_out_loss_and_the_model_fine_tunes(corpus, tmp_path, monkeypatch) -> None:
    bad = corpus.parent / "with-bad"
    write_corpus(bad)
    (bad / "news2016zh_corpus" / "old.txt").write_bytes("旧文件".encode("gb18030"))
    (bad / "news2016zh_corpus" / "empty.txt").write_bytes(b"")
    out = tmp_path / "out"
    result = pretrain(bad, out, "--set", "max_steps=30", "--set", "eval_every=10", "--set", "bad_files=skip")
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.output.splitlines() if line.startswith("skipped:")]
    assert len(skipped) == 2 and "old.txt: not UTF-8" in skipped[1] and "empty.txt: empty" in skipped[0]
    assert "tokens/s" in result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["eval_loss_last"] < metrics["eval_loss_first"] - 0.3
    assert [h["step"] for h in metrics["eval_history"]] == [0, 10, 20, 30]
    assert metrics["steps"] == 30 and metrics["train_tokens"] == 30 * 8 * 32
    assert metrics["data"]["files"] == 8 and metrics["data"]["eval_documents"] > 0
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in (out / "model").iterdir()}

    monkeypatch.setenv("CLUE_HOME", str(tmp_path / "home"))
    tuned = invoke("run", "afqmc", "--model", f"hf:{out / 'model'}", "--sample", "-o", tmp_path / "runs",
                   "--set", "max_steps=3", "--set", "progress=false")
    assert tuned.exit_code == 0, tuned.output
    manifest = json.loads((tmp_path / "runs" / "afqmc" / "manifest.json").read_text())
    assert str(out / "model") in json.dumps(manifest)


@pytest.mark.slow
def test_a_kill_then_resume_gives_the_weights_of_an_uninterrupted_run(corpus, tmp_path, monkeypatch) -> None:
    steps = ("--set", "max_steps=12", "--set", "eval_every=4", "--set", "save_every=0")
    straight = pretrain(corpus, tmp_path / "straight", *steps)
    assert straight.exit_code == 0, straight.output

    def terminate(self, step):  # SIGTERM as a scheduler sends it: the step ends, a checkpoint is written
        if step == 5:
            os.kill(os.getpid(), signal.SIGTERM)

    out = tmp_path / "killed"
    with monkeypatch.context() as patch:
        patch.setattr(pretrain_loop.PretrainLoop, "after_step", terminate)
        killed = pretrain(corpus, out, *steps)
    assert killed.exit_code == 130, killed.output
    assert "interrupted at step 5; checkpoint step-00000005 saved" in killed.output
    assert not (out / "model").exists() and not (out / "metrics.json").exists()

    again = pretrain(corpus, out, *steps)
    assert again.exit_code == 2 and "--resume" in again.output  # never silently started over
    changed = pretrain(corpus, out, *steps, "--resume", "--set", "learning_rate=1e-3")
    assert changed.exit_code == 2 and "learning_rate" in changed.output
    resumed = pretrain(corpus, out, *steps, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "resume: continuing from step-00000005" in resumed.output

    import torch

    first, second = weights(tmp_path / "straight"), weights(out)
    assert first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)
    histories = [json.loads((d / "metrics.json").read_text())["eval_history"] for d in (tmp_path / "straight", out)]
    assert histories[0] == histories[1]


@pytest.mark.slow
def test_a_hard_kill_resumes_from_the_last_periodic_checkpoint(corpus, tmp_path, monkeypatch) -> None:
    steps = ("--set", "max_steps=10", "--set", "eval_every=5", "--set", "save_every=3", "--set",
             "gradient_accumulation_steps=2")
    straight = pretrain(corpus, tmp_path / "straight", *steps)
    assert straight.exit_code == 0, straight.output

    class Killed(Exception):
        """Stands for SIGKILL: no handler runs, nothing is written after it."""

    def kill(self, step):
        if step == 7:
            raise Killed

    out = tmp_path / "killed"
    with monkeypatch.context() as patch:
        patch.setattr(pretrain_loop.PretrainLoop, "after_step", kill)
        with pytest.raises(Killed):
            pretrain(corpus, out, *steps)
    checkpoints = sorted(p.name for p in (out / "training" / "checkpoints").iterdir())
    assert checkpoints == ["step-00000003", "step-00000006"]
    resumed = pretrain(corpus, out, *steps, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "resume: continuing from step-00000006" in resumed.output

    import torch

    first, second = weights(tmp_path / "straight"), weights(out)
    assert all(torch.equal(first[k], second[k]) for k in first)


def test_a_bad_file_is_refused_by_default_before_anything_is_written(corpus, tmp_path) -> None:
    bad = tmp_path / "corpus"
    write_corpus(bad)
    (bad / "wiki2019zh_corpus" / "gbk.txt").write_bytes("中文".encode("gb18030"))
    result = pretrain(bad, tmp_path / "out")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines[0] == f"bad file: {bad / 'wiki2019zh_corpus' / 'gbk.txt'}: " \
        "not UTF-8 (byte 0, line 1); convert it (iconv -f GB18030 -t UTF-8) or remove it"
    assert lines[1].startswith("error: ") and "bad_files=skip" in lines[1] and len(lines) == 2
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("extra", "message"), [
    (("--set", "max_stepz=3"), "unknown setting 'max_stepz' (--set); did you mean 'max_steps'?"),
    (("--set", "mlm_probability=0.9"), "setting 'mlm_probability' (--set): must be at most 0.5, got '0.9'"),
    (("--set", "whole_word_mask=maybe"), "setting 'whole_word_mask' (--set): expected true or false"),
    (("--set", "bad_files=ignore"), "setting 'bad_files' (--set): expected one of 'refuse', 'skip'"),
    (("--set", "tiny_num_heads=3"), "setting 'tiny_num_heads' (3) must divide tiny_hidden_size (32)"),
])
def test_bad_settings_are_one_line_before_anything_is_written(corpus, tmp_path, extra, message) -> None:
    result = pretrain(corpus, tmp_path / "out", *extra)
    assert result.exit_code == 2 and message in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_model_names_and_output_folders_are_checked_first(corpus, tmp_path) -> None:
    odd = invoke("pretrain", "--corpus", corpus, "--model", "bert", "-o", tmp_path / "a")
    assert odd.exit_code == 2 and "expected hf-tiny, hf:<hub id or save_pretrained folder>" in odd.output
    tiny_only = invoke("pretrain", "--corpus", corpus, "--model", f"hf:{tmp_path}", "-o", tmp_path / "a",
                       "--set", "tiny_num_layers=1")
    assert tiny_only.exit_code == 2 and "tiny_* settings are for --model hf-tiny" in tiny_only.output
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    refused = pretrain(corpus, mine, "--overwrite")
    assert refused.exit_code == 2 and "no pre-training output" in refused.output
    assert (mine / "notes.txt").read_text() == "keep me"
    missing = invoke("pretrain", "--corpus", tmp_path / "none", "--model", "hf-tiny", "-o", tmp_path / "b")
    assert missing.exit_code == 2 and "no such corpus folder" in missing.output
