"""Test stand-ins live under ``tests/``, and no shipped module reaches into ``tests``.

``vllm_reference`` (a stand-in ``vllm`` with vLLM's output shapes) once shipped inside
``clue_models_llm`` although only the tests and ``benchmarks/vllm_check.py --self-check`` used it.
It is now ``tests/support/vllm_reference.py``; these checks keep it there: no module of the kernel
or of a plugin names it, and none imports ``tests`` (which is not installed, so such an import
would work in this checkout and fail for every user).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What is shipped: the kernel, the built-in plugin, every plugin and example distribution.
SHIPPED = sorted(path for pattern in ("clue_core/**/*.py", "clue_builtin/**/*.py", "plugins/*/**/*.py",
                                      "examples/*/**/*.py") for path in ROOT.glob(pattern)
                 if "build" not in path.relative_to(ROOT).parts)


def imports_tests(path: Path) -> bool:
    """Whether one file imports the ``tests`` package or a module under it."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "tests" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "tests":
            return True
    return False


def test_the_walk_finds_the_shipped_modules() -> None:
    names = {path.relative_to(ROOT).parts[0] for path in SHIPPED}
    assert names == {"clue_core", "clue_builtin", "plugins", "examples"}, names
    assert len(SHIPPED) > 50


def test_no_shipped_module_names_the_vllm_stand_in() -> None:
    naming = [path.relative_to(ROOT).as_posix() for path in SHIPPED
              if path.stem == "vllm_reference" or "vllm_reference" in path.read_text(encoding="utf-8")]
    assert not naming
    assert importlib.util.find_spec("clue_models_llm.vllm_reference") is None
    assert (ROOT / "tests" / "support" / "vllm_reference.py").is_file()


def test_no_shipped_module_imports_tests() -> None:
    assert not [path.relative_to(ROOT).as_posix() for path in SHIPPED if imports_tests(path)]
