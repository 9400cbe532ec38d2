"""The plugin's specs: cheap to import, listed, and free of task names."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import clue_models_llm
from clue_models_llm import hooks
from clue_models_llm.settings import COMMON, TINY, parse_stop

PACKAGE = Path(clue_models_llm.__file__).parent


def test_hooks_import_without_torch() -> None:
    code = ("import sys, clue_models_llm.hooks as h; h.clue_models(); "
            "print(sorted(m for m in ('torch', 'transformers', 'tokenizers', 'openai', 'vllm', 'numpy', 'httpx') "
            "if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_specs_declare_an_evaluation_only_llm_family() -> None:
    specs = {spec.name: spec for spec in hooks.clue_models()}
    family, tiny = specs["llm"], specs["llm-tiny"]
    assert family.family and not family.trains and family.category == "llm"
    assert not tiny.trains and set(tiny.kinds) == {"classification", "span", "multiple_choice", "open_question",
                                                  "entity_spans", "kbqa_triple"}
    assert specs["llm:Qwen/Qwen2.5-0.5B-Instruct"].recommendations == {"*": {"chat": True}}
    names = {s.name for s in COMMON}
    # encoder settings are not declared, so the tasks' reference values for them never reach an LLM
    assert not names & {"max_length", "learning_rate", "batch_size", "epochs", "max_answer_length"}
    flagged = {s.name for s in (*COMMON, *TINY) if s.cache_key}
    assert {"mode", "shots", "chat", "thinking", "max_new_tokens", "stop", "temperature", "dtype"} <= flagged
    assert {"eval_batch_size", "device_map", "result_cache", "score", "traditional"}.isdisjoint(flagged)


def test_no_task_names_in_the_model_plugin() -> None:
    task_names = re.compile(r"afqmc|tnews|iflytek|ocnli|cmnli|cluewsc|\bcsl\b|cmrc|drcd|chid|\bc3\b", re.I)
    for path in PACKAGE.glob("*.py"):
        assert not task_names.search(path.read_text(encoding="utf-8")), path.name


def test_list_models_shows_the_llm_families(run_cli) -> None:
    table = run_cli("list", "models").output
    assert "llm:<checkpoint or path>" in table and "llm-tiny" in table and "clue-models-llm" in table
    rows = json.loads(run_cli("list", "models", "--json").output)
    assert {row["name"] for row in rows if row["plugin"] == "clue-models-llm"} >= {"llm", "llm-tiny"}


def test_dry_run_shows_the_llm_settings_and_not_the_encoders(run_cli, tmp_path) -> None:
    result = run_cli("run", "cmnli", "--model", "llm-tiny", "--sample", "--dry-run", "--json", "--set", "shots=2",
                     "-o", tmp_path / "out")
    settings = {row["name"]: (row["value"], row["source"]) for row in json.loads(result.output)[0]["settings"]}
    assert settings["shots"] == (2, "--set")
    assert settings["eval_batch_size"] == (16, "default")  # not the task's training batch size (64)
    assert "max_length" not in settings and "learning_rate" not in settings
    refused = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "--set", "learning_rate=1e-3",
                      "-o", tmp_path / "o2")
    assert refused.exit_code == 2 and "unknown setting 'learning_rate'" in refused.output
    bad = run_cli("run", "afqmc", "--model", "llm-tiny", "--sample", "--set", "mode=sample", "-o", tmp_path / "o3")
    assert bad.exit_code == 2 and "expected one of 'loglikelihood', 'generate'" in bad.output


def test_stop_strings_parse_escapes() -> None:
    assert parse_stop("\\n") == ("\n",)
    assert parse_stop("\\n\\n|答案|a\\|b") == ("\n\n", "答案", "a|b")
    assert parse_stop("") == ()


def test_a_missing_folder_fails_before_anything_is_written(run_cli, tmp_path) -> None:
    for source, message in ((tmp_path / "nope", "no such model folder"), (tmp_path, "no config.json")):
        result = run_cli("run", "afqmc", "--model", f"llm:{source}", "--sample", "-o", tmp_path / "out")
        assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "out").exists()
