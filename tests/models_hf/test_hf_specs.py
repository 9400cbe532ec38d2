"""The plugin's specs: declared settings, the size-class rules and how the kernel merges them
(no model is trained here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from clue_core import runner
from clue_core.kernel import Kernel
from clue_core.plugin import ClueError, ModelSpec, Setting
from clue_core.settings import SettingError, convert
from clue_models_hf import catalogue, hooks
from clue_models_hf.factory import create_tiny
from clue_models_hf.settings import COMMON, TINY, Settings, scaled_epochs

from .toy import NAME, REFERENCE, TASK, toy_kernel

#: What ``hf-tiny`` trained with on every CLUE task before settings were declared (the old
#: per-task recipes: learning rate 5e-3, the CLUE baselines' epochs, batch size and warmup).
#: The golden outputs depend on these exact values.
OLD_TINY_RECIPES = {
    "afqmc": (3, 32, 0.1), "tnews": (3, 32, 0.1), "iflytek": (3, 32, 0.1), "ocnli": (5, 32, 0.1),
    "cmnli": (2, 64, 0.1), "cluewsc2020": (50, 16, 0.1), "csl": (5, 16, 0.1), "cmrc2018": (2, 32, 0.1),
    "drcd": (2, 32, 0.1), "chid": (3, 24, 0.06), "c3": (8, 24, 0.1),
}


def specs() -> dict[str, ModelSpec]:
    return {spec.name: spec for spec in hooks.clue_models()}


def resolved(kernel: Kernel, model: str, task: str, **overrides: str) -> dict:
    """The values a run would pass the factory, merged by the kernel as ``clue-core run`` does."""
    request = runner.RunRequest(tasks=[task], model=model, overrides=overrides)
    spec, _ = kernel.model(model)
    return runner.resolve_settings(kernel, request, [kernel.task(task)], spec)[task].values_for(spec.settings)


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
    assert rows["hf-tiny"]["recommendations"] == {"*": {"learning_rate": 5e-3}}
    for name in ("hf:bert-base-chinese", "hf:hfl/chinese-roberta-wwm-ext", "hf:hfl/chinese-roberta-wwm-ext-large",
                 "hf:hfl/chinese-macbert-base", "hf:hfl/chinese-macbert-large", "hf:hfl/rbt3", "hf:hfl/rbtl3",
                 "hf:clue/albert_chinese_tiny", "hf:nghuyong/ernie-3.0-nano-zh",
                 "hf:hfl/chinese-electra-180g-small-discriminator"):
        assert rows[name]["parameters"] > 1_000_000
        assert {s["name"] for s in rows[name]["settings"]} == {s.name for s in COMMON}
    assert rows["hf:hfl/rbt3"]["recommendations"] == {"*": {"learning_rate": 5e-5, "epochs_scale": 2.0}}
    assert rows["hf:hfl/chinese-macbert-large"]["recommendations"] == {"*": {"learning_rate_scale": 0.5}}
    assert rows["hf:bert-base-chinese"]["recommendations"] == {}
    table = run_cli("list", "models").output
    assert "hf:hfl/rbt3" in table and "38.5M" in table


def test_every_spec_is_accepted_by_the_kernel_and_only_hf_tiny_has_tiny_settings() -> None:
    kernel = toy_kernel()  # registering checks every spec; a dropped one fails there
    by_name = specs()
    assert set(by_name) <= set(kernel.models)
    for name, spec in by_name.items():
        assert isinstance(spec.settings, tuple) and all(isinstance(s, Setting) for s in spec.settings)
        assert spec.settings == (COMMON + TINY if name == "hf-tiny" else COMMON), name
        assert not {"seed", "resume", "primary_metric", "task"} & {s.name for s in spec.settings}
        assert not spec.recipes  # per-task values belong to the task plugins
        assert set(spec.recommendations) <= {"*"}
    assert all(entry.size_class in catalogue.SIZE_CLASSES for entry in catalogue.CATALOGUE)


def test_the_typed_view_covers_exactly_the_common_settings() -> None:
    from dataclasses import fields

    assert [f.name for f in fields(Settings)] == [s.name for s in COMMON]
    assert {s.name for s in COMMON if s.schedule} == {
        "learning_rate", "learning_rate_scale", "epochs", "epochs_scale", "batch_size",
        "gradient_accumulation_steps", "warmup_ratio", "weight_decay", "max_length", "max_steps", "doc_stride",
        "max_query_length", "mixed_precision", "eval_every", "early_stopping_patience", "max_grad_norm",
        "method", "pet_instruction",  # PET trains another model: --resume must not mix the two
        "ner_head", "ner_stride"}  # so does another NER head, and other windows
    assert all(s.schedule for s in TINY)
    assert {s.name for s in COMMON + TINY if s.report} == {"learning_rate", "epochs", "batch_size", "max_length",
                                                           "method"}


@pytest.mark.parametrize(("epochs", "scale", "expected"), [
    (3, 1.0, 3), (3, 2.0, 6), (5, 2.0, 10), (50, 2.0, 50), (30, 2.0, 50), (2, 1.5, 3), (80, 1.0, 80), (80, 2.0, 80),
])
def test_scaled_epochs_never_cut_and_stop_at_fifty(epochs: int, scale: float, expected: int) -> None:
    assert scaled_epochs(epochs, scale) == expected


@pytest.mark.parametrize(("model", "learning_rate", "epochs"), [
    ("hf-tiny", 5e-3, 3),                                             # toy: 5e-3, the task's epochs
    ("hf:clue/albert_chinese_tiny", 1e-4, 6),                          # tiny: 1e-4, twice the epochs
    ("hf:hfl/rbt3", 5e-5, 6),                                          # small: 5e-5, twice the epochs
    ("hf:bert-base-chinese", REFERENCE["learning_rate"], 3),           # base: the task's values
    ("hf:hfl/chinese-macbert-large", REFERENCE["learning_rate"] / 2, 3),  # large: half the task's rate
    ("hf:some/unlisted-model", REFERENCE["learning_rate"], 3),         # the family: the task's values
])
def test_size_classes_adapt_the_tasks_reference_values(model: str, learning_rate: float, epochs: int) -> None:
    values = resolved(toy_kernel(), model, NAME)
    settings = Settings.of(values)
    assert settings.effective_learning_rate == pytest.approx(learning_rate, rel=1e-12)
    assert settings.effective_epochs == epochs
    assert (values["batch_size"], values["max_length"]) == (REFERENCE["batch_size"], REFERENCE["max_length"])


def test_a_set_learning_rate_is_still_scaled_unless_the_scale_is_set_too() -> None:
    kernel = toy_kernel()
    large = "hf:hfl/chinese-macbert-large"
    assert Settings.of(resolved(kernel, large, NAME, learning_rate="2e-5")).effective_learning_rate == 1e-5
    plain = resolved(kernel, large, NAME, learning_rate="2e-5", learning_rate_scale="1")
    assert Settings.of(plain).effective_learning_rate == 2e-5


def test_dry_run_shows_the_tasks_epochs_and_the_models_scale(run_cli) -> None:
    result = run_cli("run", NAME, "--model", "hf:hfl/rbt3", "--data-dir", ".", "--dry-run", "--json",
                     kernel=toy_kernel())
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)[0]["settings"]}
    assert rows["epochs"] == {"name": "epochs", "value": 3, "source": f"task {NAME}"}
    assert rows["epochs_scale"] == {"name": "epochs_scale", "value": 2.0, "source": "model hf:hfl/rbt3"}
    assert rows["learning_rate"] == {"name": "learning_rate", "value": 5e-5, "source": "model hf:hfl/rbt3"}
    assert rows["doc_stride"]["source"] == "default"


def test_hf_tiny_trains_every_clue_task_with_its_old_values() -> None:
    """hf-tiny's effective values on the real tasks equal the old per-task recipes (golden outputs)."""
    kernel = Kernel()
    missing = sorted(set(OLD_TINY_RECIPES) - set(kernel.tasks))
    if missing:
        pytest.skip(f"task plugins not loaded: {', '.join(missing)}")
    for task, (epochs, batch_size, warmup_ratio) in OLD_TINY_RECIPES.items():
        settings = Settings.of(resolved(kernel, "hf-tiny", task))
        got = (settings.effective_learning_rate, settings.effective_epochs, settings.batch_size,
               settings.warmup_ratio)
        assert got == (5e-3, epochs, batch_size, warmup_ratio), task


# -- declared settings: one conversion by the kernel, one error line for a wrong value -------------

#: A value of the wrong type (or outside the choices) for each declared type.
WRONG = {bool: "perhaps", int: "1.5", float: "fast", str: "nonsense"}


@pytest.mark.parametrize("spec", hooks.clue_models(), ids=lambda spec: spec.name)
def test_every_declared_setting_refuses_a_wrong_type(spec: ModelSpec) -> None:
    assert spec.settings
    for setting in spec.settings:
        assert convert(setting, setting.default, "default") == setting.default
        assert setting.type is not str or setting.choices, f"{setting.name}: a free-text setting accepts anything"
        with pytest.raises(SettingError, match=f"setting '{setting.name}'"):
            convert(setting, WRONG[setting.type], "--set")
        if setting.type is not str:
            with pytest.raises(SettingError, match=f"setting '{setting.name}'"):
                convert(setting, [1], "config file")


@pytest.mark.parametrize("setting", COMMON + TINY, ids=[s.name for s in COMMON + TINY])
def test_a_wrong_value_on_the_command_line_exits_with_one_error_line(run_cli, setting: Setting) -> None:
    result = run_cli("run", NAME, "--model", "hf-tiny", "--data-dir", ".", "--dry-run",
                     "--set", f"{setting.name}={WRONG[setting.type]}", kernel=toy_kernel())
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"setting '{setting.name}' (--set)" in errors[0], result.output
    assert "Traceback" not in result.output


def test_set_values_are_converted_once_by_the_kernel(run_cli) -> None:
    result = run_cli("run", NAME, "--model", "hf-tiny", "--data-dir", ".", "--dry-run", "--json",
                     "--set", "learning_rate=1e-4", "--set", "progress=false", "--set", "eval_every=50",
                     "--set", "epochs=2", "--set", "tiny_vocab_size=300", kernel=toy_kernel())
    assert result.exit_code == 0, result.output
    values = {row["name"]: row["value"] for row in json.loads(result.output)[0]["settings"]}
    assert (values["learning_rate"], values["progress"], values["eval_every"], values["epochs"]) == \
        (1e-4, False, 50, 2)
    assert values["tiny_vocab_size"] == 300


@pytest.mark.parametrize(("args", "message"), [
    (("--model", "hf-tiny", "--set", "seed=3"), "'seed' (--set) is run control"),
    (("--model", "hf-tiny", "--set", "resume=true"), "'resume' (--set) is run control"),
    (("--model", "hf-tiny", "--set", "primary_metric=f1"), "is run control"),
    (("--model", "hf:hfl/rbt3", "--set", "tiny_vocab_size=300"), "unknown setting 'tiny_vocab_size'"),
    (("--model", "hf-tiny", "--set", "learning_rate=0"), "must be greater than 0"),
    (("--model", "hf-tiny", "--set", "eval_every=0"), "must be at least 1"),
    (("--model", "hf-tiny", "--set", "warmup_ratio=1.5"), "must be at most 1"),
    (("--model", "hf-tiny", "--set", "mixed_precision=fp8"), "expected one of"),
    (("--model", "hf-tiny", "--set", "eval_every=sometimes"), "an integer or 'epoch'"),
])
def test_settings_that_are_not_the_models_are_refused(run_cli, args, message: str) -> None:
    result = run_cli("run", NAME, "--data-dir", ".", "--dry-run", *args, kernel=toy_kernel())
    assert result.exit_code == 2, result.output
    assert message in result.output


@pytest.mark.parametrize(("values", "message"), [
    ({"doc_stride": 64, "max_length": 128, "max_query_length": 64}, "doc_stride"),
    ({"tiny_hidden_size": 30, "tiny_num_heads": 4}, "tiny_num_heads"),
])
def test_checks_across_settings_happen_when_the_learner_is_made(values: dict, message: str) -> None:
    from clue_core.plugin import TaskSpec

    task = TaskSpec("toy-span", "span", "toy", "x:y", primary_metric="em") if "doc_stride" in values else TASK
    with pytest.raises(ClueError, match=message):
        create_tiny(None, task, values)


def test_a_name_the_model_does_not_declare_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="seed"):
        create_tiny(None, TASK, {"seed": 3})
