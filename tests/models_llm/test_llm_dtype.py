"""``dtype=auto`` of ``llm:``: bf16-mixed on a CPU with native bf16 for a checkpoint stored in bf16, detected
from the CPU's flags (faked here, so every outcome is tested on every CPU), shown with its reason in
``--dry-run``, honoured when set, and recorded in the model's identity (the cache's key)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_models_llm import cpu_bf16

AVX512 = "processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16 avx512_vnni\n\nprocessor\t: 1\nflags\t\t: fpu\n"
AMX = "flags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8\n"
PLAIN = "flags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n"
ARM = "processor\t: 0\nFeatures\t: fp asimd bf16 i8mm\n"


def test_the_flags_decide_on_linux() -> None:
    # probe=None asks this machine's torch once torch is imported (an AVX2 CPU's says no): a torch without
    # a probe of its own (lambda: None) leaves the faked flags to decide on every CPU
    no_probe = lambda: None  # noqa: E731
    assert cpu_bf16.detect(AVX512, system="Linux", probe=no_probe) == cpu_bf16.Bf16(
        True, "this CPU has native bf16 (avx512_bf16)")
    assert cpu_bf16.detect(AMX, system="Linux", probe=no_probe).why == "this CPU has native bf16 (amx_bf16)"
    for text in (PLAIN, ARM, ""):
        found = cpu_bf16.detect(text, system="Linux", probe=None)
        assert not found.native and "neither avx512_bf16 nor amx_bf16" in found.why


def test_a_torch_that_does_not_use_the_instructions_gets_no_bf16() -> None:
    found = cpu_bf16.detect(AVX512, system="Linux", probe=lambda: False)
    assert not found.native and "this torch build does not use it" in found.why
    assert cpu_bf16.detect(AVX512, system="Linux", probe=lambda: None).native  # no probe in this torch: the flags


def test_no_cpuinfo_and_other_platforms_ask_torch(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(cpu_bf16, "CPUINFO", tmp_path / "missing")
    gone = cpu_bf16.detect(system="Linux", probe=lambda: False)
    assert not gone.native and f"no readable {tmp_path / 'missing'}" in gone.why
    assert cpu_bf16.detect(system="Linux", probe=lambda: True).native
    mac = cpu_bf16.detect(system="Darwin", probe=lambda: False)
    assert not mac.native and "Darwin: no /proc/cpuinfo" in mac.why
    windows = cpu_bf16.detect(system="Windows", probe=lambda: True)
    assert windows.native and windows.why == "torch finds native bf16 on this CPU (Windows: no /proc/cpuinfo)"


def checkpoint(folder: Path, dtype: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "dtype": dtype}), encoding="utf-8")
    return folder


def test_auto_on_the_cpu_needs_native_bf16_and_a_bf16_checkpoint(tmp_path) -> None:
    native, plain = cpu_bf16.Bf16(True, "native"), cpu_bf16.Bf16(False, "plain")
    stored = checkpoint(tmp_path / "bf16", "bfloat16")
    assert cpu_bf16.auto_on_cpu(str(stored), bf16=native) == ("bf16-mixed", "native, and the checkpoint is stored "
                                                                            "in bfloat16")
    assert cpu_bf16.auto_on_cpu(str(stored), bf16=plain) == ("float32", "plain")
    assert cpu_bf16.auto_on_cpu(str(checkpoint(tmp_path / "fp32", "float32")), bf16=native)[0] == "float32"
    assert cpu_bf16.auto_on_cpu(None, bf16=native)[0] == "float32"  # llm-tiny
    assert cpu_bf16.auto_on_cpu(str(tmp_path / "gemma.GGUF"), bf16=native)[0] == "float32"
    old = {"torch_dtype": "float16"}
    assert cpu_bf16.stored_dtype(old) == "float16"
    assert cpu_bf16.stored_dtype({"text_config": {"dtype": "bfloat16"}}) == "bfloat16"
    assert cpu_bf16.stored_dtype({"dtype": None}) is None
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{", encoding="utf-8")
    assert cpu_bf16.auto_on_cpu(str(tmp_path / "broken"), download=True, bf16=native)[0] == "float32"


@pytest.fixture
def fake_cpu(monkeypatch, tmp_path):
    """``fake(text)``: this process's CPU reads as ``text`` (torch's probe not asked)."""

    def fake(text: str) -> None:
        path = tmp_path / "cpuinfo"
        path.write_text(text, encoding="utf-8")
        monkeypatch.setattr(cpu_bf16, "CPUINFO", path)
        monkeypatch.setattr(cpu_bf16, "torch_probe", lambda: None)
        monkeypatch.setattr(cpu_bf16, "_maybe_gpu", lambda: False)

    return fake


def dry_dtype(run_cli, model: str, *more: str) -> tuple[str, str]:
    result = run_cli("run", "afqmc", "--model", model, "--sample", "--dry-run", "--json", *more)
    assert result.exit_code == 0, result.output
    row = next(r for r in json.loads(result.output)[0]["settings"] if r["name"] == "dtype")
    return row["value"], row["source"]


def test_dry_run_shows_what_auto_becomes_and_why(run_cli, fake_cpu, tmp_path) -> None:
    folder = checkpoint(tmp_path / "model", "bfloat16")
    fake_cpu(AVX512)
    assert dry_dtype(run_cli, f"llm:{folder}") == ("bf16-mixed", "auto: this CPU has native bf16 (avx512_bf16), "
                                                                  "and the checkpoint is stored in bfloat16")
    text = run_cli("run", "afqmc", "--model", f"llm:{folder}", "--sample", "--dry-run").output
    assert ("dtype = 'bf16-mixed'  (auto: this CPU has native bf16 (avx512_bf16), and the checkpoint is stored in "
            "bfloat16)") in text
    assert dry_dtype(run_cli, f"llm:{folder}", "--set", "dtype=float32") == ("float32", "--set")
    assert dry_dtype(run_cli, f"llm:{folder}", "--set", "dtype=bfloat16") == ("bfloat16", "--set")
    assert dry_dtype(run_cli, f"llm:{folder}", "--set", "dtype=bf16-mixed") == ("bf16-mixed", "--set")
    assert dry_dtype(run_cli, f"llm:{folder}", "--set", "dtype=auto") == (
        "bf16-mixed", "--set; auto: this CPU has native bf16 (avx512_bf16), and the checkpoint is stored in bfloat16")
    assert dry_dtype(run_cli, "llm-tiny")[0] == "float32"
    assert dry_dtype(run_cli, f"llm:{checkpoint(tmp_path / 'fp32', 'float32')}") == (
        "float32", "auto: this CPU has native bf16 (avx512_bf16), but the checkpoint is stored in float32")
    fake_cpu(PLAIN)
    value, source = dry_dtype(run_cli, f"llm:{folder}")
    assert value == "float32" and source.startswith("auto: no native bf16 on this CPU")


def tiny_folder(path: Path, stored: str) -> Path:
    """llm-tiny's weights saved as a checkpoint whose config.json names ``stored`` (weights kept in float32)."""
    from clue_models_llm.settings import TINY
    from clue_models_llm.tiny import build_model

    model, tokenizer = build_model(["判断两个问题是否相同"], {s.name: s.default for s in TINY}, 0)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    (path / "config.json").write_text(json.dumps({**config, "dtype": stored}), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_run_loads_what_auto_says_and_honours_float32(run_cli, fake_cpu, tmp_path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("on a GPU auto is the GPU's dtype")
    folder = tiny_folder(tmp_path / "model", "bfloat16")
    fake_cpu(AVX512)

    def loaded(name: str, *more: str) -> dict:
        out = tmp_path / name
        result = run_cli("run", "afqmc", "--model", f"llm:{folder}", "--sample", "-o", out, "--cache",
                         tmp_path / "cache", *more)
        assert result.exit_code == 0, result.output
        return json.loads((out / "afqmc" / "manifest.json").read_text(encoding="utf-8"))["model_info"]

    auto = loaded("auto")
    assert auto["dtype"] == "bf16-mixed" and auto["model"]["dtype"] == "bf16-mixed"
    exact = loaded("fp32", "--set", "dtype=float32")
    assert exact["dtype"] == "float32" and exact["model"]["dtype"] == "float32"
    # the dtype is in the model's identity, so the float32 run computed its own answers (none reused)
    assert exact["cache"]["hits"] == 0 and exact["cache"]["path"] != auto["cache"]["path"]
    plain = loaded("bf16", "--set", "dtype=bfloat16")  # every tensor bf16: a precision of its own, cached apart
    assert plain["model"]["dtype"] == "bfloat16" and plain["cache"]["hits"] == 0
    assert len({plain["cache"]["path"], auto["cache"]["path"], exact["cache"]["path"]}) == 3
    assert loaded("auto-again")["cache"]["hits"] > 0  # the same precision again: its own answers reused
    fake_cpu(PLAIN)
    assert loaded("plain")["dtype"] == "float32"


@pytest.mark.slow
def test_bf16_mixed_runs_likelihood_and_generation_and_is_cached_apart(run_cli, tmp_path, monkeypatch) -> None:
    """llm-tiny forced to bf16-mixed (any CPU): a likelihood task and a generated one run through the mixed model,
    record its name, and never share cached answers with float32 or bfloat16; vllm: refuses the mode."""
    import torch

    converted: list[object] = []
    original = cpu_bf16.to_mixed

    def spy(model):
        converted.append(original(model))
        return converted[-1]

    monkeypatch.setattr(cpu_bf16, "to_mixed", spy)

    def run(task: str, dtype: str, *more: str) -> dict:
        out = tmp_path / f"{task}-{dtype}"
        result = run_cli("run", task, "--model", "llm-tiny", "--sample", "-o", out, "--cache", tmp_path / "cache",
                         "--set", f"dtype={dtype}", *more)
        assert result.exit_code == 0, result.output
        return json.loads((out / task / "manifest.json").read_text(encoding="utf-8"))["model_info"]

    for task, more in (("afqmc", ()), ("cmrc2018", ("--set", "max_new_tokens=8"))):
        converted.clear()
        mixed = run(task, "bf16-mixed", *more)
        assert mixed["dtype"] == "bf16-mixed" and mixed["model"]["dtype"] == "bf16-mixed"
        assert len(converted) == 1 and converted[0].dtype == torch.float32  # the run's model, made mixed
        assert converted[0].get_input_embeddings().weight.dtype == torch.bfloat16
        paths = {mixed["cache"]["path"]}
        for other in ("float32", "bfloat16"):
            info = run(task, other, *more)
            assert info["model"]["dtype"] == other and info["cache"]["hits"] == 0
            paths.add(info["cache"]["path"])
        assert len(paths) == 3
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama", "dtype": "bfloat16"}', encoding="utf-8")
    refused = run_cli("run", "afqmc", "--model", f"vllm:{folder}", "--sample", "--set", "dtype=bf16-mixed",
                      "-o", tmp_path / "vllm")
    assert refused.exit_code == 2 and refused.output.strip().splitlines() == [
        "error: dtype=bf16-mixed is llm:'s (bf16 weights, float32 activations); vllm: takes auto, float32, bfloat16 "
        "or float16"]
    assert not (tmp_path / "vllm").exists()
