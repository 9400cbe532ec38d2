"""The plugin boundary: one public module, and every declared setting checked by type.

Plugins in this repository are written as a third party's would be: their code imports
from ``clue_core.plugin`` only. Every setting any installed spec declares rejects a
wrong-typed value with one line and exit 2.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import clue_core.plugin as api
from clue_core.kernel import Kernel

ROOT = Path(__file__).parents[2]
# clue_builtin ships in the root distribution but is a plugin like the rest: the boundary holds for it too
PLUGIN_PACKAGES = sorted(p for p in [*ROOT.glob("plugins/*/*"), *ROOT.glob("examples/*/*"), ROOT / "clue_builtin"]
                         if p.is_dir() and (p / "__init__.py").exists())


def kernel_imports(path: Path) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import of a ``clue_core`` module in one file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "clue_core":
            found.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names if alias.name.split(".")[0] == "clue_core"]
    return found


def test_every_plugin_package_is_found():
    names = {p.name for p in PLUGIN_PACKAGES}
    assert {"clue_builtin", "clue_tasks_classic", "clue_tasks_mrc", "clue_models_hf", "clue_example_plugin"} <= names


@pytest.mark.parametrize("package", PLUGIN_PACKAGES, ids=lambda p: p.name)
def test_plugins_import_only_the_plugin_api(package: Path):
    tool_dirs = [p for p in package.parent.glob("tools") if p.is_dir()]
    files = [*package.rglob("*.py"), *(f for d in tool_dirs for f in d.rglob("*.py"))]
    wrong = [(str(f.relative_to(ROOT)), module) for f in files for module, _ in kernel_imports(f)
             if module != "clue_core.plugin"]
    assert not wrong


def test_the_example_plugin_needs_at_most_eight_names():
    names = {name for f in (ROOT / "examples").rglob("*.py") for _, imported in kernel_imports(f)
             for name in imported}
    assert len(names) <= 8, sorted(names)


def test_every_public_name_resolves_and_hook_modules_stay_light():
    import subprocess
    import sys

    for name in api.__all__:
        assert getattr(api, name) is not None, name
    lazy = ("clue_core.examples", "clue_core.data", "clue_core.jsonio")
    code = f"import sys, clue_core.plugin; print(sorted(m for m in {lazy!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"  # importing the API to build specs loads none of them


def test_the_export_list_is_every_name_imported_and_nothing_else():
    """``__all__`` is derived (the names imported at the top, then ``_LAZY``'s), so ruff cannot check it:
    every ``clue_core`` name imported at the top is exported, and the ``TYPE_CHECKING`` imports (what type
    checkers and readers see) name exactly the names loaded on first use, one for one."""
    tree = ast.parse(Path(api.__file__).read_text(encoding="utf-8"))
    eager: set[str] = set()
    typed: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "clue_core":
            eager |= {alias.asname or alias.name for alias in node.names}
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            typed |= {alias.asname or alias.name for n in node.body if isinstance(n, ast.ImportFrom)
                      for alias in n.names}
    assert len(api.__all__) == len(set(api.__all__))
    assert typed == set(api._LAZY) | set(api._LAZY_MODULES)
    assert set(api.__all__) == eager | typed


def test_the_builtin_plugin_is_outside_the_kernel_and_its_hooks_stay_light():
    """The kernel's package holds no metric, writer or model (the built-in plugin is ``clue_builtin``),
    the ``builtin`` entry point names that package, and listing it imports no example or I/O module."""
    import subprocess
    import sys
    from importlib.metadata import entry_points

    assert not [p.name for p in (ROOT / "clue_core").glob("*.py")
                if p.stem in {"builtin", "baseline", "metrics", "writers"}]
    point = next(ep for ep in entry_points(group="clue_core") if ep.name == "builtin")
    assert point.value == "clue_builtin.hooks" and point.dist is not None and point.dist.name == "clue-core"
    lazy = ("clue_core.examples", "clue_core.atomic", "clue_core.jsonio", "clue_builtin.baseline",
            "clue_builtin.metrics", "clue_builtin.writers")
    code = f"import sys, clue_builtin.hooks; print(sorted(m for m in {lazy!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_kernel_is_the_registry_commands_are_typed_with():
    """``clue_core.plugin.Registry`` names what a command may ask of the kernel: the kernel has every
    member (so renaming one breaks here, not in a plugin), the lookups keep their one-line refusal,
    and no first-party plugin takes the kernel untyped any more."""
    import inspect

    from clue_core.errors import UnknownNameError

    kernel = Kernel(strict=False)
    assert isinstance(kernel, api.Registry)
    members = {name for name, _ in inspect.getmembers(api.Registry) if not name.startswith("_")}
    assert members == {"tasks", "models", "metrics", "writers", "report_sections", "kinds", "owner", "strict",
                       "task", "metric", "writer", "kind", "fetchers", "openers", "commands", "plugins", "model"}
    assert kernel.task("AFQMC") is kernel.tasks["afqmc"]
    with pytest.raises(UnknownNameError, match="unknown metric 'no-such'"):
        kernel.metric("no-such")
    untyped = [f"{f.relative_to(ROOT)}:{n}" for package in PLUGIN_PACKAGES for f in package.rglob("*.py")
               for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if "kernel: Any" in line]
    assert not untyped


def _wrong_value(setting) -> str:
    if setting.type is str:
        return "not-one-of-the-choices" if setting.choices else None  # type: ignore[return-value]
    return "not-a-" + setting.type.__name__


def declared_settings() -> list[tuple[str, str, object]]:
    """``(spec kind, spec name, setting)`` for every setting an installed spec declares."""
    kernel = Kernel(strict=False)
    rows = []
    for task in kernel.tasks.values():
        rows += [("task", task.name, s) for s in (*task.settings, *task.decode_settings)]
    for model in kernel.models.values():
        if ":" not in model.name:  # catalogue entries share their family's declarations
            rows += [("model", model.name, s) for s in model.settings]
    for metric in kernel.metrics.values():
        rows += [("metric", metric.name, s) for s in metric.settings]
    return rows


def test_the_installed_plugins_declare_settings():
    kinds = {kind for kind, _, _ in declared_settings()}
    assert {"task", "model"} <= kinds


@pytest.mark.parametrize("row", declared_settings(), ids=lambda r: f"{r[0]}:{r[1]}:{r[2].name}")
def test_a_wrong_typed_value_for_every_declared_setting_is_exit_2(run_cli, row):
    kind, owner, setting = row
    wrong = _wrong_value(setting)
    if wrong is None:
        pytest.skip(f"{setting.name} accepts any text")
    kernel = Kernel(strict=False)
    if kind == "task":
        task, model = owner, next(m for m in ("baseline", "hf-tiny") if kernel.tasks[owner].kind in
                                  kernel.models[m].kinds)
    else:
        spec = kernel.models[owner] if kind == "model" else None
        model = owner if kind == "model" else "baseline"
        task = next(t.name for t in kernel.tasks.values() if spec is None or t.kind in spec.kinds)
        if kind == "metric":  # a task that uses the metric, and a model that answers that task's kind
            task = next(t.name for t in kernel.tasks.values() if owner in t.metrics)
            model = next(m for m in ("baseline", "hf-tiny", "llm-tiny") if kernel.tasks[task].kind in
                         kernel.models[m].kinds)
    model_arg = f"{model}:x" if kernel.models[model].family else model
    result = run_cli("run", task, "--model", model_arg, "--sample", "--dry-run", "--no-train"
                     if not kernel.models[model].trains else "--sample", "--set", f"{setting.name}={wrong}")
    assert result.exit_code == 2, result.output
    assert f"setting '{setting.name}' (--set)" in result.output
    assert len(result.output.strip().splitlines()) == 1
