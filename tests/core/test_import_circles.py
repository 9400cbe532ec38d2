"""No import circle in the kernel (issue 19, part 5).

A circle between kernel modules works only as long as every import in it happens late
enough (inside a function, after the names it needs exist); one import moved to the top of
a module then breaks start-up in a way no test of either module shows. So the graph of
imports between ``clue_core`` modules is read from the source with :mod:`ast` and must have
no strongly connected component of more than one module (nor a module importing itself).

What counts as an edge: every ``import clue_core.…`` and ``from clue_core… import …`` at any
depth (inside functions too), every relative import, and those under ``if TYPE_CHECKING:``
too: they never run, but a circle through them is still two modules that each need the
other's names, and the day one of those annotations has to be evaluated (``get_type_hints``,
a dataclass field read at run time, a ``cast``) it is a run-time circle again (issue 19,
step 6). ``clue_core.x.y`` is the module ``clue_core.x.y`` when there is one, else
``clue_core.x`` (``from clue_core.settings import Layer``); a package's ``__init__``
importing its submodules counts like any other module.

The same holds, each package on its own, for ``clue_builtin`` and every plugin package under
``plugins/`` (``clue_report``, ``clue_sweep``, …).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

KERNEL = Path(__file__).resolve().parents[2] / "clue_core"

Edge = tuple[str, str, int]  # (importer, imported, line)


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Every module under ``root`` by dotted name (a package by its own name, for its ``__init__``)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement at any depth, ``if TYPE_CHECKING:`` blocks included: a circle of
    type-only imports is a circle of modules needing each other's names all the same."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def import_edges(root: Path, package: str) -> list[Edge]:
    """``(importer, imported, line)`` for every import of one module of ``package`` by another."""
    modules = module_names(root, package)

    def target(dotted: str) -> str | None:
        if dotted in modules:
            return dotted
        parent = dotted.rpartition(".")[0]
        return parent if parent in modules else None

    edges = []
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                dotted = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = here.split(".")
                    anchor = anchor[:len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                dotted = [f"{base}.{alias.name}" for alias in node.names]
            for candidate in dotted:
                if candidate == package or candidate.startswith(package + "."):
                    found = target(candidate)
                    if found is not None:
                        edges.append((name, found, node.lineno))
    return edges


def circles(edges: list[Edge], skip: tuple[str, ...] = ()) -> list[list[str]]:
    """The strongly connected components with a circle in them (Tarjan), modules under ``skip`` left out."""

    def skipped(module: str) -> bool:
        return any(module == s or module.startswith(s + ".") for s in skip)

    graph: dict[str, set[str]] = {}
    for importer, imported, _ in edges:
        if not (skipped(importer) or skipped(imported)):
            graph.setdefault(importer, set()).add(imported)
            graph.setdefault(imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def describe(component: list[str], edges: list[Edge]) -> str:
    """The shortest circle through the component's first module, as ``module:line`` (the line that
    imports the next module) steps: ``clue_core.a:12 → clue_core.b:40 → clue_core.a``."""
    inside = set(component)
    steps: dict[str, dict[str, int]] = {}
    for importer, imported, line in sorted(edges):
        if importer in inside and imported in inside:
            steps.setdefault(importer, {}).setdefault(imported, line)
    start = component[0]
    paths: dict[str, list[str]] = {start: []}
    todo = [start]
    while todo:  # breadth first: the first way back to the start is a shortest one
        node = todo.pop(0)
        for nxt, line in sorted(steps.get(node, {}).items()):
            path = [*paths[node], f"{node}:{line}"]
            if nxt == start:
                return " → ".join([*path, start])
            if nxt not in paths:
                paths[nxt] = path
                todo.append(nxt)
    return ", ".join(component)


def test_the_kernel_has_no_import_circle():
    edges = import_edges(KERNEL, "clue_core")
    assert len(edges) > 50  # the graph was read at all
    found = circles(edges)
    assert not found, "import circles in clue_core:\n" + "\n".join(describe(c, edges) for c in found)


PLUGIN_PACKAGES = sorted(p for p in (KERNEL.parent / "plugins").glob("*/clue_*")
                         if p.is_dir() and (p / "__init__.py").is_file())
BUILTIN = KERNEL.parent / "clue_builtin"


def test_the_packages_checked_are_all_there():
    """A renamed or moved package would silently drop out of the parametrized test below."""
    names = {p.name for p in PLUGIN_PACKAGES}
    assert {"clue_report", "clue_sweep", "clue_models_llm", "clue_models_hf"} <= names, names
    assert (BUILTIN / "__init__.py").is_file()


@pytest.mark.parametrize("root", [BUILTIN, *PLUGIN_PACKAGES], ids=lambda p: p.name)
def test_no_first_party_plugin_has_an_import_circle(root: Path):
    edges = import_edges(root, root.name)
    found = circles(edges)
    assert not found, f"import circles in {root.name}:\n" + "\n".join(describe(c, edges) for c in found)


def test_checks_kernel_and_settings_import_no_circle_through_each_other():
    """The circle that moving ``did_you_mean`` into clue_core/errors.py removed stays removed."""
    edges = import_edges(KERNEL, "clue_core")
    reached: dict[str, set[str]] = {}
    for importer, imported, _ in edges:
        reached.setdefault(importer, set()).add(imported)

    def reaches(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in reached.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    for module in ("clue_core.checks", "clue_core.settings", "clue_core.errors"):
        assert "clue_core.kernel" not in reaches(module), module
    assert ("clue_core.kernel", "clue_core.checks") in {(a, b) for a, b, _ in edges}  # the graph sees late imports


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_function_level_relative_and_package_imports_are_edges(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "from . import a\n",
        "a.py": "def f():\n    from pkg.sub.b import thing\n",
        "sub/__init__.py": "",
        "sub/b.py": "import pkg.c\n",
        "c.py": "from .sub import b\n",
    })
    edges = import_edges(root, "pkg")
    assert {(a, b) for a, b, _ in edges} == {("pkg", "pkg.a"), ("pkg.a", "pkg.sub.b"), ("pkg.sub.b", "pkg.c"),
                                             ("pkg.c", "pkg.sub.b")}
    assert circles(edges) == [["pkg.c", "pkg.sub.b"]]
    assert describe(["pkg.c", "pkg.sub.b"], edges) == "pkg.c:1 → pkg.sub.b:1 → pkg.c"


def test_type_checking_imports_are_edges_and_skipped_folders_are_left_out(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\nelse:\n    B = None\n",
        "b.py": "import typing\nif typing.TYPE_CHECKING:\n    import pkg.a\nfrom pkg.old import x\n",
        "old/__init__.py": "from pkg.b import y\n",
    })
    edges = import_edges(root, "pkg")
    assert {(a, b) for a, b, _ in edges} == {("pkg.a", "pkg.b"), ("pkg.b", "pkg.a"), ("pkg.b", "pkg.old"),
                                             ("pkg.old", "pkg.b")}
    assert circles(edges) == [["pkg.a", "pkg.b", "pkg.old"]]
    assert circles(edges, skip=("pkg.old",)) == [["pkg.a", "pkg.b"]]


def test_a_module_importing_itself_is_a_circle(tmp_path):
    root = _package(tmp_path, {"__init__.py": "", "a.py": "def f():\n    from pkg import a\n"})
    assert circles(import_edges(root, "pkg")) == [["pkg.a"]]
