"""The plugin's specs, catalogue recipes and config checking (no model is built here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from clue_core.errors import ClueError
from clue_models_hf import catalogue, hooks
from clue_models_hf.settings import Settings


def test_hook_module_imports_nothing_heavy() -> None:
    code = ("import sys, clue_models_hf.hooks as h; h.clue_models(); "
            "print(sorted(m for m in ('torch', 'transformers', 'accelerate', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_list_models_shows_the_catalogue_the_family_and_the_offline_backbone(run_cli) -> None:
    result = run_cli("list", "models", "--json")
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert rows["hf"]["family"] is True
    assert rows["hf-tiny"]["size_class"] == "toy"
    for name in ("hf:bert-base-chinese", "hf:hfl/chinese-roberta-wwm-ext", "hf:hfl/chinese-roberta-wwm-ext-large",
                 "hf:hfl/chinese-macbert-base", "hf:hfl/chinese-macbert-large", "hf:hfl/rbt3", "hf:hfl/rbtl3",
                 "hf:clue/albert_chinese_tiny", "hf:nghuyong/ernie-3.0-nano-zh",
                 "hf:hfl/chinese-electra-180g-small-discriminator"):
        assert rows[name]["parameters"] > 1_000_000
        assert rows[name]["hyperparameters"]["by_task"]["afqmc"]["learning_rate"] > 0
    table = run_cli("list", "models").output
    assert "hf:hfl/rbt3" in table and "38.5M" in table


@pytest.mark.parametrize("task", sorted(catalogue.BASE_RECIPES))
def test_small_models_get_a_higher_learning_rate_and_more_epochs(task: str) -> None:
    base, small, tiny, large = (catalogue.recipe(size, task) for size in ("base", "small", "tiny", "large"))
    assert base == catalogue.BASE_RECIPES[task]
    assert tiny["learning_rate"] > small["learning_rate"] > base["learning_rate"] > large["learning_rate"]
    assert small["epochs"] >= base["epochs"] and (small["epochs"] > base["epochs"] or base["epochs"] >= 50)


def test_every_catalogue_entry_is_a_known_size_class() -> None:
    names = [spec.name for spec in hooks.clue_models()]
    assert len(names) == len(set(names))
    assert all(entry.size_class in catalogue.SIZE_CLASSES for entry in catalogue.CATALOGUE)


@pytest.mark.parametrize(("key", "value", "message"), [
    ("epochs", "three", "expected an integer"),
    ("learning_rate", -1, "must be positive"),
    ("mixed_precision", "fp8", "expected one of"),
    ("eval_every", "sometimes", "'eval_every'"),
    ("resume", "perhaps", "true or false"),
    ("warmup_ratio", 1.5, "warmup_ratio"),
])
def test_bad_config_values_are_one_clear_error(key: str, value: object, message: str) -> None:
    with pytest.raises(ClueError, match=message):
        Settings.from_config({key: value})


def test_config_values_from_set_flags_are_coerced() -> None:
    settings = Settings.from_config({"learning_rate": "1e-4", "resume": "true", "eval_every": 50, "epochs": 2.0})
    assert (settings.learning_rate, settings.resume, settings.eval_every, settings.epochs) == (1e-4, True, 50, 2)
