"""Plugin discovery: every way a plugin can break stays on its own row."""

from __future__ import annotations

import dataclasses
import sys
import types
from pathlib import Path

import pytest

from clue_builtin import hooks as builtin
from clue_core.errors import ClueError, PluginError, UnknownNameError
from clue_core.kernel import Kernel
from clue_core.plugin import CLASSIFICATION, MetricSpec, TaskSpec, hookimpl


def toy_task(name: str = "toy") -> TaskSpec:
    return TaskSpec(name=name, kind=CLASSIFICATION, description="toy", reader="tests:none", labels=("a", "b"))


class GoodPlugin:
    @hookimpl
    def clue_tasks(self):
        return [toy_task("toy"), toy_task("tnews")]


class BadSignature:
    @hookimpl
    def clue_tasks(self, config):  # hooks take no arguments
        return [toy_task("sig")]


class UnknownHook:
    @hookimpl
    def clue_task(self):  # typo of clue_tasks
        return [toy_task("typo")]


class RaisingHook:
    @hookimpl
    def clue_tasks(self):
        raise RuntimeError("boom inside the hook")


class WrongReturn:
    @hookimpl
    def clue_metrics(self):
        return [toy_task("not-a-metric")]


class Duplicate:
    @hookimpl
    def clue_tasks(self):
        return [toy_task("tnews")]

    @hookimpl
    def clue_metrics(self):
        return [MetricSpec("dup-metric", "x:y", "would be fine alone")]


def kernel_with(*plugins: tuple[str, object]) -> Kernel:
    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    kernel.register(builtin, "builtin")
    for name, plugin in plugins:
        kernel.register(plugin, name)
    return kernel


def row(kernel: Kernel, name: str):
    return next(p for p in kernel.plugins if p.name == name)


def test_good_plugin_registers_its_tasks_and_owner():
    kernel = kernel_with(("good", GoodPlugin()))
    assert set(kernel.tasks) == {"toy", "tnews"}
    assert kernel.owner[("tasks", "toy")] == "good"
    assert row(kernel, "good").provides == {"tasks": ["toy", "tnews"]}
    assert "baseline" in kernel.models and "accuracy" in kernel.metrics


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (BadSignature(), "config"),
        (UnknownHook(), "unknown hook 'clue_task'"),
        (RaisingHook(), "boom inside the hook"),
        (WrongReturn(), "returned TaskSpec, expected MetricSpec"),
    ],
)
def test_broken_plugin_is_an_error_on_its_row_only(plugin, message):
    kernel = kernel_with(("good", GoodPlugin()), ("broken", plugin))
    broken = row(kernel, "broken")
    assert broken.status == "error"
    assert message in broken.error
    assert row(kernel, "good").status == "ok"
    assert set(kernel.tasks) == {"toy", "tnews"}  # nothing of the broken plugin leaked in


def test_duplicate_name_drops_the_later_plugin_whole():
    kernel = kernel_with(("good", GoodPlugin()), ("dup", Duplicate()))
    assert row(kernel, "dup").status == "error"
    assert "task 'tnews' is already registered by plugin 'good'" in row(kernel, "dup").error
    assert "dup-metric" not in kernel.metrics
    assert kernel.owner[("tasks", "tnews")] == "good"


def test_strict_reraises_the_original_exception():
    kernel = Kernel(entrypoints=False, strict=True, disabled=())
    with pytest.raises(RuntimeError, match="boom inside the hook"):
        kernel.register(RaisingHook(), "broken")
    with pytest.raises(PluginError, match="unknown hook"):
        kernel.register(UnknownHook(), "typo")


def test_strict_from_environment(monkeypatch):
    monkeypatch.setenv("CLUE_STRICT_PLUGINS", "1")
    assert Kernel(entrypoints=False).strict is True


def fake_entry_points(monkeypatch, tmp_path: Path, modules: dict[str, str]) -> None:
    """Install real entry points (through a dist-info folder on sys.path) for in-test modules."""
    dist = tmp_path / "fake_plugins-1.2.3.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugins\nVersion: 1.2.3\n")
    lines = ["[clue_core]"] + [f"{name} = {module}" for name, module in modules.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib.metadata

    original = importlib.metadata.entry_points

    def only_fakes(**selection):
        return [p for p in original(**selection) if p.dist is not None and p.dist.name in ("fake-plugins", "clue-core")]

    monkeypatch.setattr(importlib.metadata, "entry_points", only_fakes)


def test_entry_point_import_error_and_disabled_plugin(monkeypatch, tmp_path):
    (tmp_path / "fake_good.py").write_text(
        "from clue_core.hookspecs import hookimpl\n"
        "from clue_core.specs import TaskSpec\n"
        "@hookimpl\n"
        "def clue_tasks():\n"
        "    return [TaskSpec('fake-task', 'classification', 'd', 'x:y')]\n"
    )
    (tmp_path / "fake_broken.py").write_text("import a_module_that_does_not_exist\n")
    (tmp_path / "fake_never.py").write_text("raise SystemExit('must never be imported')\n")
    fake_entry_points(monkeypatch, tmp_path, {
        "zz-good": "fake_good", "aa-broken": "fake_broken", "mm-never": "fake_never",
    })
    for name in ("fake_good", "fake_broken", "fake_never"):
        sys.modules.pop(name, None)
    kernel = Kernel(strict=False, disabled={"mm-never"})
    assert [p.name for p in kernel.plugins] == ["builtin", "aa-broken", "mm-never", "zz-good"]  # built-in first
    _, broken, never, good = kernel.plugins
    assert broken.status == "error" and "a_module_that_does_not_exist" in broken.error
    assert never.status == "disabled" and "fake_never" not in sys.modules
    assert good.status == "ok" and good.distribution == "fake-plugins" and good.version == "1.2.3"
    assert "fake-task" in kernel.tasks


def test_disable_from_environment(monkeypatch):
    monkeypatch.setenv("CLUE_DISABLE_PLUGINS", "a, b")
    assert Kernel(entrypoints=False).disabled == {"a", "b"}


def test_unknown_names_suggest_close_matches():
    kernel = kernel_with(("good", GoodPlugin()))
    with pytest.raises(UnknownNameError, match="did you mean 'tnews'"):
        kernel.task("tnewz")
    with pytest.raises(UnknownNameError, match="did you mean 'baseline'"):
        kernel.model("basline")
    assert kernel.task("TNEWS").name == "tnews"


def test_model_resolution_family_saved_directory_and_errors(tmp_path):
    class Family:
        @hookimpl
        def clue_models(self):
            from clue_core.plugin import ModelSpec

            return [ModelSpec("hf", "x:y", (CLASSIFICATION,), "family", family=True),
                    ModelSpec("hf:hfl/rbt3", "x:y", (CLASSIFICATION,), "catalogue entry")]

    kernel = kernel_with(("family", Family()))
    assert kernel.model("hf:some/checkpoint") == (kernel.models["hf"], "some/checkpoint")
    assert kernel.model("hf:hfl/rbt3") == (kernel.models["hf:hfl/rbt3"], "hfl/rbt3")
    assert kernel.model("baseline") == (kernel.models["baseline"], None)
    saved = tmp_path / "model"
    saved.mkdir()
    (saved / "clue_model.json").write_text('{"model": "hf"}')
    assert kernel.model(str(saved)) == (kernel.models["hf"], str(saved))
    with pytest.raises(UnknownNameError, match="needs an argument"):
        kernel.model("hf:")
    with pytest.raises(UnknownNameError, match="not a saved model directory"):
        kernel.model(str(tmp_path))


@pytest.mark.parametrize("value", ["null", "7", '""', '["hf"]'])
def test_a_saved_model_whose_family_is_not_a_name_is_one_line_naming_the_file(tmp_path, value):
    saved = tmp_path / "model"
    saved.mkdir()
    (saved / "clue_model.json").write_text(f'{{"model": {value}}}')
    with pytest.raises(ClueError) as caught:
        Kernel().model(str(saved))
    message = str(caught.value)
    assert message.startswith(str(saved / "clue_model.json")) and "field 'model'" in message
    assert "None" not in message and "\n" not in message


def test_plugin_can_be_a_module():
    module = types.ModuleType("module_plugin")

    @hookimpl
    def clue_tasks():
        return [toy_task("from-module")]

    module.clue_tasks = clue_tasks
    kernel = kernel_with(("mod", module))
    assert "from-module" in kernel.tasks


# -- spec checks after loading -------------------------------------------------------------


def plugin_returning(**changes):
    class Plugin:
        @hookimpl
        def clue_tasks(self):
            return [toy_task("good-task"), dataclasses.replace(toy_task("checked"), **changes)]

    return Plugin()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"writer": "jsonl_label"}, "unknown writer 'jsonl_label'; did you mean 'jsonl_labels'"),
        ({"metrics": ("acuracy",)}, "unknown metric 'acuracy'; did you mean 'accuracy'?"),
        ({"primary_metric": "f1"}, "primary metric 'f1' is not produced by its metrics"),
        ({"kind": "regression"}, "unknown kind 'regression'"),
        ({"labels": ["a", "b"]}, "field labels must be a tuple"),
        ({"reader": "not a reference"}, "reader must be 'module:attr'"),
        ({"sample": "clue_core:no/such/folder"}, "sample folder 'clue_core:no/such/folder' does not exist"),
        ({"decode_settings": ("x",)}, "must be Setting records"),
    ],
)
def test_a_bad_spec_is_dropped_with_its_problem_on_the_plugin_row(changes, message):
    kernel = kernel_with(("plugin", plugin_returning(**changes)))
    info = row(kernel, "plugin")
    assert info.status == "error"
    assert "task 'checked' dropped" in info.error and message in info.error
    assert "checked" not in kernel.tasks
    assert "good-task" in kernel.tasks and info.provides["tasks"] == ["good-task"]


def test_a_spec_checks_in_strict_mode_raise():
    kernel = Kernel(entrypoints=False, strict=True, disabled=())
    kernel.register(builtin, "builtin")
    with pytest.raises(PluginError, match="unknown writer"):
        kernel.register(plugin_returning(writer="nope"), "plugin")


def test_prompt_template_fields_and_verbalizers_are_checked():
    from clue_core.plugin import Prompt

    kernel = kernel_with(("plugin", plugin_returning(prompt=Prompt("判断", "{context}", {"a": "甲"}))))
    error = row(kernel, "plugin").error
    assert "uses {context}, which classification examples do not have" in error
    assert "verbalizers miss labels b" in error
